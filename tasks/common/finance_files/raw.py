"""A file's data rows column by column (pyarrow): every cell as text, exactly as the file had it.

A million rows of Python objects cost gigabytes; the same rows as Arrow string columns cost tens
of megabytes, and checks over them run as vectorised kernels. :class:`RawTable` keeps, per row,
the line a person sees, every cell (rows shorter than the widest are padded with ``""``, and
``widths`` says how many cells each row really had) and the header; :meth:`RawTable.row` gives
one row as an :class:`InputRow` where a check needs to look at it closely.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from itertools import zip_longest

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.arrow_text import string_parts
from tasks.common.finance_files.rows import InputRow

BATCH_ROWS = 65_536
EMPTY = pa.array([], type=pa.string())
_BLANK = r"^\s*$"
# What a blank value starts with, if anything: nothing (0 stands for that) or RE2's \s.
_BLANK_FIRST_BYTES = np.array([0, 9, 10, 12, 13, 32], dtype=np.uint8)


@dataclass(frozen=True)
class RawTable:
    """The data rows of a file (see the module docstring).

    ``columns`` maps a canonical column to its position in the header.
    """

    header: tuple[str, ...]
    columns: Mapping[str, int]
    lines: pa.Array
    cells: tuple[pa.Array, ...]
    widths: pa.Array
    _trimmed: dict[str, pa.Array] = field(default_factory=dict, compare=False, repr=False)

    def __len__(self) -> int:
        return len(self.lines)

    @property
    def column_names(self) -> dict[str, str]:
        """Canonical column → the header it was read from."""
        return {canonical: self.header[position] for canonical, position in self.columns.items()}

    def cell(self, position: int) -> pa.Array:
        """The cells at ``position``, as the file had them (``""`` where a row was shorter)."""
        if position < len(self.cells):
            return self.cells[position]
        return pa.repeat("", len(self))

    def value(self, canonical: str) -> pa.Array:
        """A canonical column's values, trimmed of surrounding whitespace (``""`` if absent)."""
        if canonical not in self._trimmed:
            position = self.columns.get(canonical)
            if position is None:
                self._trimmed[canonical] = pa.repeat("", len(self))
            else:
                self._trimmed[canonical] = trimmed(self.cell(position))
        return self._trimmed[canonical]

    def row(self, index: int) -> InputRow:
        """Row ``index`` as an :class:`InputRow` (for checks that look at one row closely)."""
        width = int(self.widths[index].as_py())
        cells = tuple(str(self.cells[p][index].as_py()) for p in range(min(width, len(self.cells))))
        values = {
            canonical: cells[position].strip() if position < len(cells) else ""
            for canonical, position in self.columns.items()
        }
        return InputRow(
            int(self.lines[index].as_py()), values, cells, self.header, self.column_names
        )

    def rows(self) -> Iterator[InputRow]:
        """Every row as an :class:`InputRow` (small files and tests; large ones stay columnar)."""
        return (self.row(i) for i in range(len(self)))

    def take(self, indices: pa.Array | Sequence[int]) -> RawTable:
        """The rows at ``indices``, in that order."""
        picked = pa.array(indices, type=pa.int64())
        return RawTable(
            self.header,
            self.columns,
            pc.take(self.lines, picked),
            tuple(pc.take(column, picked) for column in self.cells),
            pc.take(self.widths, picked),
        )

    def without_blank_rows(self) -> RawTable:
        """The table less rows whose every cell is empty or whitespace."""
        if not len(self) or not self.cells:
            return self
        # A blank row's first cell is blank: only rows whose first cell is are looked at further
        # (in the usual file none are, and one column is scanned instead of every one).
        candidates = _maybe_blank(self.cells[0])
        if not len(candidates):
            return self
        for column in self.cells:
            still = pc.match_substring_regex(pc.take(column, candidates), _BLANK)
            candidates = pc.filter(candidates, still)
            if not len(candidates):
                return self
        keep = np.ones(len(self), dtype=bool)
        keep[candidates.to_numpy()] = False
        return self.take(pa.array(np.flatnonzero(keep)))


