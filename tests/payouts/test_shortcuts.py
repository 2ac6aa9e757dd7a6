"""The shortcuts a year of items takes give what the general ways give: grouping by the payout
ids' runs (a report lists its items payout by payout), totals over slices, positions by
arithmetic, rows read by whole columns, the payment ids a report repeats reused to find a payment
paid out twice, a payment twice in one payout found among the repeated ids only, a sort skipped
for rows already in order, months summed by dicts. Each is checked where the shortcut applies
(items in payout order) and where it does not (interleaved, out of order, missing values)."""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pytest

from ledger._payout_blocks import encode_blocks
from tasks.payouts import PayoutReportRefused, read_payout_report
from tasks.payouts._balance import Balance
from tasks.payouts._check_items import _text_column
from tasks.payouts._items import (
    DATE,
    arrow_payout_codes,
    contiguous,
    ledger_items,
    payout_codes,
    payouts_of,
    positions_within,
)
from tasks.payouts._order import sort_stable
from tasks.payouts._profiles import SHIPPED, load_report_profile
from tasks.payouts._records import between, records
from tasks.payouts._runs import first_rows, row_ranges, rows_in
from tasks.payouts._scope import _distinct, paid_out_twice

GROUPED = ["a", "a", "b", "c", "c", "c", "d"]
INTERLEAVED = ["a", "b", "a", "c", "b", "c", "a"]
HEADER = (
    "Payout ID,Bank reference,Arrival date,Payout amount,Item type,Invoice number,"
    "Payment request number,Payment ID,Customer name,Item amount"
)


@pytest.mark.parametrize(
    "ids", [GROUPED, INTERLEAVED, ["x"], []], ids=["grouped", "mixed", "1", "0"]
)
def test_runs_find_each_payouts_first_row_and_rows(ids: list[str]) -> None:
    column = pd.Series(ids, dtype="str")
    expected_first = {value: ids.index(value) for value in ids}
    assert first_rows(column) == expected_first
    expected_rows = pd.Series(range(len(ids))).groupby(ids).indices if ids else {}
    found = {value: rows_in(ranges).tolist() for value, ranges in row_ranges(column).items()}
    assert found == {value: list(rows) for value, rows in expected_rows.items()}


@pytest.mark.parametrize("ids", [GROUPED, INTERLEAVED, ["x"]], ids=["grouped", "mixed", "1"])
def test_payout_codes_positions_and_totals_are_the_general_ones(ids: list[str]) -> None:
    codes, firsts = arrow_payout_codes(pa.array(ids))
    expected_codes, expected_firsts = payout_codes(pd.Series(ids, dtype="str"))
    assert codes.tolist() == expected_codes.tolist()
    assert firsts.tolist() == expected_firsts.tolist()
    assert contiguous(codes) == (ids != INTERLEAVED)
    cumcount = pd.Series(codes).groupby(codes).cumcount().tolist()
    assert positions_within(codes, firsts).tolist() == cumcount

    amounts = [500, -200, 300, 100, 100, -50, 70][: len(ids)]
    items = pd.DataFrame(
        {
            "line": np.arange(2, len(ids) + 2, dtype=np.int64),
            "payout_id": pd.array(ids, dtype="str"),
            "reference": pd.array([f"REF-{i}" for i in ids], dtype="str"),
            "arrival_date": pd.array([date(2027, 3, 1 + ord(i) % 5) for i in ids], dtype=DATE),
            "payout_amount": np.zeros(len(ids), dtype=np.int64),
            "amount": np.array(amounts, dtype=np.int64),
        }
    )
    totals = payouts_of(items, grouped=(codes, firsts))
    work = pd.DataFrame(
        {
            "gross": np.where(items["amount"] > 0, items["amount"], 0),
            "deductions": np.where(items["amount"] < 0, -items["amount"], 0),
            "items": 1,
            "first_line": items["line"],
        }
    )
    sums = work.groupby(ids, sort=False).agg(
        {"gross": "sum", "deductions": "sum", "items": "sum", "first_line": "min"}
    )
    for row in totals.to_dict("records"):
        expected = sums.loc[row["payout_id"]]
        assert [row[n] for n in sums.columns] == [int(expected[n]) for n in sums.columns]


