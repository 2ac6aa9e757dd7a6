"""Which statement lines an earlier file recorded already: their keys among the done keys the
ledger holds, so a file dropped twice records nothing and an overlapping file only its new
lines (README, "Importing payments from bank statements").

A plain ``is_in`` of a million keys against a million done ones hashes every key; most lines of
a new file are new, so a bitmap of the done keys' first bytes rules them out first, and only the
lines it cannot rule out are looked up exactly (equal keys have equal first bytes: never a line
wrongly taken for new).
"""

from __future__ import annotations

from collections.abc import Iterable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._kernels import mask
from tasks.common.arrow_text import string_parts


def duplicates(
    keys: pa.Array, done_keys: Iterable[str], among: np.ndarray | None = None
) -> np.ndarray:
    """Lines (of those ``among``, by default all) whose key is already done.

    Most lines are new: a bitmap of the done keys' heads (:func:`_heads`) rules them out by one
    numpy look each, and only the lines it cannot rule out are looked up exactly."""
    known = pa.array(list(done_keys), pa.string())
    found = np.zeros(len(keys), dtype=bool)
    if len(known) == 0:
        return found
    maybe = _maybe_known(keys, known)
    if maybe is None:
        if among is None:
            return mask(pc.is_in(keys, value_set=known))
        rows = np.flatnonzero(among)
    else:
        rows = np.flatnonzero(maybe if among is None else maybe & among)
    found[rows] = mask(pc.is_in(keys.take(pa.array(rows)), value_set=known))
    return found


_MIX = np.uint64(0x9E3779B97F4A7C15)  # Fibonacci hashing: spreads similar heads over buckets


def _maybe_known(keys: pa.Array, known: pa.Array) -> np.ndarray | None:
    """Per key, whether a done key shares its bucket (false for a key that is surely not done:
    equal keys have equal heads); None when the keys are not plain strings."""
    if not all(isinstance(a, pa.StringArray) and not a.null_count for a in (keys, known)):
        return None
    bits = int(np.clip(np.ceil(np.log2(len(known))) + 4, 16, 24))
    shift = np.uint64(64 - bits)
    table = np.zeros(1 << bits, dtype=bool)
    table[(_heads(known) * _MIX) >> shift] = True
    in_table: np.ndarray = table[(_heads(keys) * _MIX) >> shift]
    return in_table


def _heads(values: pa.StringArray) -> np.ndarray:
    """Each text's first 8 bytes (zeros past its end) as a number, mixed with its length."""
    n = len(values)
    offsets, raw = string_parts(values)
    length = np.diff(offsets)
    width = int(length[0]) if n else 0
    if width >= 8 and (length == width).all():
        # Keys of one length (the digest keys): every head is a strided view of the buffer,
        # and every length the same number to mix in.
        head = np.ndarray((n,), dtype="<u8", buffer=raw, offset=int(offsets[0]), strides=(width,))
        # (the product wrapped as the arrays' is, in Python: numpy warns of a scalar's wrap)
        one_length: np.ndarray = head ^ np.uint64(width * int(_MIX) % (1 << 64))
        return one_length
    head = np.zeros(n, dtype=np.uint64)
    for byte in range(8):
        has = length > byte
        head[has] |= raw[offsets[:-1][has] + byte].astype(np.uint64) << np.uint64(8 * byte)
    mixed: np.ndarray = head ^ (length.astype(np.uint64) * _MIX)
    return mixed
