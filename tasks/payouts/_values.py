"""Cells of a payout report as values, by whole columns: signed money in whole pennies, dates.

A year of a platform's payouts is hundreds of thousands of items, so cells are parsed by Arrow
kernels: money written the way exports write it (``-12.50``) is recognised by one pattern and
read by dropping the point; other spellings (``£1,234.50``, ``(12.50)``, ``12.5``) and dates are
parsed once per distinct value in Python and spread back by index. Money stays in whole pennies
(``int64``, exact) until it is reported (``docs/conventions.md`` §1 Money).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from datetime import date

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.finance_files import parse_date
from tasks.common.finance_files.values import TWO_SIGNS, money_sign, money_text

MAX_PENNIES = 10_000_000_000_00  # £10bn: no payout or item comes near it
_PLAIN = r"^-?[0-9]{1,13}\.[0-9]{2}$"
_AMOUNT = re.compile(r"^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$|^\.(\d{1,2})$")
NO_DATE = -(2**31)


def distinct(values: pa.Array, parse: Callable[[str], object]) -> tuple[list[object], np.ndarray]:
    """``parse`` of each distinct value (exceptions kept as values) and each row's index into
    them."""
    codes = values.dictionary_encode()
    results: list[object] = []
    for text in codes.dictionary.to_pylist():
        try:
            results.append(parse(str(text)))
        except ValueError as exc:
            results.append(exc)
    indices = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return results, indices


def signed_pennies(text: str) -> int:
    """``-12.50``, ``£1,234.50``, ``(12.50)``, ``12.50-``, ``GBP 3`` as whole pennies."""
    cleaned = money_text(text)
    if not cleaned:
        raise ValueError("amount is empty")
    if cleaned.startswith(("$", "€", "USD", "EUR")) or cleaned.endswith(("USD", "EUR")):
        raise ValueError(f"{text!r} is not in pounds (GBP)")
    try:
        negative, body = money_sign(cleaned)
    except ValueError:
        raise ValueError(f"{text!r} {TWO_SIGNS}") from None
    found = _AMOUNT.match(body)
    if not found:
        raise ValueError(f"{text!r} is not an amount of pounds with at most 2 decimal places")
    whole, _, fraction = body.replace(",", "").partition(".")
    pennies = int(whole or "0") * 100 + int((fraction or "0").ljust(2, "0"))
    if pennies > MAX_PENNIES:
        raise ValueError(f"{text!r} is too large for a payout")
    return -pennies if negative else pennies


def pennies_column(values: pa.Array) -> tuple[np.ndarray, np.ndarray, list[str]]:
    """Each cell as signed pennies, which cells are not money, and why (per bad cell, in row
    order). A column of few distinct values (a payout's amount repeats on each of its lines) is
    parsed once per value and spread back by index."""
    codes = values.dictionary_encode()
    if len(codes.dictionary) * 4 < len(values):
        amounts, bad, reasons = _pennies_of(codes.dictionary)
        at = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        rows_bad = bad[at]
        why = [reasons[int(i)] for i in np.cumsum(bad)[at[rows_bad]] - 1]
        return amounts[at], rows_bad, why
    return _pennies_of(values)


def _pennies_of(values: pa.Array) -> tuple[np.ndarray, np.ndarray, list[str]]:
    amounts = np.zeros(len(values), dtype=np.int64)
    plain = np.asarray(
        pc.fill_null(pc.match_substring_regex(values, _PLAIN), False).to_numpy(
            zero_copy_only=False
        ),
        dtype=bool,
    )
    if plain.any():
        chosen = pc.filter(values, pa.array(plain))
        amounts[plain] = pc.cast(pc.replace_substring(chosen, ".", ""), pa.int64()).to_numpy()
        # 13 digits pass the pattern, more than MAX_PENNIES: those go the careful way below,
        # which refuses them as it refuses the same amount spelled £1,234.50.
        too_large = plain & (np.abs(amounts) > MAX_PENNIES)
        plain &= ~too_large
        amounts[too_large] = 0
    bad = np.zeros(len(values), dtype=bool)
    reasons: list[str] = []
    rest = np.flatnonzero(~plain)
    if len(rest):
        parsed, indices = distinct(pc.take(values, pa.array(rest)), signed_pennies)
        for position, row in enumerate(rest.tolist()):
            value = parsed[indices[position]]
            if isinstance(value, ValueError):
                bad[row] = True
                reasons.append(str(value))
            else:
                amounts[row] = int(value)  # type: ignore[call-overload,unused-ignore]
    return amounts, bad, reasons


def dates_column(values: pa.Array) -> tuple[pa.Array, np.ndarray, list[str]]:
    """Each cell as a date (``dd/mm/yyyy``, ISO or ``1 Dec 2026``), which cells are not dates,
    and why (per bad cell, in row order)."""
    parsed, indices = distinct(values, parse_date)
    ok = np.array([isinstance(v, date) for v in parsed], dtype=bool)
    days = np.array(
        [(v - date(1970, 1, 1)).days if isinstance(v, date) else NO_DATE for v in parsed],
        dtype=np.int32,
    )
    rows_ok = ok[indices] if len(parsed) else np.zeros(0, dtype=bool)
    reasons = [str(parsed[i]) for i in indices[~rows_ok]] if len(parsed) else []
    column = pa.array(days[indices] if len(parsed) else np.zeros(0, np.int32)).cast(pa.date32())
    return column, ~rows_ok, reasons
