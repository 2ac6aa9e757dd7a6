"""The screen's amount fast path (every cell ``£1234.50`` or ``1234.50``, read on Arrow's
buffers) gives the pennies the general path (regex and decimal cast) gives, and hands any other
column to the general path."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from tasks.payment_requests.rowcheck import ImportRules
from tasks.payment_requests.screen import _amounts, _plain_pennies, _pounds_and_pence

FAST = ["£10.00", "10.00", "0.01", "£0.00", "007.50", "£123456789012.45", "1234567890123.45"]
# Cells outside the fast shape: each alone sends its whole column to the general path.
OTHER = [
    "££10.00",  # two pound signs
    "£.50",  # no digit before the point
    ".50",
    "10.5",  # one decimal
    "10",  # none
    "1,234.50",  # thousands marks
    "-10.00",
    "+10.00",
    "10.0a",
    "1a.00",
    "10.00.00",
    "£1234567890123.00",  # 17 characters
    "12345678901234.00",
    "\uff11\uff10.00",  # full-width digits: not ASCII digits
    "1\u00a30.00",  # a pound sign inside
    "",
    "$10.00",
    "10 .00",
]


def _general(cells: list[str]) -> tuple[list[int], list[bool]]:
    pennies, plain = _plain_pennies(pa.array(cells, pa.string()))
    return pennies.to_pylist(), plain.to_pylist()


@pytest.mark.parametrize("cell", FAST)
def test_each_fast_cell_reads_as_the_general_path_reads_it(cell: str) -> None:
    fast = _pounds_and_pence(pa.array([cell], pa.string()))

    assert fast is not None
    assert _general([cell]) == (fast.to_pylist(), [True])


@pytest.mark.parametrize("cell", OTHER)
def test_a_column_with_another_shape_goes_to_the_general_path(cell: str) -> None:
    assert _pounds_and_pence(pa.array([*FAST, cell], pa.string())) is None
    assert _pounds_and_pence(pa.array([cell, *FAST], pa.string())) is None


def test_a_large_random_fast_column_and_its_verdicts_match_the_general_path() -> None:
    rng = random.Random(7)
    cells = []
    for _ in range(20_000):
        pound = rng.choice(["£", ""])  # a character of the 16 the shape may have
        whole = rng.randrange(10 ** rng.randint(1, 13 - len(pound)))
        cells.append(f"{pound}{whole}.{rng.randrange(100):02d}")
    values = pa.array(cells, pa.string())
    rules = ImportRules()
    fast = _pounds_and_pence(values)

    assert fast is not None
    pennies, plain = _general(cells)
    assert fast.to_pylist() == pennies and all(plain)
    fast_pennies, fast_bad = _amounts(values, rules)
    ceiling = int(rules.max_row_amount * 100)
    assert list(fast_bad) == [not 0 < p <= ceiling for p in pennies]
    assert fast_pennies.to_pylist() == pennies


def test_a_sliced_column_is_read_from_its_own_cells() -> None:
    values = pa.array(["x", "£1.00", "2.50", "y"], pa.string()).slice(1, 2)

    fast = _pounds_and_pence(values)

    assert fast is not None and fast.to_pylist() == [100, 250]
