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

from tasks.common.arrow_text import string_parts
from tasks.common.finance_files import parse_date
from tasks.common.finance_files.values import TWO_SIGNS, money_sign, money_text
from tasks.payouts._runs import run_starts

MAX_PENNIES = 10_000_000_000_00  # £10bn: no payout or item comes near it
_PLAIN = r"^-?[0-9]{1,13}\.[0-9]{2}$"
_AMOUNT = re.compile(r"^(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.(\d{1,2}))?$|^\.(\d{1,2})$")
NO_DATE = -(2**31)
RUN_SAMPLE = 1024  # the values :func:`pennies_column` looks at before looking for runs


def distinct(values: pa.Array, parse: Callable[[str], object]) -> tuple[list[object], np.ndarray]:
    """``parse`` of each distinct value (exceptions kept as values) and each row's index into
    them. A column whose values come in runs (a payout's date on each of its lines, a report's
    line types) is parsed once per run, found by comparing neighbours (:func:`runs`), without
    hashing every text; a value in several runs is parsed once per run, to the same result."""
    found = runs(values)
    if found is not None:
        heads, indices = found
        texts = heads.to_pylist()
    else:
        codes = values.dictionary_encode()
        texts = codes.dictionary.to_pylist()
        indices = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    results: list[object] = []
    for text in texts:
        try:
            results.append(parse(str(text)))
        except ValueError as exc:
            results.append(exc)
    return results, indices


def runs(values: pa.Array) -> tuple[pa.Array, np.ndarray] | None:
    """Each run of equal values' first value and each row's run, when the runs are few (at
    most a quarter of the rows); None otherwise. Nulls count as values that differ."""
    if len(values) < 2:
        return None
    starts = run_starts(values)
    if len(starts) * 4 > len(values):
        return None
    sizes = np.diff(np.r_[starts, len(values)])
    return values.take(pa.array(starts)), np.repeat(np.arange(len(starts), dtype=np.int64), sizes)


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
    order). A column of few runs (a payout's amount repeats on each of its lines) is parsed once
    per run and spread back by index; any other column whole (:func:`plain_pennies` reads a
    year of item amounts in less time than hashing them to find their distinct values took)."""
    found = runs(values) if _may_run(values) else None
    if found is None:
        return _pennies_of(values)
    heads, at = found
    amounts, bad, reasons = _pennies_of(heads)
    rows_bad = bad[at]
    why = [reasons[int(i)] for i in np.cumsum(bad)[at[rows_bad]] - 1]
    return amounts[at], rows_bad, why


def _may_run(values: pa.Array) -> bool:
    """False when the first :data:`RUN_SAMPLE` values alone are too many runs for :func:`runs`
    (more than a quarter of them): an item's amount differs from the line before's nearly
    always, and comparing a year of them with their neighbours only to learn that cost ~2 ms.
    Either way the pennies are the same: this only picks the quicker way to them."""
    sample = values.slice(0, RUN_SAMPLE)
    return len(sample) < RUN_SAMPLE or len(run_starts(sample)) * 4 <= len(sample)


def _pennies_of(values: pa.Array) -> tuple[np.ndarray, np.ndarray, list[str]]:
    plain, amounts = plain_pennies(values)
    if plain.any():
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


def plain_pennies(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """Which values are written as exports write money (:data:`_PLAIN`: ``-12.50``, at most 13
    digits before the point) and their pennies (0 for the others). A text column is read from
    its bytes, each position from the end of the values once, by numpy: a pattern match, a copy
    without the point and a cast cost a year of items three passes over their text. Any other
    column is matched by the pattern."""
    if values.type != pa.string() or values.null_count:
        return _plain_by_pattern(values)
    ends, body = string_parts(values)
    starts, stops = ends[:-1].astype(np.int64), ends[1:].astype(np.int64)
    if not len(body):
        return np.zeros(len(values), dtype=bool), np.zeros(len(values), dtype=np.int64)

    def digit(at: np.ndarray) -> np.ndarray:
        """The byte at each position less ``0`` (uint8: anything but a digit wraps to 10 or
        more), so each check and sum stays in bytes until it is scaled to pennies (bench_payouts'
        201,600 item amounts: ~9 ms, where widening every byte to int64 first took ~12 ms)."""
        found: np.ndarray = body.take(at, mode="clip") - np.uint8(ord("0"))
        return found

    negative = (stops > starts) & (body.take(starts, mode="clip") == ord("-"))
    whole = stops - starts - 3 - negative  # digits before the point
    plain = (whole >= 1) & (whole <= 13) & (body.take(stops - 3, mode="clip") == ord("."))
    pennies = np.zeros(len(values), dtype=np.int64)
    for place, scale in ((1, 1), (2, 10)):
        found = digit(stops - place)
        plain &= found < 10
        pennies += found * np.int64(scale)
    for place in range(int(whole[plain].max()) if plain.any() else 0):
        found, inside = digit(stops - 4 - place), place < whole
        plain &= (found < 10) | ~inside
        pennies += (found * inside) * np.int64(100 * 10**place)
    return plain, np.where(plain, np.where(negative, -pennies, pennies), 0)


def _plain_by_pattern(values: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """:func:`plain_pennies` by the pattern, a copy without the point and a cast."""
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
    return plain, amounts


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
