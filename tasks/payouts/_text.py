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


# What a text's 64-bit hash mixes its words with (odd multipliers, as splitmix64's): any hash
# would find the same repeats, since equal hashes are only candidates compared as texts after.
_MIX = np.uint64(0xBF58476D1CE4E5B9)
_SEED = np.uint64(0x9E3779B97F4A7C15)
# The low ``k`` bytes of a little-endian word (k = 0..8): the bytes of a text's last word.
_WORD_MASKS = np.array([(1 << (8 * k)) - 1 for k in range(9)], dtype=np.uint64)
HASHED_BYTES = 64  # longer texts are left to Arrow's own hashing (ids are shorter)


def text_hashes(values: pa.Array) -> np.ndarray | None:
    """A 64-bit hash of each text (equal texts, equal hashes), read eight bytes at a time from
    the column's own bytes; None for a column with nulls, not ``pa.string()``, or with a text
    longer than :data:`HASHED_BYTES`.

    Not the bank job's FNV-1a (``tasks/bank_payments/_keys.py``): that one is a kept key, defined
    byte by byte over canonical text and never to change; this one is never kept (equal hashes
    are only candidates, compared as texts after), so it may read whole words instead."""
    if values.type != pa.string() or values.null_count:
        return None
    ends, body = string_parts(values)
    starts = ends[:-1].astype(np.int64)
    lengths = np.diff(ends).astype(np.int64)
    shortest, width = (int(lengths.min()), int(lengths.max())) if len(lengths) else (0, 0)
    if width > HASHED_BYTES:
        return None
    # Eight bytes from every position (unaligned), over a copy with room for the words read
    # past a short text's end (masked off below).
    padded = np.zeros(len(body) + width + 8, dtype=np.uint8)
    padded[: len(body)] = body
    words = np.ndarray((len(body) + width + 1,), np.dtype("<u8"), padded, 0, (1,))
    found = lengths.astype(np.uint64) * _SEED
    for at in range(0, width, 8):
        # (a fancy index: ``take`` of an unaligned view cost three times as much)
        word = words[starts + at]
        if shortest < at + 8:  # some text ends within this word: its bytes only
            # (texts all as long as each other, as ids often are: one mask for all)
            left = np.clip(lengths - at, 0, 8) if shortest < width else min(width - at, 8)
            word &= _WORD_MASKS[left]
        found ^= word
        found *= _MIX
        found ^= found >> np.uint64(29)
    return found
