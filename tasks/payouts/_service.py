"""The service's records of what the payout items name: invoices and payment requests, fetched
in pages through the client (read only).

The service has no payouts API and no way to list payments (``docs/service.md`` §6 Payouts,
§7.4 Payments), so an item is checked against its document: the payment request when the item
names one (the payment belongs to it), else the invoice. Documents are found by number among
those changed since shortly before the earliest payout in scope (a document is updated when it
is paid and again when it is paid out), then, for any still missing, by number (invoices) or in
a full listing (payment requests, which have no number filter).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from billing_api import BillingClient
from tasks.common.arrow_text import mask
from tasks.payouts._text import chosen as chosen_texts
from tasks.payouts._text import texts

PAGE_SIZE = 200
MAX_SINGLE_LOOKUPS = 50  # more missing invoices than this: one full listing instead
INVOICE, PAYMENT_REQUEST = "invoice", "payment_request"
DOCUMENT_COLUMNS = ("kind", "number", "id", "status", "total", "paid", "updated")
LONDON = ZoneInfo("Europe/London")


Row = tuple[str, str, str, str, int, int, date | None]


def _pennies(value: Decimal | int | str | None) -> int:
    return int((Decimal(str(value or 0)) * 100).to_integral_value())


def _day(moment: datetime | None) -> date | None:
    """The London day of a document's last change (when its status last moved)."""
    return moment.astimezone(LONDON).date() if moment is not None else None


def document_numbers(items: pd.DataFrame) -> tuple[np.ndarray, pd.Series]:
    """Each item's document: whether it is a payment request (True) or an invoice (False), and
    its number (the payment request when named, else the invoice; an empty number when it names
    neither), by position (a text Series with a fresh index). The kind is a mask: the checks
    choose a year of items by kind, and comparing an object array of kinds cost a Python
    comparison per item."""
    request = items["payment_request_number"]
    has_request = (request != "").to_numpy(dtype=bool)
    numbers = request.where(has_request, items["invoice_number"]).reset_index(drop=True)
    return has_request, numbers


def document_rows(documents: pd.DataFrame, requests: np.ndarray, numbers: pd.Series) -> np.ndarray:
    """Each item's row in ``documents`` (-1: the service does not hold it), by Arrow's hashed
    look-up per kind, not a merge of the frames (``requests`` and ``numbers``:
    :func:`document_numbers`). Each side's texts are chosen by Arrow, not by a pandas ``iloc``
    of them; and where a side is all of its rows (every item names a payment request, every
    document is one) its look-up is the answer as it is, not scattered into place by position
    (about 3 ms of numpy indexing for a year's items)."""
    at = np.full(len(numbers), -1, dtype=np.int64)
    if not len(documents) or not len(numbers):
        return at
    all_wanted, all_known = texts(numbers), texts(documents["number"])
    kinds = texts(documents["kind"])
    for kind, chosen_mask in ((INVOICE, ~requests), (PAYMENT_REQUEST, requests)):
        mine_mask = mask(pc.equal(kinds, kind))
        mine, chosen = np.flatnonzero(mine_mask), np.flatnonzero(chosen_mask)
        if len(mine) and len(chosen):
            wanted = chosen_texts(all_wanted, chosen_mask, len(chosen))
            known = chosen_texts(all_known, mine_mask, len(mine))
            hits = np.asarray(pc.fill_null(pc.index_in(wanted, value_set=known), -1), np.int64)
            if len(mine) < len(documents):  # the kind's rows among all the documents
                hits = np.where(hits >= 0, mine[np.maximum(hits, 0)], -1)
            if len(chosen) == len(numbers):
                at = hits
            else:
                at[chosen] = hits
    return at


def texts_at(column: pd.Series, at: np.ndarray) -> pa.Array:
    """``column``'s values at ``at`` as Arrow text ("" where ``at`` is -1). pandas' Arrow text
    is taken as it is kept (large strings); other columns are made text first, as ``str``."""
    if isinstance(column.dtype, pd.StringDtype) and column.dtype.storage == "pyarrow":
        values = texts(column)
    else:
        values = pa.array(column.astype(str), pa.string())
    return pc.fill_null(values.take(pa.array(at, mask=at < 0)), "")


def pennies_at(column: pd.Series, at: np.ndarray, found: np.ndarray) -> np.ndarray:
    """``column``'s pennies at ``at`` (0 where ``found``, ``at >= 0``, does not hold)."""
    values = column.to_numpy(dtype=np.int64)
    if not len(values):
        return np.zeros(len(at), dtype=np.int64)
    return np.where(found, values[np.where(found, at, 0)], 0)


def fetch_documents(
    client: BillingClient,
    *,
    invoices: Iterable[str],
    requests: Iterable[str],
    since: datetime | None,
) -> pd.DataFrame:
    """The named invoices and payment requests as the service holds them now (see the module
    docstring): ``kind``, ``number``, ``id``, ``status``, ``total`` and ``paid`` (pennies),
    ``updated`` (the London day it last changed)."""
    want_invoices, want_requests = _wanted(invoices), _wanted(requests)
    rows: dict[tuple[str, str], Row] = {}
    if since is not None:
        _keep(rows, _invoice_rows(client, want_invoices, since=since))
        _keep(rows, _request_rows(client, want_requests, since=since))
    missing_invoices = {n for n in want_invoices if (INVOICE, n) not in rows}
    if 0 < len(missing_invoices) <= MAX_SINGLE_LOOKUPS:
        for number in sorted(missing_invoices):
            _keep(rows, _invoice_rows(client, {number}, since=None, number=number))
    elif missing_invoices:
        _keep(rows, _invoice_rows(client, missing_invoices, since=None))
    missing_requests = {n for n in want_requests if (PAYMENT_REQUEST, n) not in rows}
    if missing_requests:
        _keep(rows, _request_rows(client, missing_requests, since=None))
    return pd.DataFrame(list(rows.values()), columns=list(DOCUMENT_COLUMNS))


def _wanted(numbers: Iterable[str]) -> set[str]:
    """The distinct non-empty numbers as one set: ``set(numbers) - {""}`` built a second set
    of a year's 200,000 numbers to drop one."""
    found = set(numbers)
    found.discard("")
    return found


def _keep(
    rows: dict[tuple[str, str], Row],
    found: Iterable[Row],
) -> None:
    for row in found:
        rows[(row[0], row[1])] = row


def _invoice_rows(
    client: BillingClient, wanted: set[str], *, since: datetime | None, number: str | None = None
) -> Iterable[Row]:
    pages = client.invoices.list(
        last_updated_start_time=since, invoice_no=number, page_size=PAGE_SIZE
    )
    for invoice in pages:
        if invoice.invoice_no in wanted:
            paid = _pennies(invoice.paid_amount)
            yield (
                INVOICE,
                invoice.invoice_no,
                str(invoice.id),
                str(invoice.status),
                _pennies(invoice.total_amount),
                paid,
                _day(invoice.last_updated_time),
            )


def _request_rows(
    client: BillingClient, wanted: set[str], *, since: datetime | None
) -> Iterable[Row]:
    pages = client.payment_requests.list(last_updated_start_time=since, page_size=PAGE_SIZE)
    for pr in pages:
        if pr.payment_request_no in wanted:
            yield (
                PAYMENT_REQUEST,
                pr.payment_request_no,
                str(pr.id),
                str(pr.status),
                _pennies(pr.total_amount),
                _pennies(pr.paid_amount),
                _day(pr.last_updated_time),
            )


def empty_documents() -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series([], dtype=object) for name in DOCUMENT_COLUMNS})
