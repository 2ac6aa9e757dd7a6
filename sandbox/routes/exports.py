"""``/_sandbox/exports``: the CSV files a finance team downloads (not part of the contract).

``GET /_sandbox/exports/payouts.csv?billerId=&from=&to=`` and
``GET /_sandbox/exports/bank_statement.csv?billerId=&from=&to=&layout=`` (see
:mod:`sandbox.exports.files`). ``from``/``to`` are inclusive dates (``YYYY-MM-DD``); ``to``
defaults to the sandbox clock's date and is never later than it, ``from`` to 30 days before ``to``.
A missing or malformed parameter is 400 ``BAD_REQUEST`` naming it; an unknown biller 404; an
unknown layout 400 listing the layouts. Loopback clients only, like the rest of ``/_sandbox``.
"""

from __future__ import annotations

import re
from datetime import date, timedelta
from typing import Annotated

from fastapi import APIRouter, Query, Response

from sandbox.core import state
from sandbox.core.deps import AdminGuard, SessionDep
from sandbox.core.errors import BAD_REQUEST, ApiError
from sandbox.exports import files as exports
from sandbox.exports.layouts import LAYOUTS
from sandbox.models import Biller
from sandbox.oauth.billers import get_biller

router = APIRouter(prefix="/_sandbox/exports", dependencies=[AdminGuard], include_in_schema=False)

DEFAULT_DAYS = 30
MAX_DAYS = 3660
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
Text = Annotated[str | None, Query()]


def _bad(field: str, detail: str) -> ApiError:
    return ApiError(400, BAD_REQUEST, detail, field=field)


def _date(value: str | None, field: str) -> date | None:
    if value is None or value == "":
        return None
    try:
        if not _DATE.match(value):
            raise ValueError(value)
        return date.fromisoformat(value)
    except ValueError:
        raise _bad(field, f"{field} must be a date YYYY-MM-DD, got {value!r}") from None


def _biller(session: SessionDep, biller_id: str | None) -> Biller:
    if not biller_id:
        raise _bad("billerId", "billerId is required")
    return get_biller(session, biller_id)


def _period(session: SessionDep, start: str | None, end: str | None) -> tuple[date, date]:
    today = state.now(session).date()
    last = min(_date(end, "to") or today, today)
    first = _date(start, "from") or last - timedelta(days=DEFAULT_DAYS)
    if first > last:
        raise _bad("from", f"from ({first}) is after to ({last})")
    if (last - first).days > MAX_DAYS:
        raise _bad("from", f"the period can span at most {MAX_DAYS} days")
    return first, last


def _csv(body: str, name: str) -> Response:
    return Response(
        content=body.encode(),
        media_type="text/csv; charset=utf-8",
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


@router.get("/payouts.csv")
def payouts_csv(
    session: SessionDep,
    biller_id: Annotated[str | None, Query(alias="billerId")] = None,
    start: Annotated[str | None, Query(alias="from")] = None,
    end: Annotated[str | None, Query(alias="to")] = None,
) -> Response:
    """One row per payout item of the payouts arriving in the period."""
    biller = _biller(session, biller_id)
    first, last = _period(session, start, end)
    body = exports.payouts_csv(session, biller.id, first, last)
    return _csv(body, f"payouts-{first}-{last}.csv")


@router.get("/bank_statement.csv")
def bank_statement_csv(
    session: SessionDep,
    biller_id: Annotated[str | None, Query(alias="billerId")] = None,
    start: Annotated[str | None, Query(alias="from")] = None,
    end: Annotated[str | None, Query(alias="to")] = None,
    layout: str = "generic",
) -> Response:
    """The biller's business bank account over the period, in a bank's export layout."""
    if layout not in LAYOUTS:
        names = ", ".join(LAYOUTS)
        raise _bad("layout", f"unknown layout {layout!r}; layouts: {names}")
    biller = _biller(session, biller_id)
    first, last = _period(session, start, end)
    body = exports.bank_statement_csv(session, biller, first, last, LAYOUTS[layout])
    return _csv(body, f"statement-{layout}-{first}-{last}.csv")