def test_a_text_column_has_the_notes_on_their_lines_and_empty_elsewhere() -> None:
    column = _text_column(5, {3: "£5.00 owed — again", 0: "first"})
    assert list(column) == ["first", "", "", "£5.00 owed — again", ""]
    assert str(column.dtype) == "str"
    assert list(_text_column(2, {})) == ["", ""]


def test_rows_by_whole_columns_are_the_rows_to_dict_gives() -> None:
    frame = pd.DataFrame(
        {
            "text": pd.array(["a", None, "c"], dtype="str"),
            "day": pd.array([date(2027, 3, 1), None, date(2027, 3, 3)], dtype=DATE),
            "pennies": np.array([1, 2, 3], dtype=np.int64),
            "share": [0.5, float("nan"), 1.0],
            "flag": [True, False, True],
            "thing": pd.Series([date(2027, 1, 1), None, "x"], dtype=object),
        }
    )
    expected = frame.to_dict("records")
    found = records(frame)
    assert [list(map(repr, r.values())) for r in found] == [
        list(map(repr, r.values())) for r in expected
    ]
    assert records(frame, ["pennies"]) == [{"pennies": 1}, {"pennies": 2}, {"pennies": 3}]
    days = frame["day"].fillna(date(2027, 3, 2))
    assert between(days, date(2027, 3, 2), date(2027, 3, 3)).tolist() == [False, True, True]
    as_objects = pd.Series([date(2027, 3, 1), date(2027, 3, 2)], dtype=object)
    assert between(as_objects, date(2027, 3, 2), date(2027, 3, 9)).tolist() == [False, True]


def test_the_numbers_the_service_is_asked_for_are_the_distinct_named_ones() -> None:
    numbers = pd.Series(["INV-1", "", "PR-2", "INV-1", "PR-3"], dtype="str")
    requests = np.array([False, False, True, False, True])
    assert _distinct(numbers, ~requests) == {"INV-1"}
    assert _distinct(numbers, requests) == {"PR-2", "PR-3"}
    assert _distinct(numbers, np.ones(5, dtype=bool)) == {"INV-1", "PR-2", "PR-3"}


def _report(folder: Path, rows: list[str]) -> object:
    path = folder / "report.csv"
    path.write_text("\r\n".join([HEADER, *rows]) + "\r\n", encoding="utf-8")
    return read_payout_report(path, profile=load_report_profile(SHIPPED / "sandbox.yaml"))


def test_a_payment_paid_out_by_two_payouts_is_found_from_the_repeated_ids(tmp_path: Path) -> None:
    report = _report(
        tmp_path,
        [
            "po-1,REF-1,2027-03-01,10.00,PAYMENT,,PR-1,pay-1,A,10.00",
            "po-1,REF-1,2027-03-01,10.00,PAYMENT,,PR-2,pay-2,A,0.00",
            "po-2,REF-2,2027-03-02,-10.00,DEDUCTION,,PR-1,pay-1,A,-10.00",
            "po-3,REF-3,2027-03-03,5.00,PAYMENT,,PR-2,pay-2,A,5.00",
            "po-3,REF-3,2027-03-03,5.00,PAYMENT,,PR-4,pay-4,A,0.00",
        ],
    )
    repeated = report.repeated_payments  # type: ignore[attr-defined]
    assert repeated.ids == {"pay-1", "pay-2"}
    assert repeated.lines.tolist() == [0, 1, 2, 3]
    items = report.items  # type: ignore[attr-defined]
    expected = {"pay-2": ["po-1", "po-3"]}
    assert paid_out_twice(items) == expected
    assert paid_out_twice(items, among=repeated.ids) == expected
    assert paid_out_twice(items, among=repeated.ids, lines=repeated.lines) == expected
    assert paid_out_twice(items, among=frozenset()) == {}


