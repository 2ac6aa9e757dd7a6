"""Keys that repeat across a file's rows, and Arrow columns read back as Python values: the
helpers of the file-wide checks (``validate.py``), kept apart so each stays readable.

Everything here works on whole columns; Python values are made only for the few rows a check
reports (the usual large file has no repeated key, and is answered without a Python loop).
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterator
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc

PYTHON_BATCH = 100_000


def others(lines: list[int], line: int) -> str:
    """The other lines a key is on, as a reason names them (the first ten, then how many more)."""
    rest = [str(n) for n in lines if n != line]
    return ", ".join(rest[:10]) + (f" and {len(rest) - 10} more" if len(rest) > 10 else "")


def python_values(values: pa.Array | pa.ChunkedArray) -> Iterator[str]:
    """The values as Python strings, a batch at a time and only as far as they are read: a
    lookup in a ledger that knows nothing of the biller reads none of a million keys."""
    for start in range(0, len(values), PYTHON_BATCH):
        yield from values.slice(start, PYTHON_BATCH).to_pylist()


def counted(keys: pa.Array) -> pa.StructArray | None:
    """``value_counts`` of the keys that are there, or None when each is there once (the usual
    large file). Polars' distinct count tells that case apart in a fifth of the CPU of counting
    every key (a million references: 0.04 s against 0.2 s), so only a file with a repeated key
    pays for the counts."""
    import polars as pl  # loaded here, not at the top: commands that check no file skip it

    present = pc.drop_null(keys)
    if _strictly_ordered(present):
        return None
    distinct = pl.from_arrow(present, rechunk=False)
    assert isinstance(distinct, pl.Series)
    if distinct.n_unique() == len(present):
        return None
    return pc.value_counts(present)


def _strictly_ordered(keys: pa.Array) -> bool:
    """Whether each key is above the one before it, or each below: then none repeats. Files
    exported from accounting systems usually list their references in order, and two
    comparisons of neighbours cost a tenth of a distinct count."""
    if len(keys) < 2:
        return True
    before, after = keys.slice(0, len(keys) - 1), keys.slice(1)
    return bool(pc.all(pc.less(before, after)).as_py() or pc.all(pc.greater(before, after)).as_py())


def duplicates(lines: pa.Array, keys: pa.Array) -> dict[str, list[int]]:
    """The keys on more than one line, with those lines (in order)."""
    return repeated_lines(lines, keys, counted(keys))


def repeated_lines(
    lines: pa.Array, keys: pa.Array, counts: pa.StructArray | None
) -> dict[str, list[int]]:
    """:func:`duplicates` where the caller has :func:`counted` the keys already."""
    found: dict[str, list[int]] = defaultdict(list)
    if counts is None:  # every key once
        return found
    repeated = pc.filter(counts.field("values"), pc.greater(counts.field("counts"), 1))
    if not len(repeated):
        return found
    mask = pc.fill_null(pc.is_in(keys, value_set=repeated), False)
    for line, key in sorted(where(mask, lines, keys)):
        found[key].append(line)
    return found


def column(good: pa.Table, name: str) -> pa.Array:
    """One column of a table as a single array."""
    return good.column(name).combine_chunks()


def where(mask: pa.Array, *columns: pa.Array) -> list[tuple[Any, ...]]:
    """The values of ``columns`` on the rows ``mask`` selects, as Python tuples."""
    picked = [pc.filter(column, mask).to_pylist() for column in columns]
    return list(zip(*picked, strict=True))
