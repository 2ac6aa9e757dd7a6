"""The reconciliation's fast paths against the general paths they stand for.

Each shortcut (``_records``' reads by Arrow and numpy, the document look-up by kind, the paid
statuses looked at only where nothing is paid, the payment lines looked for among the report's
repeated lines, the period's rows chosen once, the CSV cells passed as they are) must give what
the plain pandas or Python it replaces gives, on the cases where they could part: missing
values, empty choices, counted-from-the-end rows, duplicates, other kinds.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from bench.payout_fixtures import write_year
from tasks.common.reports import _safe_cells, neutralise
from tasks.payouts import read_payout_report
from tasks.payouts._check_items import _naming, _paid_in_full, pair_deductions
from tasks.payouts._match import BankMatches
from tasks.payouts._reconcile import Reconciliation
from tasks.payouts._records import (
    column_values,
    listed,
    python_values,
    records,
    records_at,
    values_at,
)
from tasks.payouts._service import document_rows, pennies_at, texts_at
from tasks.payouts._text import is_in

DATE = pd.ArrowDtype(pa.date32())


def _frame() -> pd.DataFrame:
    days = [date(2025, 1, 1), None, date(1, 1, 1), date(9999, 12, 31), date(1969, 12, 31)]
    return pd.DataFrame(
        {
            "text": pd.Series(["a", None, "", "=1", "é"], dtype="str"),
            "full_text": pd.Series(["a", "b", "", "c", "d"], dtype="str"),
            "day": pd.array(days, dtype=DATE),
            "full_day": pd.array([date(2025, 1, n) for n in range(1, 6)], dtype=DATE),
            "whole": pd.array([1, None, 3, 4, 5], dtype=pd.ArrowDtype(pa.int64())),
            "number": np.arange(5, dtype=np.int64),
            "share": np.linspace(0, 1, 5),
            "flag": np.array([True, False, True, False, True]),
            "thing": pd.Series([np.int64(1), "x", None, 2.5, date(2025, 1, 1)], dtype=object),
            "moment": pd.array(
                [datetime(2025, 1, n, 12) for n in range(1, 6)],
                dtype=pd.ArrowDtype(pa.timestamp("us")),
            ),
        }
    )


ROWS = [[], [0], [4, 0, 2], [1, 1, 3], [-1, 0], list(range(5))]


@pytest.mark.parametrize("rows", ROWS)
def test_values_at_is_iloc_tolist(rows: list[int]) -> None:
    frame = _frame()
    for name in frame.columns:
        expected = frame[name].iloc[rows].tolist()
        for given in (rows, np.array(rows, dtype=np.int64)):
            found = values_at(frame[name], given)
            assert _same(found, expected), name


@pytest.mark.parametrize("rows", [r for r in ROWS if r])
def test_records_at_is_records_of_the_rows(rows: list[int]) -> None:
    frame = _frame()
    columns = list(frame.columns)
    expected = records(frame.iloc[rows], columns)
    found = records_at(frame, np.array(rows, dtype=np.int64), columns)
    assert len(found) == len(expected)
    for mine, theirs in zip(found, expected, strict=True):
        assert _same(list(mine.values()), list(theirs.values()))
    assert records_at(frame, [], columns) == records(frame.iloc[[]], columns) == []


def test_listed_and_column_values_read_days_as_arrow_does() -> None:
    frame = _frame()
    for name in frame.columns:
        assert _same(listed(frame[name]), frame[name].tolist()), name
    assert column_values(frame["day"]) == pa.array(frame["day"].array).to_pylist()
    assert column_values(frame["full_day"]) == pa.array(frame["full_day"].array).to_pylist()
    days = pa.array([date(2025, 3, 1), date(1, 1, 1), date(9999, 12, 31)], pa.date32())
    for values in (days, pa.chunked_array([days, days]), days.slice(1), days[:0]):
        assert python_values(values) == values.to_pylist()
    beyond = pa.array([2_932_897 + 1], pa.int32()).cast(pa.date32())  # after 9999-12-31
    with pytest.raises((ValueError, OverflowError)):
        python_values(beyond)


def _same(found: list[object], expected: list[object]) -> bool:
    """Equal lists, a missing value (NaN, None, NA) matching the same kind of missing value."""
    if len(found) != len(expected):
        return False
    for a, b in zip(found, expected, strict=True):
        if a is pd.NA or b is pd.NA or a is None or b is None:
            if a is not b:
                return False
        elif isinstance(a, float) and isinstance(b, float) and np.isnan(a) and np.isnan(b):
            continue
        elif type(a) is not type(b) or a != b:
            return False
    return True


def _old_look_up(documents: pd.DataFrame, requests: np.ndarray, numbers: pd.Series) -> np.ndarray:
    """The look-up by kind as it was: each kind's hits scattered into place by position."""
    at = np.full(len(numbers), -1, dtype=np.int64)
    if not len(documents) or not len(numbers):
        return at
    wanted_all = pa.array(numbers.array, pa.large_string())
    known_all = pa.array(documents["number"].array, pa.large_string())
    kinds = pa.array(documents["kind"].array, pa.large_string())
    for kind, chosen_mask in (("invoice", ~requests), ("payment_request", requests)):
        mine_mask = np.asarray(pc.fill_null(pc.equal(kinds, kind), False), dtype=bool)
        mine, chosen = np.flatnonzero(mine_mask), np.flatnonzero(chosen_mask)
        if len(mine) and len(chosen):
            wanted = wanted_all.filter(pa.array(chosen_mask))
            known = known_all.filter(pa.array(mine_mask))
            hits = pc.fill_null(pc.index_in(wanted, value_set=known), -1).to_numpy()
            at[chosen[hits >= 0]] = mine[hits[hits >= 0]]
    return at