@pytest.mark.parametrize("order", ["grouped", "interleaved"])
def test_the_items_kept_from_the_reports_columns_are_those_of_its_frame(
    tmp_path: Path, order: str
) -> None:
    """Keeping a report hands the ledger the Arrow columns its frame was built from: the same
    items, digested and encoded alike, as the frame converted back to Arrow."""
    rows = [
        "po-1,REF-1,2027-03-01,7.00,PAYMENT,INV-9,PR-1,pay-1,Oak Joinery,10.00",
        "po-1,REF-1,2027-03-01,7.00,DEDUCTION,,PR-7,pay-7,Café Ñ,-3.00",
        "po-2,REF-2,2027-03-02,5.00,PAYMENT,,PR-2,,A,5.00",
    ]
    if order == "interleaved":
        rows = [rows[0], rows[2], rows[1]]
    report = _report(tmp_path, rows)
    kept = report.ledger_items  # type: ignore[attr-defined]
    from_frame = ledger_items(report.items)  # type: ignore[attr-defined]
    assert kept is not None and kept.column_names == from_frame.column_names
    for name in kept.column_names:
        assert kept.column(name).to_pylist() == from_frame.column(name).to_pylist(), name
    found, expected = encode_blocks(kept), encode_blocks(from_frame)
    assert found.keys() == expected.keys()
    assert all(found[k] == expected[k] for k in expected)


@pytest.mark.parametrize("second", ["PAYMENT", "DEDUCTION"])
def test_a_payment_twice_in_one_payout_is_refused_only_with_the_same_kind(
    tmp_path: Path, second: str
) -> None:
    amount = "3.00" if second == "PAYMENT" else "-3.00"
    rows = [
        "po-1,REF-1,2027-03-01,6.00,PAYMENT,,PR-1,pay-1,A,3.00",
        "po-1,REF-1,2027-03-01,6.00,PAYMENT,,PR-2,pay-2,A,3.00",
        f"po-1,REF-1,2027-03-01,6.00,{second},,PR-1,pay-1,A,{amount}",
        "po-2,REF-2,2027-03-02,3.00,PAYMENT,,PR-3,pay-3,A,3.00",
    ]
    if second == "DEDUCTION":  # a payment and its deduction in one payout: read
        assert len(_report(tmp_path, rows).items) == 4  # type: ignore[attr-defined]
        return
    with pytest.raises(PayoutReportRefused) as refused:
        _report(tmp_path, rows)
    assert "appears twice in payout po-1" in str(refused.value)
    assert [p.line for p in refused.value.problems] == [4]


@pytest.mark.parametrize(
    "days",
    [[1, 1, 2, 3], [2, 1, 3, 3], [1, None, 2, 3]],
    ids=["in order", "out of order", "missing"],
)
def test_a_frame_sorted_only_when_out_of_order_is_the_sorted_frame(days: list[int | None]) -> None:
    frame = pd.DataFrame(
        {
            "day": pd.array([date(2027, 3, d) if d else None for d in days], dtype=DATE),
            "reference": pd.array(["B", "A", "C", "C"], dtype="str"),
            "line": np.array([4, 3, 2, 1], dtype=np.int64),
        }
    )
    expected = frame.sort_values(["day", "reference", "line"], kind="stable")
    found = sort_stable(frame, ["day", "reference", "line"])
    pd.testing.assert_frame_equal(found, expected)
    assert type(found.index) is type(expected.index)


def test_the_months_of_a_roll_up_are_the_days_grouped_by_month() -> None:
    days = [date(2027, 1, 30) + timedelta(days=n) for n in range(40)]
    moves = np.arange(40, dtype=np.int64)
    daily = pd.DataFrame(
        {
            "day": days,
            "collected": moves * 100,
            "deductions": moves,
            "paid_out": moves * 50,
            "in_transit": 7 + np.cumsum(moves * 49),
        }
    )
    money = Balance(days[0], days[-1], 7, daily, 0, 0)
    frame = daily.assign(month=[d.strftime("%Y-%m") for d in days])
    sums = frame.groupby("month", sort=True)[["collected", "deductions", "paid_out"]].sum()
    closing = frame.groupby("month", sort=True)["in_transit"].last()
    net = sums["collected"] - sums["deductions"] - sums["paid_out"]
    expected = sums.assign(opening=closing - net, in_transit=closing).reset_index()
    columns = ["month", "opening", "collected", "deductions", "paid_out", "in_transit"]
    pd.testing.assert_frame_equal(money.monthly(), expected[columns])
    mine = money.monthly()
    mine["opening"] = 0  # a caller's change stays its own
    pd.testing.assert_frame_equal(money.monthly(), expected[columns])
