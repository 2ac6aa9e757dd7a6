"""A frame's rows as plain Python values, read by whole columns.

The reports and the results walk a few hundred payouts, credits and deductions row by row.
pandas' ``to_dict("records")`` and ``itertuples`` box each cell of an Arrow-backed column one by
one (an Arrow scalar per cell); ``tolist`` converts a column in one call. The values are the same
as ``to_dict("records")`` gives: Python ``str``, ``int``, ``float``, ``bool``, ``date``, ``None``
for a missing Arrow value and ``nan`` for missing text.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.payouts._items import as_date


def records(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """``frame[columns].to_dict("records")``, by whole columns (every column when None)."""
    names = list(frame.columns if columns is None else columns)
    values = [column_values(frame[name]) for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def column_values(column: pd.Series) -> list[Any]:
    """A column's values as ``to_dict("records")`` gives them."""
    values: list[Any]
    if isinstance(column.dtype, pd.ArrowDtype):
        values = pa.array(column.array).to_pylist()  # None where missing, as to_dict gives
    else:
        values = column.tolist()
        if column.dtype == object and any(isinstance(v, np.generic) for v in values):
            # numpy scalars in an object column: to_dict boxes them its own way
            values = [row[column.name] for row in column.to_frame().to_dict("records")]
    return values


def between(column: pd.Series, first: date, last: date) -> np.ndarray:
    """Which of a date column's days are from ``first`` to ``last`` (a column of Arrow dates
    compared by Arrow; any other converted day by day)."""
    if isinstance(column.dtype, pd.ArrowDtype) and column.dtype.pyarrow_dtype == pa.date32():
        days = pa.array(column.array)
        inside = pc.and_(pc.greater_equal(days, first), pc.less_equal(days, last))
        mask: np.ndarray = pc.fill_null(inside, False).to_numpy(zero_copy_only=False)
    else:
        converted = column.map(as_date)
        mask = ((converted >= first) & (converted <= last)).to_numpy(dtype=bool)
    return np.asarray(mask, dtype=bool)
