"""Items found by payout without hashing every item's payout id: the id column's runs.

A payout's items sit together (a report lists them payout by payout, the ledger keeps them a
block per payout), so a year of items is a few hundred runs of equal payout ids. A value first
appears at the start of a run, always, so a payout's first item and the rows of its items are
found from the runs' first cells: one vectorised comparison of neighbours, not a hash of each
of hundreds of thousands of texts. Items in any other order give the same answers, more slowly.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc


def run_starts(values: pd.Series | pa.Array | pa.ChunkedArray) -> np.ndarray:
    """The rows where a run of equal values starts (row 0 first; none for no rows)."""
    column = _arrow(values)
    count = len(column)
    if count == 0:
        return np.zeros(0, dtype=np.int64)
    differs = pc.fill_null(pc.not_equal(column.slice(1), column.slice(0, count - 1)), True)
    changed = np.asarray(differs.to_numpy(zero_copy_only=False), dtype=bool)
    return np.flatnonzero(np.r_[True, changed]).astype(np.int64)


def first_rows(values: pd.Series | pa.Array | pa.ChunkedArray) -> dict[object, int]:
    """Each value's first row."""
    column = _arrow(values)
    starts = run_starts(column)
    found: dict[object, int] = {}
    heads = column.take(pa.array(starts)).to_pylist() if len(starts) else []
    for value, row in zip(heads, starts.tolist(), strict=True):
        found.setdefault(value, row)
    return found


def row_ranges(
    values: pd.Series | pa.Array | pa.ChunkedArray,
) -> dict[object, list[tuple[int, int]]]:
    """Each value's rows, as ``(start, end)`` ranges in row order."""
    column = _arrow(values)
    found: dict[object, list[tuple[int, int]]] = {}
    if not len(column):
        return found
    starts = run_starts(column)
    ends = np.r_[starts[1:], len(column)].astype(np.int64)
    heads = column.take(pa.array(starts)).to_pylist()
    for value, start, end in zip(heads, starts.tolist(), ends.tolist(), strict=True):
        found.setdefault(value, []).append((start, end))
    return found


def rows_in(ranges: list[tuple[int, int]]) -> np.ndarray:
    """The rows of :func:`row_ranges`' ranges, in order."""
    return np.concatenate([np.arange(start, end, dtype=np.int64) for start, end in ranges])


def _arrow(values: pd.Series | pa.Array | pa.ChunkedArray) -> pa.Array | pa.ChunkedArray:
    if isinstance(values, pd.Series):
        return pa.array(values.array)
    return values
