"""A statement file's bytes in one numpy buffer, and the byte questions the reader asks of them.

Why numpy and not ``bytes``: reading a 65 MB statement into a ``bytes`` object cost 0.03-0.04 s
CPU, most of it the kernel faulting in 16,000 fresh 4 KB pages; into a preallocated numpy array
it cost 0.01 s, because numpy asks for transparent huge pages on large allocations (the machine's
THP mode is ``madvise``) and ``bytes`` does not. The file is read, never memory-mapped: a file cut
short while it is mapped kills the process with SIGBUS (README, ``bench/bench_bank.py``).

The reader takes either form (:data:`Buffer`): bytes handed to ``read_statement_bytes``, or the
array :func:`read_file` gives. A numpy array has no ``find``, so the few questions asked of the
whole file (is there a NUL, a CR, a quote mark?) copy it to ``bytes`` a block at a time, where
``bytes.find`` looks with ``memchr``: one pass for the three, about what three ``in`` tests of a
``bytes`` object cost. Only rare paths (another encoding, a NUL, CR line endings) take the whole
file as ``bytes``, as the reader did before.
"""

from __future__ import annotations

import os
from pathlib import Path

import numpy as np

Buffer = bytes | np.ndarray  # an array is 1-D, uint8, C-contiguous
BLOCK = 1 << 18  # bytes copied at a time for a search: a quarter of a megabyte stays in cache


def read_file(path: Path) -> np.ndarray:
    """All of the file's bytes, as ``path.read_bytes()`` reads them (to the end of the file,
    whatever its size said: a file still growing, one cut short while read, a pipe)."""
    with path.open("rb", buffering=0) as handle:
        size = os.fstat(handle.fileno()).st_size
        buffer = np.empty(size, dtype=np.uint8)
        view = buffer.data
        got = 0
        while got < size:
            count = handle.readinto(view[got:])
            if not count:
                break  # cut short while read: what was there
            got += count
        rest = handle.read() if got == size else b""
    if rest:
        return np.concatenate([buffer, np.frombuffer(rest, dtype=np.uint8)])
    return buffer[:got]


def view(data: Buffer) -> memoryview:
    """The buffer's bytes as a ``memoryview`` (no copy)."""
    return memoryview(data) if isinstance(data, bytes) else data.data


def prefix(data: Buffer, size: int) -> bytes:
    """The first ``size`` bytes (fewer in a shorter file), as ``bytes``."""
    return data[:size] if isinstance(data, bytes) else bytes(data.data[:size])


def whole(data: Buffer) -> bytes:
    """The whole buffer as ``bytes`` (a copy of an array: for the rare paths only)."""
    return data if isinstance(data, bytes) else data.tobytes()


def find(data: Buffer, needle: bytes, start: int = 0) -> int:
    """``bytes.find`` of the buffer: the first position of ``needle`` from ``start``, or -1."""
    if isinstance(data, bytes):
        return data.find(needle, start)
    bytes_of = data.data
    overlap = len(needle) - 1  # a needle across two blocks is found in the first
    for begin in range(max(start, 0), len(data), BLOCK):
        found = bytes(bytes_of[begin : begin + BLOCK + overlap]).find(needle)
        if found >= 0:
            return begin + found
    return -1


def holds(data: Buffer, *needles: bytes) -> tuple[bool, ...]:
    """Whether the buffer holds each of ``needles`` (``needle in data``), in one pass."""
    if isinstance(data, bytes):
        return tuple(needle in data for needle in needles)
    bytes_of = data.data
    overlap = max((len(n) for n in needles), default=1) - 1
    found = [False] * len(needles)
    for begin in range(0, len(data), BLOCK):
        block = bytes(bytes_of[begin : begin + BLOCK + overlap])
        for index, needle in enumerate(needles):
            found[index] = found[index] or needle in block
        if all(found):
            break
    return tuple(found)
