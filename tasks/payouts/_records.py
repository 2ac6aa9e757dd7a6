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

_EPOCH = date(1970, 1, 1).toordinal()  # Arrow's day 0
_LAST_DAY = date.max.toordinal()


def records(frame: pd.DataFrame, columns: Sequence[str] | None = None) -> list[dict[str, Any]]:
    """``frame[columns].to_dict("records")``, by whole columns (every column when None)."""
    names = list(frame.columns if columns is None else columns)
    values = [column_values(frame[name]) for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def records_at(
    frame: pd.DataFrame, rows: np.ndarray | list[int], columns: Sequence[str]
) -> list[dict[str, Any]]:
    """``records(frame.iloc[rows], columns)``, taking only ``columns``' values at ``rows``: a
    take of every column of a year's items (twenty of them) costs more than the rows it keeps."""
    names = list(columns)
    if not len(rows):
        return []
    values = [_column_values_at(frame[name], rows) for name in names]
    return [dict(zip(names, row, strict=True)) for row in zip(*values, strict=True)]


def _column_values_at(column: pd.Series, rows: np.ndarray | list[int]) -> list[Any]:
    """``column_values(column.iloc[rows])``, taken by Arrow or numpy (:func:`values_at`)."""
    if isinstance(column.dtype, pd.ArrowDtype):
        at = np.asarray(rows, dtype=np.int64)
        if int(at.min()) >= 0:
            return python_values(pa.array(column.array).take(pa.array(at)))
    elif column.dtype != object:
        return values_at(column, rows)  # ``tolist``, as ``column_values`` reads these
    return column_values(column.iloc[rows])


def values_at(column: pd.Series, rows: np.ndarray | list[int]) -> list[Any]:
    """``column.iloc[rows].tolist()``. A column of Arrow text, whole numbers, dates or booleans
    is taken by Arrow and converted in one call when none of the values taken is missing (then
    the values are the same); numbers kept by numpy are taken by numpy. pandas' ``iloc`` and
    ``tolist`` cost about 0.25 ms a column for a few hundred rows of a year's items (a date
    column boxes each value in turn), ten times the take: the checks read a dozen such columns."""
    at = np.asarray(rows, dtype=np.int64)
    if len(at) and int(at.min()) < 0:
        return list(column.iloc[rows].tolist())  # counted from the end: pandas' own reading
    if isinstance(column.dtype, np.dtype) and column.dtype.kind in "biufO":
        return list(column.to_numpy()[at].tolist())
    if _plain_arrow(column.dtype):
        taken = pa.array(column.array).take(pa.array(at))
        if not taken.null_count:
            return python_values(taken)
    return list(column.iloc[rows].tolist())


def listed(column: pd.Series) -> list[Any]:
    """``column.tolist()``, read as :func:`values_at` reads rows (a day column's days made
    from their numbers, not boxed one by one)."""
    return values_at(column, np.arange(len(column)))


def _plain_arrow(dtype: object) -> bool:
    """Whether a column of ``dtype`` keeps Arrow values that ``tolist`` gives as ``as_py`` does:
    pandas' Arrow-backed text, and Arrow whole numbers, floats, booleans, texts and days."""
    if isinstance(dtype, pd.StringDtype):
        return bool(dtype.storage == "pyarrow")
    if not isinstance(dtype, pd.ArrowDtype):
        return False
    kind = dtype.pyarrow_dtype
    return bool(
        pa.types.is_integer(kind)
        or pa.types.is_floating(kind)
        or pa.types.is_boolean(kind)
        or pa.types.is_string(kind)
        or pa.types.is_large_string(kind)
        or kind == pa.date32()
    )


def column_values(column: pd.Series) -> list[Any]:
    """A column's values as ``to_dict("records")`` gives them."""
    values: list[Any]
    if isinstance(column.dtype, pd.ArrowDtype):
        values = python_values(pa.array(column.array))  # None where missing, as to_dict gives
    else:
        values = column.tolist()
        if column.dtype == object and any(isinstance(v, np.generic) for v in values):
            # numpy scalars in an object column: to_dict boxes them its own way
            values = [row[column.name] for row in column.to_frame().to_dict("records")]
    return values


def python_values(values: pa.Array | pa.ChunkedArray) -> list[Any]:
    """``values.to_pylist()``. Days (Arrow's ``date32``, none missing) are made from their
    numbers: Arrow makes each ``date`` through a scalar of its own, three times as slow (about
    0.4 ms for a year's payouts, and the reports and results read their days a dozen times)."""
    if values.type != pa.date32() or values.null_count or not len(values):
        return list(values.to_pylist())
    numbers = np.asarray(values.cast(pa.int32()).to_numpy(), dtype=np.int64)
    first, last = int(numbers.min()) + _EPOCH, int(numbers.max()) + _EPOCH
    if first < 1 or last > _LAST_DAY:
        return list(values.to_pylist())  # outside Python's calendar: Arrow says so its own way
    return [date.fromordinal(n) for n in (numbers + _EPOCH).tolist()]


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
