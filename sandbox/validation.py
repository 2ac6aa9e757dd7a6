"""Body and query validation in the contract's error terms.

A body is checked with a pydantic model and every problem becomes one ``errors[]`` element of a
422 ``VALIDATION_ERROR`` whose ``field`` is a dotted path with indexes (``people[0].email``, as
the contract's convention 9 writes it). Multi-valued query filters accept repeated parameters and
comma-separated values; an unknown value is a 400 ``BAD_REQUEST`` naming the parameter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import replace
from datetime import UTC, datetime
from typing import Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, ValidationError
from sqlalchemy import ColumnElement
from sqlalchemy.orm import QueryableAttribute

from sandbox.errors import BAD_REQUEST, VALIDATION_ERROR, ApiError
from sandbox.pagination import PageRequest

M = TypeVar("M", bound=BaseModel)

# The same rule the biller's billingEmail uses: something@domain.tld, no spaces.
EMAIL_PATTERN = re.compile(r"^[^@\s]+@[^@\s]+\.[^@\s]+$")


class ValidationFailed(ApiError):
    """A 422 with one ``errors[]`` element per problem (``(field, detail)`` pairs)."""

    def __init__(self, problems: Sequence[tuple[str | None, str]]) -> None:
        field, detail = problems[0]
        super().__init__(422, VALIDATION_ERROR, detail, field=field)
        self.problems = list(problems)

    def body(self) -> dict[str, Any]:
        errors = []
        for field, detail in self.problems:
            error = {"type": VALIDATION_ERROR, "detail": detail}
            if field:
                error["field"] = field
            errors.append(error)
        return {"errors": errors}


def invalid(field: str | None, detail: str) -> ValidationFailed:
    return ValidationFailed([(field, detail)])


def field_path(loc: Iterable[int | str]) -> str | None:
    """``("people", 0, "email")`` → ``people[0].email``."""
    out = ""
    for part in loc:
        if isinstance(part, int):
            out += f"[{part}]"
        else:
            out += f".{part}" if out else str(part)
    return out or None


def parse_body(model: type[M], data: Any) -> M:
    """``data`` as ``model``, or a 422 listing every broken rule."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            message = str(err.get("msg", "invalid"))
            problems.append((field_path(err.get("loc", ())), message.removeprefix("Value error, ")))
        raise ValidationFailed(problems) from exc


def check_email(value: str | None) -> str | None:
    if value is not None and not EMAIL_PATTERN.match(value):
        raise ValueError("not a valid email address")
    return value


def check_https_url(value: str | None) -> str | None:
    """An absolute https URL (where a customer's browser is sent back to)."""
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.netloc or any(c.isspace() for c in value):
        raise ValueError("must be an absolute https URL")
    return value


def multi(values: Sequence[str] | None) -> list[str]:
    """Repeated and comma-separated query values, flattened, blanks dropped, order kept."""
    out: list[str] = []
    for value in values or ():
        for part in value.split(","):
            part = part.strip()
            if part and part not in out:
                out.append(part)
    return out


def enum_filter(values: Sequence[str] | None, allowed: Iterable[str], name: str) -> list[str]:
    """A multi-valued enum filter; an unknown value is 400 ``BAD_REQUEST`` naming the parameter."""
    known = set(allowed)
    chosen = multi(values)
    for value in chosen:
        if value not in known:
            raise ApiError(
                400,
                BAD_REQUEST,
                f"unknown value {value!r}; use one of {', '.join(sorted(known))}",
                field=name,
            )
    return chosen


def utc(moment: datetime | None) -> datetime | None:
    """A query timestamp as aware UTC (a zone-less value is read as UTC, as the contract says)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def default_sort(page: PageRequest, *orders: str) -> PageRequest:
    """``page`` with ``orders`` when the client asked for no sort (the list's default order:
    the contract's is ``creationTime`` ascending, then id, which ``paginate``'s tiebreak adds)."""
    return page if page.sort else replace(page, sort=orders)


def sortable(**columns: QueryableAttribute[Any]) -> dict[str, ColumnElement[Any]]:
    """The ``sortable`` mapping of :func:`sandbox.pagination.paginate`: contract property names to
    ORM attributes (their column expressions)."""
    return {name: column.expression for name, column in columns.items()}


def column(attribute: QueryableAttribute[Any]) -> ColumnElement[Any]:
    """An ORM attribute as the column expression ``paginate``'s ``tiebreak`` takes."""
    return attribute.expression