def _documents(rng: np.random.Generator, count: int, kinds: list[str]) -> pd.DataFrame:
    numbers = [f"N-{n}" for n in rng.integers(0, count, count)]  # repeats among them
    return pd.DataFrame(
        {
            "kind": pd.Series(rng.choice(kinds, count), dtype="str"),
            "number": pd.Series(numbers, dtype="str"),
            "status": pd.Series(rng.choice(["PAID", "SETTLED", "OPEN", ""], count), dtype="str"),
            "total": rng.integers(0, 1000, count),
            "paid": rng.integers(0, 2, count) * rng.integers(0, 1000, count),
        }
    )


@pytest.mark.parametrize(
    ("kinds", "share"),
    [
        (["invoice", "payment_request"], 0.5),
        (["payment_request"], 1.0),
        (["invoice"], 0.0),
        (["payment_request", "credit_note"], 1.0),
        (["invoice", "payment_request"], 1.0),
    ],
)
def test_document_rows_is_the_look_up_by_kind(kinds: list[str], share: float) -> None:
    rng = np.random.default_rng(len(kinds) + int(share * 10))
    documents = _documents(rng, 400, kinds)
    numbers = pd.Series([f"N-{n}" for n in rng.integers(0, 500, 300)], dtype="str")
    requests = rng.random(300) < share
    expected = _old_look_up(documents, requests, numbers)
    assert np.array_equal(document_rows(documents, requests, numbers), expected)
    assert (expected >= 0).any()
    assert np.array_equal(document_rows(documents[:0], requests, numbers), np.full(300, -1))


def test_texts_and_pennies_at_are_the_takes_they_replace() -> None:
    rng = np.random.default_rng(7)
    documents = _documents(rng, 50, ["invoice"])
    at = rng.integers(-1, 50, 80)
    found = at >= 0
    for column in (documents["status"], documents["status"].astype(object), documents["total"]):
        values = pa.array(column.astype(str), pa.string())
        expected = pc.fill_null(values.take(pa.array(at, mask=at < 0)), "")
        old = pd.Series(expected.to_pandas(), dtype="str").reset_index(drop=True)
        mine = pd.Series(pd.array(texts_at(column, at), dtype="str"))
        pd.testing.assert_series_equal(mine, old)
    for name in ("total", "paid"):
        values = documents[name].to_numpy(dtype=np.int64)
        old_pennies = np.where(found, values[np.where(found, at, 0)], 0)
        assert np.array_equal(pennies_at(documents[name], at, found), old_pennies)
    assert np.array_equal(pennies_at(documents["total"][:0], at, found), np.zeros(80))


