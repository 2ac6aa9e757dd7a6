"""Money cells read by the fast path (the point third from the end, taken out of Arrow's buffers)
read exactly as the careful path reads them, and a cell with a second point is never money."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa

from tasks.bank_payments._kernels import _careful, _shaped, parse_money


def test_a_second_point_is_not_read_as_pennies() -> None:
    money = parse_money(pa.array(["12.3.", "12..5", "1.00"]))
    assert money.readable.tolist() == [False, False, True]
    assert money.pennies[2] == 100


def test_two_signs_are_not_money() -> None:
    # "+-1.00" lost its plus and was read as -£1.00; every mixed or doubled sign is refused.
    cells = ["+-1.00", "+£-1.00", "-+1.00", "++1.00", "--1.00", "+(1.00)", "+\u22121.00"]
    cells += ["+1.00", "+£1.00", "£+1.00", "-£1.00", "(1.00)"]
    money = parse_money(pa.array(cells, pa.string()))
    assert money.readable.tolist() == [False] * 7 + [True] * 5
    assert money.pennies[7:].tolist() == [100, 100, 100, -100, -100]


def test_a_unicode_minus_and_spaces_inside_are_read_as_people_mean_them() -> None:
    cells = ["\u22121.00", "1\u00a0000.00", "1\u2009000.00", "-1\u202f000.00", "(£1 000.00)"]
    money = parse_money(pa.array(cells, pa.string()))
    assert money.readable.all()
    assert money.pennies.tolist() == [-100, 100_000, 100_000, -100_000, -100_000]


def test_the_fast_path_reads_as_the_careful_path() -> None:
    rng = random.Random(3)
    cells = [
        rng.choice(["", "-", ""]) + str(rng.randint(0, 10**rng.randint(1, 12))) + "."
        + f"{rng.randint(0, 99):02d}"
        for _ in range(50_000)
    ] + ["", "0.00", "-0.00", "9999999999999.99"]  # fmt: skip
    values = pa.array(cells, pa.string())
    for column in (values, values.slice(7), values.slice(3, 20_000)):
        assert _shaped(column) is not None  # the fast path reads it
        fast = parse_money(column)
        careful = _careful(column, ".", ",")
        assert np.array_equal(fast.pennies, careful.pennies)
        assert np.array_equal(fast.readable, careful.readable)
        assert np.array_equal(fast.empty, careful.empty)
        assert np.array_equal(fast.negative_zero, careful.negative_zero)


def test_more_whole_digits_than_the_careful_path_takes_are_not_read_fast() -> None:
    # The careful path reads at most 13 digits before the point; Arrow's integer cast takes up
    # to 19, so the fast path read these (the last as int64's least value).
    cells = ["1234567890123.45", "-1234567890123.45", "12345678901234.56", "-12345678901234.56"]
    cells += ["92233720368547758.07", "-92233720368547758.08"]
    values = pa.array(cells, pa.string())
    fast, careful = parse_money(values), _careful(values, ".", ",")
    assert careful.readable.tolist() == [True, True, False, False, False, False]
    assert fast.readable.tolist() == careful.readable.tolist()
    assert np.array_equal(fast.pennies[:2], careful.pennies[:2])


def test_a_column_without_empty_cells_reads_as_the_careful_path() -> None:
    """No empty cell (nearly every column): the fast path makes no mask of them, and asks which
    cells are four characters or zero only where some may be."""
    rng = random.Random(4)
    edges = ["0.00", "-0.00", "5.00", "-5.00", "-1234567890123.45", "1234567890123.45"]
    cells = [
        rng.choice(["", "-"]) + str(rng.randint(0, 10 ** rng.randint(1, 9))) + f".{n % 100:02d}"
        for n in range(20_000)
    ]
    for extra in ([], edges, ["-.50"], ["+.50"], ["12345678901234.56"], ["1.5"], ["x.00"]):
        values = pa.array(cells + extra, pa.string())
        fast, careful = parse_money(values), _careful(values, ".", ",")
        assert np.array_equal(fast.pennies, careful.pennies)
        assert np.array_equal(fast.readable, careful.readable)
        assert np.array_equal(fast.empty, careful.empty)
        assert np.array_equal(fast.negative_zero, careful.negative_zero)
    assert _shaped(pa.array(cells + edges, pa.string())) is not None
    assert _shaped(pa.array(cells + ["-.50"], pa.string())) is None
