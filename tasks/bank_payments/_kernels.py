"""Vectorised parsing of statement cells with Arrow kernels: dates and money, never per row.

A statement can have a million lines, so every cell is parsed by ``pyarrow.compute`` over whole
columns; Python only looks at the few lines that fail, to say why. Two things keep it fast:

- a column with few distinct values (dates, types, names, references) is worked on once per
  distinct value (:func:`per_value`, through Arrow's dictionary encoding) and spread back to its
  rows by index;
- money in the form nearly every bank writes (``-1234.56``) is recognised by one pattern and
  read by removing the point; only the other cells (``£1,234.50``, ``(12.50)``, ``12.5``) take the
  slower, careful path.

Money is kept as whole pennies (``int64``: exact, like :class:`~decimal.Decimal` with two
places) until a line is reported or sent, where it becomes a ``Decimal`` (``docs/conventions.md``:
money is exact, in pounds).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._runs import run_starts
from tasks.common.arrow_text import mask, string_parts
from tasks.common.finance_files.values import UNICODE_MINUS

MAX_PENNIES = 10_000_000_000  # £100,000,000: no customer payment comes near it
_SPACES = " \t\u00a0"
_PLAIN_MONEY = r"^-?[0-9]{1,13}\.[0-9]{2}$"


def encoded(values: pa.Array | pa.ChunkedArray) -> pa.DictionaryArray:
    """``values`` as a dictionary array (distinct values once, rows as indices)."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.DictionaryArray):
        return values
    few = _encoded_few(values)
    return few if few is not None else values.dictionary_encode()


SAMPLE = 1 << 16  # the first rows, looked at for the few values a column may hold
FEW = SAMPLE >> 8


def _encoded_few(values: pa.Array) -> pa.DictionaryArray | None:
    """:meth:`~pyarrow.Array.dictionary_encode` of a long text column with few values (a
    statement's transaction types), the same dictionary and indices: the values of its first
    rows, in the order they first come (as the dictionary has them), and each row's index among
    them by ``index_in``, which costs half of encoding (7 ms for a million rows) as it only
    looks up. A value the first rows lack comes after all of theirs, so were there one, its row
    would have no index: the column is then encoded as a whole. None when the first rows hold
    more than ``FEW`` values (a payer's name: not worth the look-up)."""
    if len(values) < 4 * SAMPLE or not pa.types.is_string(values.type) or values.null_count:
        return None
    # A column of many values (payers, references) shows it in its first few rows already:
    # those are looked at first, for a tenth of a millisecond rather than one.
    if len(pc.unique(values.slice(0, SAMPLE >> 4))) > FEW:
        return None
    first = pc.unique(values.slice(0, SAMPLE))
    if len(first) > FEW:
        return None
    indices = pc.index_in(values, value_set=first)
    if indices.null_count:
        return None
    return pa.DictionaryArray.from_arrays(indices, first, safe=False)


def encoded_by_runs(values: pa.Array) -> pa.DictionaryArray:
    """:func:`encoded`, the same result, for a column whose equal values come together (a
    statement's dates, the file being in date order): neighbours are compared and only the
    first value of each run is hashed. A column not in runs is hashed as a whole."""
    if not isinstance(values, pa.StringArray) or values.null_count:
        return encoded(values)
    starts = run_starts(values)  # texts of one length: from the bytes (``_runs``)
    if starts is not None:
        if len(starts) * 4 > len(values):
            return encoded(values)
        firsts = values.take(pa.array(starts))
        lengths = np.diff(starts, append=len(values))
    else:
        runs = pc.run_end_encode(values)
        if len(runs.values) * 4 > len(values):
            return encoded(values)
        firsts = runs.values
        lengths = np.diff(runs.run_ends.to_numpy(), prepend=0)
    codes = firsts.dictionary_encode()
    indices = np.repeat(codes.indices.to_numpy(), lengths)
    return pa.DictionaryArray.from_arrays(pa.array(indices, pa.int32()), codes.dictionary)


def per_value(values: pa.Array | pa.ChunkedArray, fn: Callable[[pa.Array], pa.Array]) -> pa.Array:
    """``fn`` applied once to each distinct value, one result per row. String results stay
    dictionary-encoded (the rows share their values); other results are taken by index."""
    codes = encoded(values)
    result = fn(codes.dictionary)
    if pa.types.is_string(result.type) or pa.types.is_large_string(result.type):
        # The indices are Arrow's own, into a dictionary as long as the result: checking each
        # is in range (a pass over every line) is skipped then.
        same = len(result) == len(codes.dictionary)
        return pa.DictionaryArray.from_arrays(codes.indices, result, safe=not same)
    return pc.take(result, codes.indices)


