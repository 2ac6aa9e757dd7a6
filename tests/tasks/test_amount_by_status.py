"""The report's totals per outcome (``amount_by_status``): summed exactly per status, whatever
the number of statuses, with a status missing on a row counted as Arrow's grouping did."""

from __future__ import annotations

import pyarrow as pa

from tasks.payment_requests.reports import _pennies_by


def test_each_status_sums_its_own_pennies_exactly() -> None:
    big = 2**53 + 1  # past float64's exact integers: a float sum would round it
    status = pa.array(["CREATED", "REJECTED", "CREATED", "UNCHANGED", "CREATED"], pa.string())
    pennies = pa.array([big, 5, 1, 7, 2], pa.int64())

    assert _pennies_by(status, pennies) == {"CREATED": big + 3, "REJECTED": 5, "UNCHANGED": 7}


def test_one_status_and_none_at_all() -> None:
    assert _pennies_by(pa.array(["WOULD_IMPORT"] * 3), pa.array([1, 2, 3], pa.int64())) == {
        "WOULD_IMPORT": 6
    }
    assert _pennies_by(pa.array([], pa.string()), pa.array([], pa.int64())) == {}


def test_a_row_without_a_status_is_grouped_as_before() -> None:
    status = pa.array(["CREATED", None, "CREATED"], pa.string())

    assert _pennies_by(status, pa.array([1, 2, 3], pa.int64())) == {"CREATED": 4, "None": 2}
