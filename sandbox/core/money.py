"""Money as the service keeps it: ``Decimal`` pounds, rounded half-up to the penny, never float."""

from __future__ import annotations

from decimal import ROUND_HALF_UP, Decimal, InvalidOperation

PENNY = Decimal("0.01")


def parse_amount(value: object, *, field: str, allow_zero: bool = False) -> Decimal:
    """A positive amount with at most 2 decimal places, or ValueError naming ``field``."""
    try:
        amount = Decimal(str(value))
    except (InvalidOperation, ValueError) as exc:
        raise ValueError(f"{field} must be a decimal amount in pounds, got {value!r}") from exc
    if not amount.is_finite():
        raise ValueError(f"{field} must be a finite amount, got {value!r}")
    if amount != amount.quantize(PENNY):
        raise ValueError(f"{field} has more than 2 decimal places: {value!r}")
    if amount < 0 or (amount == 0 and not allow_zero):
        raise ValueError(f"{field} must be {'zero or more' if allow_zero else 'positive'}")
    return amount.quantize(PENNY)


def round_penny(amount: Decimal) -> Decimal:
    return amount.quantize(PENNY, rounding=ROUND_HALF_UP)


def as_string(amount: Decimal) -> str:
    """Invoice aggregates are JSON strings with two decimals (``"2.20"``)."""
    return str(round_penny(amount))


def as_number(amount: Decimal) -> int | float:
    """Payment-request and payment amounts are JSON numbers (``100``, ``100.5``)."""
    value = round_penny(amount)
    return int(value) if value == value.to_integral_value() else float(value)
