"""The shortcuts of reading a report's cells give what the general ways give: a column whose
values come in runs (a payout's date and amount on each of its lines, the line types) is
parsed once per run, found by comparing neighbours; any other column once per distinct value
(a dictionary encode) or whole. Each is checked against the general way on columns in runs,
interleaved, of one value, and with cells that are not money or dates."""

from __future__ import annotations

import random
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tasks.payouts import _values
from tasks.payouts._text import empty_cells
from tasks.payouts._values import (
    _plain_by_pattern,
    dates_column,
    distinct,
    pennies_column,
    plain_pennies,
    runs,
    signed_pennies,
)

IN_RUNS = ["10.00"] * 6 + ["£1,234.50"] * 5 + ["12.345"] * 4 + ["-3.10"] * 5 + ["10.00"] * 4
INTERLEAVED = ["10.00", "(2.50)", "x", "10.00", "-1.00", "2.5", "", "10.00", "£3", "7.77"]
DAYS_IN_RUNS = ["2027-03-01"] * 5 + ["31/02/2027"] * 5 + ["2 Mar 2027"] * 5 + ["2027-03-01"] * 5
COLUMNS = {
    "runs": IN_RUNS,
    "interleaved": INTERLEAVED,
    "few-distinct": (INTERLEAVED[:3] * 10)[:25],
    "one": ["4.00"] * 9,
    "single": ["1.00"],
    "none": [],
}


def _general(values: list[str], parse: Callable[[str], object]) -> list[object]:
    found: list[object] = []
    for text in values:
        try:
            found.append(parse(text))
        except ValueError as exc:
            found.append(str(exc))
    return found


@pytest.mark.parametrize("name", list(COLUMNS))
def test_distinct_values_parse_as_each_cell_parses(name: str) -> None:
    values = COLUMNS[name]
    parsed, indices = distinct(pa.array(values, pa.string()), signed_pennies)
    by_row = [parsed[i] for i in indices]
    assert [v if isinstance(v, int) else str(v) for v in by_row] == _general(values, signed_pennies)
    assert (runs(pa.array(values, pa.string())) is not None) == (name in ("runs", "one"))


@pytest.mark.parametrize("name", list(COLUMNS))
def test_pennies_of_a_column_are_each_cells_pennies(name: str) -> None:
    """Each cell's pennies, which are bad and why (in row order), whether the column is parsed
    by runs, by distinct values or whole, as the whole column parsed cell by cell."""
    values = COLUMNS[name]
    amounts, bad, why = pennies_column(pa.array(values, pa.string()))
    expected = _general(values, signed_pennies)
    assert [None if b else int(a) for a, b in zip(amounts, bad, strict=True)] == [
        e if isinstance(e, int) else None for e in expected
    ]
    assert why == [e for e in expected if isinstance(e, str)]
    whole = _values._pennies_of(pa.array(values, pa.string()))  # no shortcut: every cell
    assert amounts.tolist() == whole[0].tolist() and bad.tolist() == whole[1].tolist()
    assert why == whole[2]


@pytest.mark.parametrize("values", [DAYS_IN_RUNS, DAYS_IN_RUNS[::3], DAYS_IN_RUNS[:1], []])
def test_dates_of_a_column_are_each_cells_date(values: list[str]) -> None:
    column, bad, why = dates_column(pa.array(values, pa.string()))
    general = _general(values, _values.parse_date)
    days = column.cast(pa.int32()).to_pylist()  # a bad cell's day is no date Python has
    good = [None if b else column[i].as_py() for i, b in enumerate(bad)]
    assert len(days) == len(values) and good == [None if isinstance(g, str) else g for g in general]
    assert why == [g for g in general if isinstance(g, str)]


def _amount_like(rng: random.Random) -> str:
    if rng.random() < 0.5:  # any mix of the characters money is written with, and others
        return "".join(rng.choice("0123456789.-+ ,£é\u00a0x") for _ in range(rng.randint(0, 19)))
    whole = rng.randint(0, 10 ** rng.randint(0, 15))
    return f"{rng.choice(['', '-', '+'])}{whole}.{rng.randint(0, 99):0{rng.choice([1, 2, 2, 3])}d}"


EDGE_AMOUNTS = ["1.00", "-1.00", ".50", "-.50", "0.5", "00.00", "-0.00", "--1.00", "1.000"]
EDGE_AMOUNTS += ["1..00", "1.0a", "a1.00", "1234567890123.45", "12345678901234.56", "٣.00"]


def test_plain_amounts_read_from_the_bytes_are_the_patterns() -> None:
    """The values :func:`plain_pennies` takes and their pennies are the pattern's (``_PLAIN``,
    then a cast of the digits), on any text, in a slice of a column as in a whole one."""
    rng = random.Random(20270301)
    values = pa.array(EDGE_AMOUNTS + [_amount_like(rng) for _ in range(20_000)], pa.string())
    for part in (values, values.slice(3, 500), values.slice(10_000), values.slice(0, 0)):
        plain, pennies = plain_pennies(part)
        expected_plain, expected_pennies = _plain_by_pattern(part)
        assert plain.tolist() == expected_plain.tolist()
        assert pennies.tolist() == expected_pennies.tolist()
    assert 2_000 < int(plain_pennies(values)[0].sum()) < 18_000  # both kinds were tried


@pytest.mark.parametrize(
    "values",
    [
        pa.array(["", "a", "", " ", "é", ""], pa.string()),
        pa.array(["", "a", "", " ", "é", ""], pa.string()).slice(1, 4),
        pa.array(["", None, "b"], pa.string()),  # nulls: the comparison's answer (not empty)
        pa.array(["", "c"], pa.large_string()),
        pa.array([], pa.string()),
    ],
    ids=["plain", "slice", "nulls", "large", "none"],
)
def test_empty_cells_read_from_the_offsets_are_the_comparisons(values: pa.Array) -> None:
    expected = pc.fill_null(pc.equal(values, ""), False).to_pylist()
    assert empty_cells(values).tolist() == expected