def strings(values: pa.Array | pa.ChunkedArray) -> pa.Array:
    """Plain (not dictionary-encoded) strings."""
    if isinstance(values, pa.ChunkedArray):
        values = values.combine_chunks()
    if isinstance(values, pa.DictionaryArray):
        return values.dictionary_decode()
    return values


def clean_text(values: pa.Array) -> pa.Array:
    """Trimmed cells, without the apostrophe banks prefix to keep spreadsheets from converting."""
    trimmed = pc.utf8_trim(values, _SPACES)
    if not pc.any(pc.starts_with(trimmed, "'")).as_py():
        return trimmed
    return pc.utf8_trim(pc.replace_substring_regex(trimmed, pattern=r"^'", replacement=""), _SPACES)


def _pad_single_digits(values: pa.Array) -> pa.Array:
    return pc.replace_substring_regex(
        values, pattern=r"(^|[^0-9])([0-9])($|[^0-9])", replacement=r"\10\2\3"
    )


def parse_dates(
    values: pa.Array, formats: Sequence[str], zone: str | None = None
) -> tuple[pa.Array, pa.Array]:
    """Dates (``date32``, null where unreadable) and the index of the format each line used
    (-1 for none). A date must read back exactly: ``31/02/2024`` and 2-digit years are refused.
    Call it through :func:`per_value`: a statement has far fewer distinct dates than lines.

    With ``zone`` (a profile's ``date_zone``), a date-time is an instant in that zone, and its
    date is the one in Europe/London then: business dates are London dates
    (``docs/conventions.md §3``), so 23:30 UTC on 30 June, 00:30 in London, is 1 July. A
    date without a time is the date the bank wrote: it names no instant to convert. A time
    that happens twice or not at all in ``zone`` (its clocks changed that night) is -2."""
    text = pc.utf8_upper(clean_text(values))
    # Twice: a regex match cannot overlap, so "1/2/2024" needs a second pass for the month.
    text = _pad_single_digits(_pad_single_digits(text))
    result: pa.Array = pa.nulls(len(values), pa.date32())
    used = np.full(len(values), -1, dtype=np.int8)
    for index, fmt in enumerate(formats):
        stamps = pc.strptime(text, format=fmt, unit="s", error_is_null=True)
        back = pc.utf8_upper(pc.strftime(stamps, format=fmt))
        fresh = mask(pc.equal(back, text)) & (used == -1)
        if zone is not None and _HAS_TIME.search(fmt):
            days, unsure = _london_dates(stamps, zone)
            used[fresh & unsure] = -2
            fresh &= ~unsure
        else:
            days = pc.cast(stamps, pa.date32())
        result = pc.if_else(pa.array(fresh), days, result)
        used[fresh] = index
    return result, pa.array(used)


_HAS_TIME = re.compile(r"%[HIMSTRcX]")
_LONDON = "Europe/London"
_NO_CLOCK_CHANGES = frozenset({"UTC", "Etc/UTC", "GMT", "Etc/GMT"})


def _london_dates(stamps: pa.Array, zone: str) -> tuple[pa.Array, np.ndarray]:
    """The Europe/London dates of wall-clock ``stamps`` read in ``zone``, and which of them
    are ambiguous or missing there (never in UTC: it has no clock changes to check)."""
    instants = pc.assume_timezone(stamps, zone, ambiguous="earliest", nonexistent="earliest")
    unsure = np.zeros(len(stamps), dtype=bool)
    if zone not in _NO_CLOCK_CHANGES:
        latest = pc.assume_timezone(stamps, zone, ambiguous="latest", nonexistent="latest")
        unsure = mask(pc.not_equal(instants, latest))
    in_london = pc.local_timestamp(instants.cast(pa.timestamp("s", _LONDON)))
    return pc.cast(in_london, pa.date32()), unsure


_INNER_SPACES = r"[\s\x{00A0}\x{2009}\x{202F}]+"


def _money_pattern(decimal: str, thousands: str | None) -> str:
    d = re.escape(decimal)
    if thousands:
        t = re.escape(thousands)
        whole = rf"(?:[0-9]{{1,3}}(?:{t}[0-9]{{3}})+|[0-9]{{1,13}})"
    else:
        whole = r"[0-9]{1,13}"
    return rf"^-?{whole}(?:{d}[0-9]{{1,2}})?$"