def test_paid_in_full_is_the_paid_status_rule_everywhere() -> None:
    rng = np.random.default_rng(3)
    statuses = pa.array(rng.choice(["PAID", "SETTLED", "OPEN", ""], 200), pa.large_string())
    total = rng.integers(1, 1000, 200)
    for paid in (rng.integers(0, 2, 200) * total, total.copy(), np.zeros(200, dtype=np.int64)):
        before = paid.copy()
        paid_status = pd.Series(statuses.to_pylist()).isin(["PAID", "SETTLED"]).to_numpy()
        expected = np.where((paid == 0) & paid_status, total, paid)
        assert np.array_equal(_paid_in_full(statuses, total, paid), expected)
        assert np.array_equal(paid, before)  # the caller's array is left alone


def test_payments_named_are_found_among_the_repeated_lines(tmp_path: Path) -> None:
    year = write_year(tmp_path, payouts=12, items=2400, bank_lines=200)
    report = read_payout_report(year.report)
    assert report.repeated_payments is not None
    history = report.items.reset_index(drop=True)
    lines = report.repeated_payments.lines
    named = set(history.loc[history["kind"] == "DEDUCTION", "payment_id"]) - {""}
    assert named, "the generated year deducts payments"
    for chosen in (named, set(), {"no-such-payment"}):
        expected = is_in(history["payment_id"], chosen)
        payment = (history["kind"] == "PAYMENT").to_numpy(dtype=bool)
        assert np.array_equal(
            payment & _naming(history["payment_id"], chosen, lines), payment & expected
        )
    pd.testing.assert_frame_equal(pair_deductions(history, lines), pair_deductions(history))
    assert pair_deductions(history)["paid_payout"].notna().all()


def _reconciliation() -> Reconciliation:
    payouts = pd.DataFrame(
        {
            "payout_id": ["a", "b", "c"],
            "arrival_date": pd.array(
                [date(2025, 1, 1), date(2025, 1, 5), date(2025, 2, 1)], dtype=DATE
            ),
        }
    )
    credits = pd.DataFrame({"key": ["k"], "booked_on": pd.array([date(2025, 1, 2)], dtype=DATE)})
    return Reconciliation(
        date(2025, 1, 1), date(2025, 1, 31), payouts, credits, pd.DataFrame(), BankMatches()
    )


def test_the_period_is_chosen_once_and_handed_out_as_a_copy() -> None:
    found = _reconciliation()
    expected = found.payouts[found.payouts["arrival_date"] <= date(2025, 1, 31)]
    first = found.in_period()
    pd.testing.assert_frame_equal(first, expected)
    first["payout_id"] = "changed"  # a caller's change to its copy
    first.loc[first.index[0], "arrival_date"] = date(2030, 1, 1)
    pd.testing.assert_frame_equal(found.in_period(), expected)
    pd.testing.assert_frame_equal(found.credits_in_period(), found.credits)
    found.last = date(2025, 2, 28)  # another period: chosen again
    assert found.in_period()["payout_id"].tolist() == ["a", "b", "c"]
    found.payouts = found.payouts.iloc[:1]  # other payouts: chosen again
    assert found.in_period()["payout_id"].tolist() == ["a"]


class _Text(str):
    """A str subclass: the CSV writer's fast path must leave it to ``neutralise``."""


def test_cells_pass_as_they_are_only_where_neutralise_keeps_them() -> None:
    cells: list[object] = [
        "",
        "plain",
        "=SUM(A1)",
        "+44 20",
        "-12.50",
        "-",
        "-\n",
        "@x",
        "\tx",
        "\rx",
        "'quoted",
        "£1.00",
        None,
        12,
        -3,
        1.5,
        np.int64(-4),
        date(2025, 1, 1),
        _Text("=evil"),
        _Text("fine"),
    ]
    found = _safe_cells(cells)
    assert found == [neutralise(cell) for cell in cells]
    assert all(type(cell) is str for cell in found)
