"""Spreadsheet cells as the text a person would have typed, so XLSX rows check like CSV rows.

Excel stores numbers as binary floats: ``120.5`` comes back as ``120.5`` and a formula such as
``=A2*1.2`` may come back as ``36.00000000000001``. A float within a billionth of a whole penny is
written as that penny amount (what Excel shows); anything else keeps its full digits so the
"at most 2 decimal places" check still catches a real ``1.234``. Percent-formatted cells hold
fractions (``0.2`` shown as ``20%``) and become ``20%``. Dates become ``YYYY-MM-DD``.
"""

from __future__ import annotations

from datetime import date, datetime, time
from decimal import Decimal

_PENNY_TOLERANCE = 1e-9


def _float_text(value: float) -> str:
    exact = Decimal(repr(value))
    pennies = round(value, 2)
    if exact != exact.quantize(Decimal("0.01")) and abs(value - pennies) < _PENNY_TOLERANCE:
        exact = Decimal(repr(pennies))
    text = format(exact, "f")
    return text[:-2] if text.endswith(".0") else text


def cell_text(value: object, number_format: str | None = None) -> str:
    """One cell's value as text (``""`` for an empty cell)."""
    if value is None:
        return ""
    if isinstance(value, bool):
        return "TRUE" if value else "FALSE"
    if isinstance(value, datetime):
        if value.time() == time(0, 0):
            return value.date().isoformat()
        return value.isoformat(sep=" ")
    if isinstance(value, date | time):
        return value.isoformat()
    if isinstance(value, int | float) and number_format and "%" in number_format:
        return f"{_float_text(float(value) * 100)}%"
    if isinstance(value, int):
        return str(value)
    if isinstance(value, float):
        return _float_text(value)
    return str(value)
