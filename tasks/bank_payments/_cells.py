"""Arrow's CSV reader over a statement's body: the cells of the columns wanted, as text.

Split from ``_raw`` (which decides what the body is and what its rows mean): this is the one
call into Arrow and the UTF-8 check that lets it skip its own.
"""

from __future__ import annotations

import numpy as np
import pyarrow as pa
import pyarrow.csv as pacsv

MAX_BLOCK = 1 << 30
BLOCK = 4 << 20
_STRADDLING = "straddles two block boundaries"  # Arrow's words for a line longer than a block


def read_cells(
    body: bytes | memoryview,
    delimiter: str,
    width: int,
    used: list[int] | None = None,
    *,
    threads: bool = False,
    check_utf8: bool = True,
    quoted: bool = True,
) -> tuple[pa.Table, list[tuple[int, str, int, int]]]:
    """The cells of the ``used`` positions as text, and the rows that do not have ``width``
    cells (number, text, expected, found).

    One thread reads the body ``BLOCK`` bytes at a time: each block is cut into cells while it
    is still in the processor's cache (4-8 ms less of 80-90 on a 65 MB statement, joining each
    column's pieces after included); and a single thread counts the rows across blocks, so
    Arrow says which line each bad row is (with threads it cannot, so a file read with threads
    that has such rows is read again). A line longer than a block cannot be cut so: such a body
    is read as one block (up to ``MAX_BLOCK``), as every body was before, so that the line is
    refused for its length like any other. ``check_utf8=False`` only for a body known to be
    UTF-8 (:func:`valid_utf8`), ``quoted=False`` only for one known to hold no quote mark:
    Arrow's parser then takes its path without quoting (the same cells)."""
    try:
        return _read(body, delimiter, width, used, threads, check_utf8, quoted, BLOCK)
    except pa.ArrowInvalid as exc:
        whole = max(min(len(body) + 1, MAX_BLOCK), BLOCK)
        if threads or _STRADDLING not in str(exc) or whole <= BLOCK:
            raise
    return _read(body, delimiter, width, used, threads, check_utf8, quoted, whole)


def _read(
    body: bytes | memoryview,
    delimiter: str,
    width: int,
    used: list[int] | None,
    threads: bool,
    check_utf8: bool,
    quoted: bool,
    block: int,
) -> tuple[pa.Table, list[tuple[int, str, int, int]]]:
    names = [f"c{i}" for i in range(width)]
    wanted = [names[i] for i in (used if used is not None else range(width))]
    invalid: list[tuple[int, str, int, int]] = []

    def on_invalid(row: pacsv.InvalidRow) -> str:
        invalid.append((row.number or 0, row.text, row.expected_columns, row.actual_columns))
        return "skip"

    table = pacsv.read_csv(
        pa.BufferReader(body),
        read_options=pacsv.ReadOptions(column_names=names, use_threads=threads, block_size=block),
        parse_options=pacsv.ParseOptions(
            delimiter=delimiter,
            quote_char='"' if quoted else False,
            ignore_empty_lines=False,
            newlines_in_values=False,
            invalid_row_handler=on_invalid,
        ),
        convert_options=pacsv.ConvertOptions(
            column_types=dict.fromkeys(wanted, pa.string()),
            include_columns=wanted,
            strings_can_be_null=False,
            quoted_strings_can_be_null=False,
            check_utf8=check_utf8,
        ),
    )
    if invalid and threads:
        return read_cells(
            body, delimiter, width, used, threads=False, check_utf8=check_utf8, quoted=quoted
        )
    return table, invalid


def valid_utf8(body: bytes | memoryview) -> bool:
    """Whether the whole body is UTF-8, checked by Arrow in one go (the body as one string):
    then no cell can be anything else, and the CSV reader's own check of every cell, which cost
    five times as much, is left out. A body that is not is read with that check, as before (it
    names the bad bytes only when a column that is read holds them)."""
    offsets = pa.py_buffer(np.array([0, len(body)], dtype=np.int64))
    text = pa.Array.from_buffers(pa.large_string(), 1, [None, offsets, pa.py_buffer(body)])
    try:
        text.validate(full=True)
    except pa.ArrowInvalid:
        return False
    return True