def normalise_money_text(values: pa.Array) -> pa.Array:
    """Money cells with the marks people and banks add taken off: ``£``, ``GBP``, ``+``, and
    accounting brackets turned into a minus (``(12.50)`` → ``-12.50``). A ``+`` goes only
    before a digit or the point: ``+-1.00`` keeps it and is refused, not read as −£1.00."""
    text = pc.utf8_upper(clean_text(values))
    # Spaces (no-break and thin ones too) out, and the Unicode minus sign read as "-", as the
    # other readers do (tasks/common/finance_files/values.py money_text).
    text = pc.replace_substring_regex(text, pattern=_INNER_SPACES, replacement="")
    text = pc.replace_substring(text, UNICODE_MINUS, "-")
    text = pc.replace_substring_regex(text, pattern=r"^\((.*)\)$", replacement=r"-\1")
    text = pc.replace_substring_regex(text, pattern=r"^([-+]?)(?:£|GBP)", replacement=r"\1")
    text = pc.replace_substring_regex(text, pattern=r"GBP$", replacement="")
    text = pc.replace_substring_regex(text, pattern=r"^(?:£|GBP)", replacement="")
    return pc.replace_substring_regex(text, pattern=r"^\+([0-9.])", replacement=r"\1")


@dataclass(frozen=True)
class Money:
    """A money column read: whole pennies, and which cells were readable, empty, or ``-0.00``."""

    pennies: np.ndarray
    readable: np.ndarray
    empty: np.ndarray
    negative_zero: np.ndarray


def _pennies_of_plain(values: pa.Array) -> np.ndarray:
    """``-1234.56`` → -123456 for cells already known to have exactly that shape."""
    digits = pc.replace_substring(values, ".", "")
    return np.asarray(pc.cast(digits, pa.int64()).to_numpy(zero_copy_only=False), dtype=np.int64)


def _careful(values: pa.Array, decimal: str, thousands: str | None) -> Money:
    text = normalise_money_text(values)
    empty = mask(pc.equal(text, ""))
    negative_zero = mask(pc.match_substring_regex(text, r"^-0*[.,]?0*$")) & ~empty
    ok = pc.fill_null(pc.match_substring_regex(text, _money_pattern(decimal, thousands)), False)
    if thousands:
        text = pc.replace_substring(text, thousands, "")
    if decimal != ".":
        text = pc.replace_substring(text, decimal, ".")
    text = pc.if_else(ok, text, "0")
    negative = mask(pc.starts_with(text, "-"))
    text = pc.replace_substring(text, "-", "")
    has_point = pc.match_substring(text, ".")
    text = pc.if_else(has_point, text, pc.binary_join_element_wise(text, ".00", ""))
    text = pc.replace_substring_regex(text, pattern=r"\.([0-9])$", replacement=r".\10")
    pennies = _pennies_of_plain(text)
    return Money(np.where(negative, -pennies, pennies), mask(ok), empty, negative_zero)


def _without_point(values: pa.Array) -> tuple[pa.Array, np.ndarray, np.ndarray | None] | None:
    """The cells with the byte third from their end taken out, with each cell's length and
    emptiness (None when no cell is empty, nearly always: no mask to make or apply then);
    None unless every cell is empty or has a point there after at least one character (the
    fast path's shape, see :func:`_shaped`). The shape is checked on Arrow's buffers with
    numpy (no search); the point is cut by Arrow's slice kernel, which copies each cell's two
    pieces at once (cheaper than masking every byte of the column in numpy)."""
    if values.null_count or not pa.types.is_string(values.type):
        return None
    n = len(values)
    offsets, raw = string_parts(values)
    length = np.diff(offsets)
    if n and int(length.min()) > 0:
        if int(length.min()) < 4 or (raw[offsets[1:] - 3] != ord(".")).any():
            return None
        return pc.binary_replace_slice(values, start=-3, stop=-2, replacement=""), length, None
    empty = length == 0
    some_empty = bool(empty.any())
    ends = offsets[1:][~empty] if some_empty else offsets[1:]
    if (length[~empty] if some_empty else length).min(initial=4) < 4:
        return None
    if (raw[ends - 3] != ord(".")).any():
        return None
    digits = pc.binary_replace_slice(values, start=-3, stop=-2, replacement="")
    if some_empty:  # empty cells as nulls: no number, and no error from the cast
        _, cut_offsets, cut_data = digits.buffers()
        validity = pa.py_buffer(np.packbits(~empty, bitorder="little"))
        digits = pa.StringArray.from_buffers(n, cut_offsets, cut_data, validity)
    return digits, length, empty


