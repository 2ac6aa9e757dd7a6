"""The column-wise screen of a payment-request file: which rows surely pass every row check.

Computed over whole columns at once (Arrow kernels, and one parse per distinct value where the
values repeat: customers, dates, tax rates), so a million rows cost seconds, not minutes. A row
the screen cannot pass for sure (a bad or unusual cell, two customer columns, text that starts
like a formula) is *suspect*: ``rowcheck.py`` checks it alone and says why, so the reasons are
the same whatever the file's size. The screen never passes a row the row checks would refuse.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.arrow_text import mask, string_parts
from tasks.common.finance_files import (
    decimal_text,
    parse_currency,
    parse_date,
    parse_tax_rate,
)
from tasks.common.finance_files.raw import RawTable
from tasks.common.reports import FORMULA_START, starting_with
from tasks.payment_requests import columns as col
from tasks.payment_requests.customers import CustomerDirectory
from tasks.payment_requests.model import CustomerKind
from tasks.payment_requests.rowcheck import (
    MAX_DESCRIPTION,
    MAX_EXTERNAL_ID,
    MAX_REFERENCE,
    SENT_TEXT,
    ImportRules,
)

# Amounts the screen reads itself: £1,234.50 / 1234.5 (at most 2 decimals, short enough for int64
# pennies). Anything else ("GBP 12", "1.234", "-4") goes to the row checks.
_PLAIN_AMOUNT = r"^£?(\d{1,3}(,\d{3})+|\d+)(\.\d{1,2})?$"
_MAX_PLAIN_AMOUNT_CHARS = 16
_KIND_OF_COLUMN: dict[str, CustomerKind] = {
    col.CUSTOMER_ID: "id",
    col.CUSTOMER_EXTERNAL_ID: "external_id",
    col.CUSTOMER_NAME: "name",
}


@dataclass(frozen=True)
class Screened:
    """The screen's verdict per row (``suspect``) and, for the other rows, their values."""

    suspect: np.ndarray[Any, np.dtype[np.bool_]]
    customer_id: pa.Array
    customer_kind: pa.Array
    customer_value: pa.Array
    amount_pennies: pa.Array
    description: pa.Array
    reference: pa.Array  # null where empty
    external_id: pa.Array  # null where empty
    pay_by_date: pa.Array  # date32, null where empty
    tax_rate: pa.Array  # decimal text, null where empty


def _blank(values: pa.Array) -> pa.Array:
    return pc.equal(pc.utf8_length(values), 0)


def _per_distinct(
    values: pa.Array, parse: Callable[[str], Any], kind: pa.DataType
) -> tuple[pa.Array, np.ndarray[Any, np.dtype[np.bool_]]]:
    """``parse`` once per distinct non-empty value: the parsed column (null where empty or bad)
    and which rows were bad."""
    if values.null_count == 0 and not pc.any(pc.not_equal(values, "")).as_py():
        return pa.nulls(len(values), kind), np.zeros(len(values), dtype=bool)  # none filled in
    encoded = pc.dictionary_encode(values)
    parsed: list[Any] = []
    bad: list[bool] = []
    for text in encoded.dictionary.to_pylist():
        if not text:
            parsed.append(None)
            bad.append(False)
            continue
        try:
            parsed.append(parse(text))
            bad.append(False)
        except ValueError:
            parsed.append(None)
            bad.append(True)
    indices = encoded.indices
    column = pc.take(pa.array(parsed, type=kind), indices)
    return column, mask(pc.take(pa.array(bad, type=pa.bool_()), indices))


