"""Repeated keys across a file's rows (``tasks/payment_requests/repeats.py``): the shortcuts that
answer "none repeats" (keys in order, a distinct count) agree with counting every key."""

from __future__ import annotations

import pyarrow as pa
import pytest

from tasks.payment_requests.repeats import counted, duplicates


@pytest.mark.parametrize(
    "keys",
    [
        ["A-1", "A-2", "B-1", "B-2"],  # ascending
        ["Z", "Y", "X"],  # descending
        ["B-2", "A-1", "C-3"],  # no order: the distinct count decides
        ["A-1", None, "A-2"],  # empty cells are not keys
        ["only"],
        [],
    ],
)
def test_keys_that_are_each_there_once_are_not_counted(keys: list[str | None]) -> None:
    assert counted(pa.array(keys, pa.string())) is None


@pytest.mark.parametrize(
    ("keys", "repeated"),
    [
        (["A-1", "A-2", "A-2", "A-3"], {"A-2": [3, 4]}),  # in order but not strictly
        (["C", "B", "B", "A"], {"B": [3, 4]}),
        (["A-2", "A-1", "A-2"], {"A-2": [2, 4]}),
        (["A-1", None, "A-1"], {"A-1": [2, 4]}),
    ],
)
def test_a_repeated_key_is_found_with_its_lines(
    keys: list[str | None], repeated: dict[str, list[int]]
) -> None:
    values = pa.array(keys, pa.string())
    lines = pa.array(range(2, 2 + len(keys)), pa.int64())

    assert counted(values) is not None
    assert dict(duplicates(lines, values)) == repeated