def _shaped(values: pa.Array) -> Money | None:
    """The fast path: every cell empty or ``[-]digits.dd`` (the point third from the end, and
    Arrow's integer cast accepting what is left once it is taken out; another point anywhere
    fails the cast), else None."""
    cut = _without_point(values)
    if cut is None:
        return None
    digits, length, empty = cut
    # The careful path reads at most 13 digits before the point (_money_pattern), a sign
    # besides; Arrow's cast takes up to 19, and "-92233720368547758.08" is int64's least value,
    # whose np.abs is itself. Longer cells are for the careful path to refuse.
    longest = int(length.max(initial=0))
    if longest > 17 or (
        longest == 17 and not _starting_with_sign(values, np.flatnonzero(length == 17), "-").all()
    ):
        return None
    try:
        pennies = pc.fill_null(pc.cast(digits, pa.int64()), 0)
    except (pa.ArrowInvalid, pa.ArrowNotImplementedError):
        return None
    result = np.asarray(pennies.to_numpy(zero_copy_only=False), dtype=np.int64)
    # A sign before the point alone ("-.50") is for the careful path to name; only cells of
    # four characters can be one, and only a zero can be "-0.00": both are few. (Which cells
    # are short or zero is asked of every cell only where some may be.)
    shortest = int(length.min(initial=4)) if empty is None else 0
    if shortest <= 4 and _starting_with_sign(values, np.flatnonzero(length == 4)).any():
        return None
    negative_zero = np.zeros(len(result), dtype=bool)
    zeros = np.flatnonzero(result == 0 if empty is None else (result == 0) & ~empty)
    negative_zero[zeros] = _starting_with_sign(values, zeros, "-")
    if empty is None:
        return Money(
            result, np.ones(len(result), dtype=bool), np.zeros(len(result), bool), negative_zero
        )
    return Money(result, ~empty, empty, negative_zero)


def _starting_with_sign(values: pa.Array, rows: np.ndarray, signs: str = "-+") -> np.ndarray:
    """Whether each of ``rows`` starts with one of ``signs``."""
    if len(rows) == 0:
        return np.zeros(0, dtype=bool)
    first = pc.utf8_slice_codeunits(values.take(pa.array(rows)), 0, 1)
    return mask(pc.is_in(first, pa.array(list(signs))))


def parse_money(values: pa.Array, *, decimal: str = ".", thousands: str | None = ",") -> Money:
    """Read a money column (see the module docstring).

    Readable means: digits with at most two decimals, the profile's decimal mark, thousands
    marks only in groups of three. ``-0.00`` is readable here; the caller decides about it.
    """
    if decimal == ".":
        fast = _shaped(values)
        if fast is not None:
            return fast
    n = len(values)
    plain = mask(pc.match_substring_regex(values, _PLAIN_MONEY)) if decimal == "." else None
    if plain is None or not plain.any():
        return _careful(values, decimal, thousands)
    rest = np.flatnonzero(~plain)
    other = _careful(values.take(pa.array(rest)), decimal, thousands)
    pennies = np.zeros(n, dtype=np.int64)
    simple = np.flatnonzero(plain)
    pennies[simple] = _pennies_of_plain(values.take(pa.array(simple)))
    pennies[rest] = other.pennies
    readable, empty, zero_sign = np.ones(n, dtype=bool), np.zeros(n, dtype=bool), pennies == 0
    readable[rest], empty[rest] = other.readable, other.empty
    zero_sign[simple] &= mask(pc.starts_with(values.take(pa.array(simple)), "-"))
    zero_sign[rest] = other.negative_zero
    return Money(pennies, readable, empty, zero_sign)


def parse_pennies(
    values: pa.Array, *, decimal: str = ".", thousands: str | None = ","
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Whole pennies (int64), a mask of readable cells and a mask of empty cells."""
    money = parse_money(values, decimal=decimal, thousands=thousands)
    return money.pennies, money.readable, money.empty


def amount_problem(raw: str, decimal: str, thousands: str | None) -> str:
    """Why one money cell cannot be read (called only for the lines that failed)."""
    text = raw.strip()
    if not text:
        return "the amount is empty"
    upper = text.upper()
    for mark, name in (
        ("$", "US dollars"),
        ("€", "euros"),
        ("USD", "US dollars"),
        ("EUR", "euros"),
    ):
        if mark in upper:
            return f"amount {text!r} is in {name}; billops records GBP payments only"
    if decimal == "." and re.fullmatch(
        r"[-+£]?\s*\d{1,3}(\.\d{3})+,\d{1,2}|[-+£]?\s*\d+,\d{1,2}", text
    ):
        return f"amount {text!r} uses a decimal comma (a European format); this bank writes 1234.56"
    if re.search(r"\d[.,]\d{3,}$", text) and not re.search(r",\d{3}$", text):
        return f"amount {text!r} has more than two decimal places"
    if len(re.findall(rf"[-+({UNICODE_MINUS}]", text)) > 1:
        return f"amount {text!r} has more than one sign"
    if re.fullmatch(r"[-+£(]*\d{14,}(\.\d{1,2})?\)?", text):
        return f"amount {text!r} is too large: more than 13 digits of pounds"
    if re.fullmatch(r"[-+£(]*[\d,.]+\)?", text):
        return f"amount {text!r} is not a number of pounds (misplaced thousands separators?)"
    return f"amount {text!r} is not a number"
