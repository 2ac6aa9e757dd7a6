"""Arrow string arrays as numpy views of their own buffers: the kernels that decide from a
column's bytes what a string kernel would decide value by value (formula starts, a point third
from the end, a key's first bytes) start here, and nothing is copied. And a boolean Arrow
column as the numpy mask those kernels combine with."""

from __future__ import annotations

from typing import Any

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

_NO_BYTES = np.zeros(0, dtype=np.uint8)


def string_parts(values: pa.Array) -> tuple[np.ndarray[Any, Any], np.ndarray[Any, Any]]:
    """A string array's value boundaries (one more than its values, positions in the bytes) and
    its bytes, as numpy views of Arrow's buffers (``values`` a ``pa.string()`` array)."""
    _, offsets, data = values.buffers()
    ends = np.frombuffer(offsets, np.int32)[values.offset : values.offset + len(values) + 1]
    body = np.frombuffer(data, np.uint8) if data is not None and data.size else _NO_BYTES
    return ends, body


def mask(values: pa.Array | pa.ChunkedArray) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """A boolean Arrow array as numpy (nulls are false)."""
    filled = pc.fill_null(values, False)
    return np.asarray(filled.to_numpy(zero_copy_only=False), dtype=bool)
