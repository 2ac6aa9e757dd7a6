"""The frames' text columns through Arrow: pandas keeps them as Arrow text already, and its own
``isin`` and ``iloc`` of a year of items convert and check around the same Arrow kernels."""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.arrow_text import string_parts


def texts(column: pd.Series) -> pa.Array:
    """A text column as one Arrow array (large strings: pandas' own storage, not copied)."""
    values = pa.array(column.array, pa.large_string())
    return values.combine_chunks() if isinstance(values, pa.ChunkedArray) else values


def is_in(column: pd.Series, values: Iterable[str]) -> np.ndarray:
    """Which of ``column``'s texts are among ``values`` (as ``isin``: a missing text is not)."""
    wanted = sorted(set(values))
    if not wanted:
        return np.zeros(len(column), dtype=bool)
    found = pc.is_in(texts(column), value_set=pa.array(wanted, pa.large_string()))
    return np.asarray(pc.fill_null(found, False).to_numpy(zero_copy_only=False), dtype=bool)


def chosen(values: pa.Array, mask: np.ndarray, count: int) -> pa.Array:
    """``values`` where ``mask`` holds (``count`` of them: all, and no copy, when every one)."""
    return values if count == len(values) else values.filter(pa.array(mask))


def empty_cells(values: pa.Array) -> np.ndarray:
    """Which of ``values`` are empty texts (as ``pc.equal(values, "")``, nulls not), from the
    offsets of a text column without nulls: no comparison of every value's bytes."""
    if values.type != pa.string() or values.null_count:
        return np.asarray(pc.fill_null(pc.equal(values, ""), False).to_numpy(zero_copy_only=False))
    ends, _ = string_parts(values)
    return np.asarray(ends[1:] == ends[:-1], dtype=bool)