def _customers(
    table: RawTable, customers: CustomerDirectory
) -> tuple[pa.Array, pa.Array, pa.Array, np.ndarray[Any, np.dtype[np.bool_]]]:
    """Customer id, how the row named it, the value it used, and the rows that need a closer
    look (no customer cell, several, or one that does not resolve)."""
    n = len(table)
    given = np.zeros(n, dtype=np.int8)
    resolved = np.zeros(n, dtype=bool)
    ids: pa.Array = pa.nulls(n, pa.string())
    kinds: pa.Array = pa.nulls(n, pa.string())
    used: pa.Array = pa.nulls(n, pa.string())
    for name in col.CUSTOMER_COLUMNS:
        if name not in table.columns:
            continue
        values = table.value(name)
        present = ~mask(_blank(values))
        given += present
        encoded = pc.dictionary_encode(values)
        found: list[tuple[str | None, str | None]] = []
        for text in encoded.dictionary.to_pylist():
            try:
                if name == col.CUSTOMER:
                    kind, customer_id = customers.resolve_any(text)
                else:
                    kind = _KIND_OF_COLUMN[name]
                    customer_id = customers.resolve(kind, text)
                found.append((customer_id, kind))
            except ValueError:
                found.append((None, None))
        column_ids = pc.take(pa.array([f[0] for f in found], pa.string()), encoded.indices)
        column_kinds = pc.take(pa.array([f[1] for f in found], pa.string()), encoded.indices)
        ok = present & mask(pc.is_valid(column_ids))
        if not resolved.any() and ok.all():  # the usual file: one column, every row resolved
            ids, kinds, used = column_ids, column_kinds, values
        else:
            pick = pa.array(ok)
            ids = pc.if_else(pick, column_ids, ids)
            kinds = pc.if_else(pick, column_kinds, kinds)
            used = pc.if_else(pick, values, used)  # table.value: trimmed already
        resolved |= ok
    suspect = (given != 1) | ~resolved
    return ids, kinds, used, suspect


