"""Body and query validation in the contract's error terms.

A body is checked with a pydantic model and every problem becomes one ``errors[]`` element of a
422 ``VALIDATION_ERROR`` whose ``field`` is a dotted path with indexes (``people[0].email``, as
the contract's convention 9 writes it). Multi-valued query filters accept repeated parameters and
comma-separated values; an unknown value is a 400 ``BAD_REQUEST`` naming the parameter.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Annotated, Any, TypeVar
from urllib.parse import urlsplit

from pydantic import BaseModel, BeforeValidator, ValidationError

from sandbox.core.errors import BAD_REQUEST, VALIDATION_ERROR, ApiError, field_path

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


def parse_body(model: type[M], data: Any) -> M:
    """``data`` as ``model``, or a 422 listing every broken rule."""
    try:
        return model.model_validate(data)
    except ValidationError as exc:
        problems = []
        for err in exc.errors():
            message = str(err.get("msg", "invalid"))
            where = field_path(tuple(err.get("loc", ()))) or None
            problems.append((where, message.removeprefix("Value error, ")))
        raise ValidationFailed(problems) from exc


def check_email(value: str | None) -> str | None:
    if value is not None and not EMAIL_PATTERN.match(value):
        raise ValueError("not a valid email address")
    return value


# RFC 3986: only these characters, and ``%`` only as the start of a ``%XX`` escape (what the
# contract's ``format: uri`` means to the validators third parties use).
_URI = re.compile(
    r"^[A-Za-z][A-Za-z0-9+.-]*:([A-Za-z0-9\-._~:/?#\[\]@!$&'()*+,;=]|%[0-9A-Fa-f]{2})*$"
)


def is_uri(value: str) -> bool:
    """Whether ``value`` is an absolute URI by RFC 3986's characters."""
    return bool(_URI.match(value))


def check_https_url(value: str | None) -> str | None:
    """An absolute https URL (where a customer's browser is sent back to)."""
    if value is None:
        return None
    parts = urlsplit(value)
    if parts.scheme != "https" or not parts.hostname or not is_uri(value):
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
    # Each value exactly as the contract lists it (a comma-separated value is read as several);
    # a blank one is not a value.
    parts = [part for value in values or () for part in value.split(",")]
    for value in parts:
        if value not in known:
            raise ApiError(
                400,
                BAD_REQUEST,
                f"unknown value {value!r}; use one of {', '.join(sorted(known))}",
                field=name,
            )
    return multi(parts)


def utc(moment: datetime | None) -> datetime | None:
    """A query timestamp as aware UTC (a zone-less value is read as UTC, as the contract says)."""
    if moment is None:
        return None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


# Query dates and times as the contract's ``format: date`` / ``format: date-time`` write them: a
# JSON number (``0.5``) or a zone-less time is not one, although pydantic would read it as one.
_QUERY_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")
_QUERY_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$")


def _iso_date(value: Any) -> Any:
    if not isinstance(value, str) or not _QUERY_DATE.match(value):
        raise ValueError("must be a date YYYY-MM-DD")
    return value


def _iso_time(value: Any) -> Any:
    if not isinstance(value, str) or not _QUERY_TIME.match(value):
        raise ValueError(
            "must be a date-time with a time zone (RFC 3339, e.g. 2025-06-01T09:30:00Z)"
        )
    return value.upper()


QueryDate = Annotated[date, BeforeValidator(_iso_date)]
QueryTime = Annotated[datetime, BeforeValidator(_iso_time)]


def _query_bool(value: Any) -> Any:
    """``true`` or ``false``, as the contract's boolean query parameters take them."""
    if value not in ("true", "false"):
        raise ValueError("must be true or false")
    return value == "true"


QueryBool = Annotated[bool, BeforeValidator(_query_bool)]


def _json_integer(value: Any) -> Any:
    """A JSON integer as JSON Schema reads one: ``3`` or ``3.0``, never ``true`` or ``"3"``."""
    if isinstance(value, bool) or not isinstance(value, int | Decimal):
        raise ValueError("must be an integer")
    if isinstance(value, Decimal):
        if not value.is_finite() or value != value.to_integral_value():
            raise ValueError("must be an integer")
        return int(value)
    return value


JsonInt = Annotated[int, BeforeValidator(_json_integer)]
