"""The fast paths give what the careful paths give: the column-wise screen against checking every
row one by one, Arrow's CSV reader against the csv module, vectorised derived externalIds against
the one-row derivation."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path

import numpy as np
import pytest

from tasks.common.finance_files import table as table_module
from tasks.payment_requests import (
    CustomerDirectory,
    derive_external_id,
    parse_payment_request_file,
    read_payment_request_file,
)
from tasks.payment_requests import screen as screen_module
from tests.support.finance_files import BILLER, HEADER, TODAY, write_csv

PAY_BY = "30/12/2026"
PAST = (TODAY - timedelta(days=1)).strftime("%d/%m/%Y")
# Every kind of cell the screen decides on, good and bad, in many combinations.
CUSTOMERS = ["Acme Ltd", "cus_2", "XERO-C-17", "Twin Trading", "Nobody", "", "acme ltd"]
AMOUNTS = ["£1,234.50", "10", "0.5", "12.345", "-3", "0", "GBP 12", "1,23", "£99,999,999.99", ""]
DESCRIPTIONS = ["Fees", "", "x" * 4001, "=SUM(A1)", 'Say "hi"', "Back\\slash", "Café £"]
REFERENCES = ["", "R-1", "R-2", "@ref", "R-1"]
DATES = [PAY_BY, "", PAST, "12/31/2026", "2026-12-30", "1 Dec 2026"]
TAXES = ["", "20", "20%", "0.2", "101"]


def _rows(count: int) -> list[list[str]]:
    """Every other row takes only values that pass (varied), the rest any value at all."""
    rows = []
    for n in range(count):
        good = n % 2 == 0
        pick = (
            (lambda values, k: values[k % 3])
            if good
            else (lambda values, k: values[k % len(values)])
        )
        rows.append(
            [
                pick(CUSTOMERS, n),
                pick(AMOUNTS, n // 3),
                pick(DESCRIPTIONS, n // 5) if not good else ["Fees", "Café £", 'Say "hi"'][n % 3],
                REFERENCES[n % len(REFERENCES)] + str(n) if good else pick(REFERENCES, n),
                pick(DATES, n // 2) if not good else [PAY_BY, "", "2026-12-30"][n % 3],
                pick(TAXES, n // 7),
            ]
        )
    return rows


def test_the_screen_agrees_with_checking_every_row_alone(
    tmp_path: Path, customers: CustomerDirectory, monkeypatch: pytest.MonkeyPatch
) -> None:
    path = write_csv(tmp_path / "mixed.csv", _rows(700))

    screened = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    real_screen = screen_module.screen

    def everything_suspect(*args: object, **kwargs: object) -> screen_module.Screened:
        result = real_screen(*args, **kwargs)  # type: ignore[arg-type]
        everything = np.ones(len(result.suspect), dtype=bool)
        return screen_module.Screened(**{**result.__dict__, "suspect": everything})

    monkeypatch.setattr("tasks.payment_requests.validate.screen", everything_suspect)
    careful = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)

    assert len(screened.rows) > 50 and len(screened.problems) > 50  # both paths are exercised
    assert screened.rows == careful.rows
    assert screened.problems == careful.problems


def test_vectorised_derived_ids_are_the_one_row_derivation(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(tmp_path / "ids.csv", _rows(300))
    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)

    derived = [row for row in parsed.rows if row.external_id_derived]

    assert len(derived) > 20
    for row in derived:
        assert row.customer_id is not None
        assert row.external_id == derive_external_id(
            biller=BILLER,
            customer_id=row.customer_id,
            reference=row.reference.removeprefix("'") if row.reference else None,
            amount=row.amount,
            pay_by_date=row.pay_by_date,
            description=row.description.removeprefix("'"),
        )


@pytest.mark.parametrize(
    "rows",
    [
        [["Acme Ltd", "£1,234.50", "Fees", "R1", PAY_BY, "20"]] * 5,
        [["Acme Ltd", "10", "Fees", "R1", "", ""], ["", "", "", "", "", ""], ["Beta", "1", "x"]],
        [["Acme Ltd", "10", "Fees, with a comma", "R1", PAY_BY, ""]],
        [["Acme Ltd", "10", "Fees", "R1", PAY_BY, "", "stray"]],
    ],
    ids=["plain", "blank-and-short-rows", "quoted", "wider-than-header"],
)
def test_arrow_reads_a_file_as_the_csv_module_does(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, rows: list[list[str]]
) -> None:
    path = write_csv(tmp_path / "f.csv", rows, header=HEADER, delimiter=";")

    fast = read_payment_request_file(path)
    monkeypatch.setattr(table_module, "_arrow_table", lambda *args: None)
    careful = read_payment_request_file(path)

    assert fast.rows == careful.rows
    assert [row.line for row in fast.rows] == [row.line for row in careful.rows]
