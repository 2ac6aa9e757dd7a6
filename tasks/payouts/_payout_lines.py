"""The checks across the lines of a payout report (``_report``): every line of a payout agrees
with its first line, names a document, and pays a payment once; and the payment ids on more
than one line, kept for finding a payment two payouts paid out (``_scope``).

Checked on the Arrow columns before the items frame is built; only the lines reported are
looked at one by one (the first 20 of each kind).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.arrow_text import mask
from tasks.payouts._items import Problem, contiguous
from tasks.payouts._profiles import DEDUCTION, DOCUMENTS
from tasks.payouts._text import empty_cells


@dataclass(frozen=True)
class RepeatedPayments:
    """The payment ids on more than one line of a report, and the lines naming one of them
    (positions in its items, in order)."""

    ids: frozenset[str]
    lines: np.ndarray


NO_REPEATS = RepeatedPayments(frozenset(), np.zeros(0, dtype=np.int64))


class Payments:
    """The items' payment ids numbered by one dictionary encode (a hash of each id, once), and
    how many lines name each: a payment twice in one payout, and a payment two payouts paid
    out, are both among the ids on more than one line, a few hundred lines of a year's items."""

    def __init__(self, payment_ids: pa.Array) -> None:
        encoded = payment_ids.dictionary_encode()
        self.ids: pa.Array = encoded.dictionary
        self.codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        self.lines = np.bincount(self.codes, minlength=len(self.ids))
        self.empty = int(pc.index(self.ids, "").as_py())  # the code of no id (-1: none)

    def repeated_rows(self) -> np.ndarray:
        """The lines naming a payment whose id is on another line too."""
        return np.flatnonzero((self.lines[self.codes] > 1) & (self.codes != self.empty))

    def repeated(self) -> RepeatedPayments:
        ids = self.ids.filter(pa.array(self.lines > 1)).to_pylist()
        return RepeatedPayments(frozenset(str(i) for i in ids if i), self.repeated_rows())


def inconsistent(
    columns: dict[str, pa.Array],
    names: dict[str, str],
    codes: np.ndarray,
    firsts: np.ndarray,
    payments: Payments,
) -> list[Problem]:
    """Lines that contradict the first line of their payout, lines naming no document, and a
    payment twice in one payout (``columns``: the items' Arrow columns; ``codes`` and
    ``firsts``: :func:`arrow_payout_codes` of their payouts). Checked on the Arrow columns, before
    the frame is built; only the lines reported are looked at one by one."""
    problems: list[Problem] = []
    fields = [f for f in ("reference", "arrival_date", "payout_amount") if f in names]
    # Each line against its payout's first line (a groupby's "first" would copy the report).
    heads = firsts[codes]
    together = contiguous(codes)
    for field in fields:
        values = columns[field]
        if together and _same_as_previous(values, codes):
            continue  # each line equals the one before it in its payout, so its payout's first
        same = pc.equal(values, values.take(pa.array(heads)))
        for row in np.flatnonzero(~mask(same))[:20]:
            problems.append(
                Problem(
                    _line(columns, row),
                    names[field],
                    _cell(columns, field, row),
                    f"differs from the first line of payout {_cell(columns, 'payout_id', row)} "
                    f"({_cell(columns, field, heads[row])})",
                )
            )
    documents = [n for n in DOCUMENTS if n in names]
    nothing = np.logical_and.reduce([empty_cells(columns[n]) for n in documents])
    for row in np.flatnonzero(nothing)[:20]:
        reason = "names no invoice, payment request or payment"
        problems.append(Problem(_line(columns, row), "", "", reason))
    if "payment_id" in names:
        problems += _paid_twice(columns, names["payment_id"], codes, payments)
    return problems


def _same_as_previous(values: pa.Array, codes: np.ndarray) -> bool:
    """Whether every line equals the line before it where both are of one payout: neighbours
    compared in place, not each line against a copy of its payout's first line."""
    if len(values) < 2:
        return True
    equal = mask(pc.equal(values.slice(1), values.slice(0, len(values) - 1)))
    return bool(np.all(equal | (codes[1:] != codes[:-1])))


def _paid_twice(
    columns: dict[str, pa.Array], column: str, codes: np.ndarray, payments: Payments
) -> list[Problem]:
    """A payment twice in one payout with the same kind: one integer key per line (payout,
    payment, kind), not a three-column duplicated() over a copy of the named lines; and only
    over the lines whose payment id is on another line too (a line repeating an earlier key
    is among them, in the same order)."""
    rows = payments.repeated_rows()
    deduction = mask(pc.equal(columns["kind"].take(pa.array(rows)), DEDUCTION)).astype(np.int64)
    key = (codes[rows] * (len(payments.ids) + 1) + payments.codes[rows]) * 2 + deduction
    twice = np.zeros(len(payments.codes), dtype=bool)
    twice[rows] = pd.Series(key).duplicated(keep="first").to_numpy(dtype=bool)
    return [
        Problem(
            _line(columns, row),
            column,
            _cell(columns, "payment_id", row),
            f"appears twice in payout {_cell(columns, 'payout_id', row)}",
        )
        for row in np.flatnonzero(twice)[:20]
    ]


def _line(columns: dict[str, pa.Array], row: int) -> int:
    return int(columns["line"][int(row)].as_py())


def _cell(columns: dict[str, pa.Array], name: str, row: int) -> str:
    return str(columns[name][int(row)].as_py())
