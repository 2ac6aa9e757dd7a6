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
from tasks.payouts._text import empty_cells, text_hashes


@dataclass(frozen=True)
class RepeatedPayments:
    """The payment ids on more than one line of a report, and the lines naming one of them
    (positions in its items, in order)."""

    ids: frozenset[str]
    lines: np.ndarray


NO_REPEATS = RepeatedPayments(frozenset(), np.zeros(0, dtype=np.int64))


class Payments:
    """The lines naming a payment whose id (not empty) is on another line too, those ids, and
    each such line's payment as a number: a payment twice in one payout, and a payment two
    payouts paid out, are both among them, a few hundred lines of a year's items.

    Found from a 64-bit hash of each id (:func:`text_hashes`): only the lines whose hash is on
    another line too are compared as texts. Numbering every id by Arrow's dictionary encode
    (the general way, :meth:`by_encoding`, still taken by ids that are not hashed: nulls, large
    strings, ids over 64 bytes) cost bench_payouts' 201,600 ids ~33-41 ms; the hashes, their
    sort and the texts of the few hundred candidates ~10 ms."""

    def __init__(self, payment_ids: pa.Array) -> None:
        hashes = text_hashes(payment_ids)
        if hashes is None:
            self._among(payment_ids, np.arange(len(payment_ids)))
            return
        # Lines naming no payment are never repeats: each gets a hash of its own (its row).
        nothing = np.flatnonzero(empty_cells(payment_ids))
        hashes[nothing] = nothing.astype(np.uint64)
        rows = _repeated_hashes(hashes)
        self._among(payment_ids.take(pa.array(rows)), rows)

    @classmethod
    def by_encoding(cls, payment_ids: pa.Array) -> Payments:
        """The same found by one dictionary encode of every id (no hashes)."""
        found = cls.__new__(cls)
        found._among(payment_ids, np.arange(len(payment_ids)))
        return found

    def _among(self, ids: pa.Array, rows: np.ndarray) -> None:
        """Numbers ``ids`` (the ids of ``rows``, every line naming a repeated id among them) by
        one dictionary encode and keeps the lines whose id is on another of them."""
        encoded = ids.dictionary_encode()
        codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        lines = np.bincount(codes, minlength=len(encoded.dictionary))
        empty = int(pc.index(encoded.dictionary, "").as_py())  # the code of no id (-1: none)
        repeated = (lines[codes] > 1) & (codes != empty)
        self.rows: np.ndarray = np.asarray(rows, dtype=np.int64)[repeated]
        self.codes: np.ndarray = codes[repeated]  # each of ``rows``' payment, as a number
        self.count = len(encoded.dictionary)  # how many numbers ``codes`` draws from
        self.ids = frozenset(str(i) for i in ids.filter(pa.array(repeated)).to_pylist())

    def repeated_rows(self) -> np.ndarray:
        """The lines naming a payment whose id is on another line too."""
        return self.rows

    def repeated(self) -> RepeatedPayments:
        return RepeatedPayments(self.ids, self.rows)


def _repeated_hashes(hashes: np.ndarray) -> np.ndarray:
    """The rows whose hash is on another row too, in order: the sorted hashes' equal
    neighbours give the repeated hashes (a few hundred), and a table indexed by their low bits
    picks out the rows that may hold one (no search of every row's hash among them)."""
    ordered = np.sort(hashes)
    twice = ordered[1:][ordered[1:] == ordered[:-1]]
    if not len(twice):
        return np.zeros(0, dtype=np.int64)
    table = np.zeros(1 << 16, dtype=bool)
    table[twice & np.uint64(0xFFFF)] = True
    maybe = np.flatnonzero(table[hashes & np.uint64(0xFFFF)])
    return maybe[np.isin(hashes[maybe], twice)]


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
    key = (codes[rows] * (payments.count + 1) + payments.codes) * 2 + deduction
    twice = np.zeros(len(codes), dtype=bool)
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
