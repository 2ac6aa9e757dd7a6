"""The rows of a statement being normalised: their cells, line numbers, what was read of them
and the reasons found so far (``_normalise`` reads and checks them)."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from tasks.bank_payments._kernels import clean_text, encoded_by_runs, per_value
from tasks.bank_payments._memo import empty_text
from tasks.bank_payments._profiles import Profile
from tasks.bank_payments._raw import RawRows


class Lines:
    """The rows being normalised: their cells, line numbers and the reasons found so far.

    Reasons are kept only for the rows that have one (a few, in a good file)."""

    def __init__(self, raw: RawRows, profile: Profile) -> None:
        self.raw = raw
        self.profile = profile
        self.n = len(raw.lines)
        self.refused = np.zeros(self.n, dtype=bool)
        self.skipped = np.zeros(self.n, dtype=bool)
        self.reasons: dict[int, str] = {}
        self.skips: dict[int, str] = {}
        # What ``_normalise.checked`` read of every line (empty until then).
        self.account: pa.Array = empty_text(0)
        self.dates: pa.Array = pa.array([], pa.date32())
        self.amount: np.ndarray = np.zeros(0, dtype=np.int64)

    def field(self, name: str, *, in_runs: bool = False) -> pa.Array | None:
        """The field's cells, cleaned, dictionary-encoded (None when the file has no column);
        ``in_runs`` for a field whose equal cells come together (:func:`encoded_by_runs`)."""
        column = self.cells(name)
        if column is None:
            return None
        return per_value(encoded_by_runs(column) if in_runs else column, clean_text)

    def cells(self, name: str) -> pa.Array | None:
        """The field's cells as the file has them (None when the file has no column)."""
        for ref in self.profile.column_names(name):
            column = self.raw.column(ref, self.profile.header_strip)
            if column is not None:
                return column
        return None

    def text(self, name: str) -> pa.Array:
        found = self.field(name)
        return found if found is not None else empty_text(self.n)

    def open(self) -> np.ndarray:
        """Rows with no reason and not skipped yet."""
        return ~(self.refused | self.skipped)

    def refuse(self, where: np.ndarray, why: str | Callable[[int], str]) -> None:
        """Give the rows in ``where`` that have none yet a reason (text, or one per row)."""
        where = np.asarray(where, dtype=bool)
        if not where.any():  # nearly always, in a good file: no per-line masks to combine
            return
        fresh = where & self.open()
        for index in np.flatnonzero(fresh):
            self.reasons[int(index)] = why if isinstance(why, str) else why(int(index))
        self.refused |= fresh

    def skip(self, where: np.ndarray, why: Callable[[int], str]) -> None:
        fresh = np.asarray(where, dtype=bool) & ~self.skipped
        for index in np.flatnonzero(fresh):
            self.skips[int(index)] = why(int(index))
        self.skipped |= fresh

    def row_text(self, index: int) -> str:
        """The row's cells that were read, as one text (to show with a reason)."""
        return " ".join(str(c[index].as_py()) for c in self.raw.read())


class FewLines(Lines):
    """The rows of ``raw`` where ``keep`` is true, of a statement whose every line was checked
    already, read for their texts only (the payout job's credits: ``_payouts``). Only the
    columns asked for are cut down to those rows; their texts are cleaned cell by cell, not
    dictionary-encoded: a statement's payers and references are nearly all distinct, and
    encoding 100,000 of them cost 20 ms where cleaning them cost 5 (the same values)."""

    def __init__(self, raw: RawRows, profile: Profile, keep: np.ndarray) -> None:
        super().__init__(raw, profile)
        self.keep = pa.array(keep)
        self.n = int(np.count_nonzero(keep))

    def cells(self, name: str) -> pa.Array | None:
        column = super().cells(name)
        return None if column is None else column.filter(self.keep)

    def field(self, name: str, *, in_runs: bool = False) -> pa.Array | None:
        column = self.cells(name)
        return None if column is None else clean_text(column)