def _pounds_and_pence(values: pa.Array) -> pa.Array | None:
    """Pennies of a column whose every cell is ``£1234.50`` or ``1234.50`` (the shape exports
    write), else None: checked on Arrow's buffers with numpy, no regex and no decimal cast.

    The shape is a subset of ``_PLAIN_AMOUNT`` within its length, so these pennies are what the
    general path reads from the same cells (``tests/tasks/test_screen_amounts.py``).
    """
    if values.null_count or not pa.types.is_string(values.type) or not len(values):
        return None
    bare = pc.utf8_ltrim(values, "£")
    whole, _ = string_parts(values)
    ends, data = string_parts(bare)
    pound = np.diff(whole) - np.diff(ends)  # bytes trimmed: 0, or 2 for one "£"
    length = np.diff(ends)
    if not np.isin(pound, (0, 2)).all() or length.min() < 4:  # a digit at least before "."
        return None
    if (length + pound // 2).max() > _MAX_PLAIN_AMOUNT_CHARS or (data[ends[1:] - 3] != 46).any():
        return None
    digits = pc.binary_replace_slice(bare, start=-3, stop=-2, replacement="")
    cut, body = string_parts(digits)
    if ((body[cut[0] : cut[-1]] - 48) > 9).any():  # uint8: bytes below "0" wrap round too
        return None
    return pc.cast(digits, pa.int64())


def _plain_pennies(values: pa.Array) -> tuple[pa.Array, pa.Array]:
    """Every cell's pennies (0 where not plain) and whether it is a plain amount
    (``_PLAIN_AMOUNT`` within its length): the general path, for any column."""
    plain = pc.and_(
        pc.match_substring_regex(values, _PLAIN_AMOUNT),
        pc.less_equal(pc.utf8_length(values), _MAX_PLAIN_AMOUNT_CHARS),
    )
    digits = pc.replace_substring(pc.replace_substring(values, "£", ""), ",", "")
    # A plain amount has at most 2 decimals and 16 characters, so Arrow's cast to a two-decimal
    # decimal is exact, and its unscaled integer (the low half of each 16-byte value) is pennies.
    exact = pc.cast(pc.if_else(plain, digits, "0"), pa.decimal128(18, 2))
    _, words = exact.buffers()
    low = np.frombuffer(words, dtype=np.int64)[2 * exact.offset : 2 * (exact.offset + len(exact))]
    return pa.array(low[::2]), plain


def _amounts(
    values: pa.Array, rules: ImportRules
) -> tuple[pa.Array, np.ndarray[Any, np.dtype[np.bool_]]]:
    ceiling = int(rules.max_row_amount * 100)
    pennies = _pounds_and_pence(values)
    if pennies is not None:
        good = pc.and_(pc.greater(pennies, 0), pc.less_equal(pennies, ceiling))
    else:
        pennies, plain = _plain_pennies(values)
        good = pc.and_(plain, pc.and_(pc.greater(pennies, 0), pc.less_equal(pennies, ceiling)))
    return pennies, ~mask(good)


def _text(
    values: pa.Array, limit: int, *, required: bool
) -> tuple[pa.Array, np.ndarray[Any, np.dtype[np.bool_]]]:
    lengths = pc.utf8_length(values)
    bad = mask(pc.greater(lengths, limit))
    empty = mask(pc.equal(lengths, 0))
    if required:
        bad |= empty
    return pc.if_else(pa.array(empty), pa.scalar(None, pa.string()), values), bad


def _stray_cells(table: RawTable) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Rows with a non-blank cell beyond the header (a stray delimiter?)."""
    stray = np.zeros(len(table), dtype=bool)
    for position in range(len(table.header), len(table.cells)):
        stray |= ~mask(_blank(pc.utf8_trim_whitespace(table.cells[position])))
    return stray if table.header else np.zeros(len(table), dtype=bool)


def _formulas(table: RawTable) -> np.ndarray[Any, np.dtype[np.bool_]]:
    flagged = np.zeros(len(table), dtype=bool)
    for name in SENT_TEXT:
        if name in table.columns:
            flagged |= starting_with(table.value(name), FORMULA_START)
    return flagged


def _tax_rate_text(raw: str) -> str:
    return decimal_text(parse_tax_rate(raw))


def _date_after(today: date) -> Callable[[str], date]:
    def parse(raw: str) -> date:
        found = parse_date(raw)
        if found < today:
            raise ValueError("in the past")
        return found

    return parse


def screen(
    table: RawTable, customers: CustomerDirectory, today: date, rules: ImportRules
) -> Screened:
    """The screen of every row (see the module docstring)."""
    customer_id, customer_kind, customer_value, suspect = _customers(table, customers)
    pennies, bad_amount = _amounts(table.value(col.AMOUNT), rules)
    description, bad_description = _text(
        table.value(col.DESCRIPTION), MAX_DESCRIPTION, required=True
    )
    reference, bad_reference = _text(table.value(col.REFERENCE), MAX_REFERENCE, required=False)
    external_id, bad_external = _text(table.value(col.EXTERNAL_ID), MAX_EXTERNAL_ID, required=False)
    pay_by, bad_date = _per_distinct(table.value(col.PAY_BY_DATE), _date_after(today), pa.date32())
    tax_rate, bad_tax = _per_distinct(table.value(col.TAX_RATE), _tax_rate_text, pa.string())
    _, bad_currency = _per_distinct(table.value(col.CURRENCY), parse_currency, pa.string())
    suspect = (
        suspect
        | bad_amount
        | bad_description
        | bad_reference
        | bad_external
        | bad_date
        | bad_tax
        | bad_currency
        | _stray_cells(table)
        | _formulas(table)
    )
    return Screened(
        suspect=suspect,
        customer_id=customer_id,
        customer_kind=customer_kind,
        customer_value=customer_value,
        amount_pennies=pennies,
        description=description,
        reference=reference,
        external_id=external_id,
        pay_by_date=pay_by,
        tax_rate=tax_rate,
    )


def pounds(pennies: int) -> Decimal:
    """Pennies as a Decimal amount of pounds, exactly."""
    return (Decimal(pennies) / 100).quantize(Decimal("0.01"))