def _maybe_blank(values: pa.Array) -> pa.Array:
    """The positions of the values that may be blank: empty, or starting with one of the
    whitespace bytes of ``_BLANK`` (RE2's ``\\s`` is ASCII only), read from each value's first
    byte; a pattern over every value cost a million-row file 20 ms more. The caller matches
    these against ``_BLANK``."""
    if values.type != pa.string():
        return pc.indices_nonzero(pc.match_substring_regex(values, _BLANK))
    ends, body = string_parts(values)
    filled = np.flatnonzero(ends[1:] > ends[:-1])
    first = np.zeros(len(values), dtype=np.uint8)  # 0 for an empty value (or a null)
    first[filled] = body[ends[:-1][filled]]
    return pa.array(np.flatnonzero(np.isin(first, _BLANK_FIRST_BYTES)))


def trimmed(values: pa.Array) -> pa.Array:
    """``utf8_trim_whitespace`` of ``values``; the values themselves, not a copy of every text,
    when none can start or end with whitespace (a column as exports write it)."""
    if values.type == pa.string() and not _edge_may_be_space(values):
        return values
    return pc.utf8_trim_whitespace(values)


def _edge_may_be_space(values: pa.Array) -> bool:
    """Whether a value's first or last byte may belong to whitespace: an ASCII control byte or
    space (0-32, what the kernel trims of ASCII is among them) or any byte of a non-ASCII
    character (127 and up: U+00A0, U+2003 and the like; any such text is left to the kernel).
    Read from each value's first and last byte, by numpy views of the buffers."""
    ends, body = string_parts(values)
    if not len(body):
        return False  # every value empty
    filled = ends[1:] > ends[:-1]
    # An empty value's bytes are clipped to a neighbour's, and it is masked out below.
    first = body.take(ends[:-1], mode="clip")
    last = body.take(ends[1:] - 1, mode="clip")
    # ``b - 33`` wraps below 33 (uint8): one comparison finds 0-32 and 127-255 alike.
    edge = ((first - 33) >= 94) | ((last - 33) >= 94)
    return bool(np.any(edge & filled))


def concatenated(parts: Sequence[pa.Array], kind: pa.DataType) -> pa.Array:
    """One array from batches of it."""
    if not parts:
        return pa.array([], type=kind)
    return pa.concat_arrays([part.cast(kind) for part in parts])


def table_from_records(
    records: Iterable[tuple[int, list[str]]],
    *,
    header: tuple[str, ...],
    columns: Mapping[str, int],
) -> RawTable:
    """A :class:`RawTable` from ``(line, cells)`` records, built in batches so a large file never
    exists as Python objects all at once."""
    line_parts: list[pa.Array] = []
    width_parts: list[pa.Array] = []
    cell_parts: list[list[pa.Array]] = []
    rows_so_far = 0
    batch: list[list[str]] = []
    lines: list[int] = []

    def flush() -> None:
        nonlocal rows_so_far
        if not batch:
            return
        widths = [len(cells) for cells in batch]
        transposed = list(zip_longest(*batch, fillvalue=""))
        for position, values in enumerate(transposed):
            if position == len(cell_parts):  # a wider row than any before: earlier rows get ""
                cell_parts.append([pa.array([""] * rows_so_far, type=pa.string())])
            cell_parts[position].append(pa.array(values, type=pa.string()))
        for position in range(len(transposed), len(cell_parts)):
            cell_parts[position].append(pa.array([""] * len(batch), type=pa.string()))
        line_parts.append(pa.array(lines, type=pa.int64()))
        width_parts.append(pa.array(widths, type=pa.int32()))
        rows_so_far += len(batch)
        batch.clear()
        lines.clear()

    for line, cells in records:
        lines.append(line)
        batch.append(cells)
        if len(batch) >= BATCH_ROWS:
            flush()
    flush()
    cells_by_position = tuple(concatenated(parts, pa.string()) for parts in cell_parts)
    return RawTable(
        header=header,
        columns=columns,
        lines=concatenated(line_parts, pa.int64()),
        cells=cells_by_position or tuple(EMPTY for _ in header),
        widths=concatenated(width_parts, pa.int32()),
    )
