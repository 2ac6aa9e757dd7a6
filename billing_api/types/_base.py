"""Building blocks of the models: the base model, money, lenient timestamps, extensible enums.

- :class:`ApiModel`: snake_case attributes, the contract's camelCase names as aliases, unknown
  fields kept (``extra="allow"``, contract convention 11).
- :data:`Money`: a ``Decimal`` read from a JSON string (invoice aggregates) or a JSON number
  (payment requests, payments, items); never a float inside (contract convention 7).
- :data:`Timestamp`: an aware UTC ``datetime`` read leniently from every format the real service
  has been seen sending (docs/service.md §4 Timestamps and dates): ``...Z``, ``+00:00``, a
  literal ``UTC`` suffix, no zone at all (taken as UTC) and UNIX epoch milliseconds.
- :class:`ExtensibleEnum`: a ``str`` enum that accepts values it does not know (status enums are
  non-exclusive, contract convention 10): an unknown value becomes a pseudo-member named
  ``UNKNOWN`` whose value is the raw string, so it compares equal to it and serialises back
  unchanged.
"""

from __future__ import annotations

import re
from datetime import UTC, datetime
from decimal import Decimal, InvalidOperation
from enum import StrEnum
from typing import Annotated, Any

from pydantic import BaseModel, BeforeValidator, ConfigDict
from pydantic.alias_generators import to_camel

__all__ = [
    "ApiModel",
    "ExtensibleEnum",
    "Money",
    "Timestamp",
    "parse_money",
    "parse_timestamp",
]

# Epoch values at or above this are milliseconds (1e11 s would be the year 5138).
_EPOCH_MS_THRESHOLD = 100_000_000_000
_UTC_SUFFIX = re.compile(r"\s*(UTC|GMT|Z)$", re.IGNORECASE)


class ApiModel(BaseModel):
    """Base of every resource model: camelCase aliases, snake_case attributes, extras kept."""

    model_config = ConfigDict(
        extra="allow",
        populate_by_name=True,
        alias_generator=to_camel,
    )


def parse_money(value: object) -> Decimal:
    """An amount as ``Decimal`` from a string, int, float or Decimal (never via binary float
    arithmetic: a float is read through its shortest repr, which is the JSON text it came from)."""
    if isinstance(value, bool):
        raise ValueError(f"an amount cannot be a boolean: {value!r}")
    if isinstance(value, Decimal):
        amount = value
    elif isinstance(value, int):
        amount = Decimal(value)
    elif isinstance(value, float):
        amount = Decimal(repr(value))
    elif isinstance(value, str):
        try:
            amount = Decimal(value.strip())
        except InvalidOperation:
            raise ValueError(f"not a decimal amount: {value!r}") from None
    else:
        raise ValueError(f"an amount must be a string or a number, got {type(value).__name__}")
    if not amount.is_finite():
        raise ValueError(f"an amount must be finite, got {value!r}")
    return amount


def _from_epoch(value: float) -> datetime:
    seconds = value / 1000 if abs(value) >= _EPOCH_MS_THRESHOLD else value
    try:
        return datetime.fromtimestamp(seconds, tz=UTC)
    except (OverflowError, OSError) as error:  # beyond what a datetime (or time_t) holds
        raise ValueError(f"timestamp {value!r} is out of range: {error}") from None


def parse_timestamp(value: object) -> datetime:
    """An aware UTC datetime from the service's timestamp formats (see the module docstring)."""
    if isinstance(value, datetime):
        stamp = value
    elif isinstance(value, bool):
        raise ValueError(f"a timestamp cannot be a boolean: {value!r}")
    elif isinstance(value, int | float):
        return _from_epoch(float(value))
    elif isinstance(value, str):
        text = value.strip()
        if re.fullmatch(r"-?\d+", text):
            return _from_epoch(float(text))
        had_suffix = _UTC_SUFFIX.search(text) is not None
        text = _UTC_SUFFIX.sub("", text)
        try:
            stamp = datetime.fromisoformat(text.replace(" ", "T", 1))
        except ValueError:
            raise ValueError(
                f"not a timestamp: {value!r} (expected ISO 8601, e.g. 2025-06-01T09:30:00Z, "
                "or epoch milliseconds)"
            ) from None
        if had_suffix and stamp.tzinfo is not None:
            raise ValueError(f"not a timestamp: {value!r} (both an offset and a UTC suffix)")
    else:
        raise ValueError(f"a timestamp must be a string or a number, got {type(value).__name__}")
    # A missing zone means UTC (contract convention 8: the service's zone-less values are
    # UTC).
    if stamp.tzinfo is None:
        return stamp.replace(tzinfo=UTC)
    try:
        return stamp.astimezone(UTC)
    except OverflowError:  # 0001-01-01T00:30+01:00 is before year 1 in UTC
        raise ValueError(f"timestamp {value!r} is out of range in UTC") from None


Money = Annotated[Decimal, BeforeValidator(parse_money)]
"""Decimal pounds read from a JSON string or number."""

Timestamp = Annotated[datetime, BeforeValidator(parse_timestamp)]
"""An aware UTC datetime read leniently."""


class ExtensibleEnum(StrEnum):
    """A string enum that keeps unknown values (as a pseudo-member named ``UNKNOWN``).

    Subclasses map renamed values to their new member by overriding :meth:`_renamed`.
    """

    @classmethod
    def _renamed(cls) -> dict[str, str]:
        """Old value -> current value, for values the service renamed."""
        return {}

    @classmethod
    def _missing_(cls, value: object) -> Any:
        if not isinstance(value, str):
            return None
        current = cls._renamed().get(value)
        if current is not None:
            return cls(current)
        member = str.__new__(cls, value)
        member._name_ = "UNKNOWN"
        member._value_ = value
        return member

    @property
    def is_known(self) -> bool:
        """False for a value this version of the client does not know."""
        return self._name_ in type(self).__members__

    def __str__(self) -> str:
        return str(self._value_)
