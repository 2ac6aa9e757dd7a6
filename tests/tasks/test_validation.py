"""Row checks, file checks and derived externalIds, on real files."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from tasks.payment_request_files import (
    CustomerDirectory,
    CustomerRef,
    ParsedFile,
    RowProblem,
    derive_external_id,
    parse_payment_request_file,
)
from tests.tasks.conftest import BILLER, TODAY, write_csv, write_xlsx

PAY_BY = "30/12/2026"


def parse(
    tmp_path: Path,
    customers: CustomerDirectory,
    rows: list[list[str]],
    *,
    header: list[str] | None = None,
    known: dict[str, str] | None = None,
) -> ParsedFile:
    kwargs = {"header": header} if header else {}
    path = write_csv(tmp_path / "in.csv", rows, **kwargs)  # type: ignore[arg-type]
    return parse_payment_request_file(
        path,
        customers=customers,
        today=TODAY,
        biller=BILLER,
        already_imported_references=known or {},
    )


def only_problem(parsed: ParsedFile) -> RowProblem:
    assert len(parsed.problems) == 1, parsed.problems
    return parsed.problems[0]


def test_a_clean_row_becomes_a_payment_request_row(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    parsed = parse(tmp_path, customers, [["Acme Ltd", "£1,234.50", "June", "R1", PAY_BY, "20%"]])

    assert parsed.problems == [] and parsed.total_rows == 1 and parsed.bad_lines == set()
    row = parsed.rows[0]
    assert row.line == 2
    assert row.customer_ref == CustomerRef("name", "Acme Ltd")
    assert row.customer_id == "cus_1"
    assert row.amount == Decimal("1234.50")
    assert (row.description, row.reference) == ("June", "R1")
    assert row.pay_by_date == date(2026, 12, 30)
    assert row.tax_rate == Decimal("20")
    assert row.external_id_derived and row.external_id.startswith("bo-")
    assert len(row.external_id) == 27
    assert parsed.encoding == "utf-8" and parsed.sheet is None and len(parsed.sha256) == 64


@pytest.mark.parametrize(
    ("header", "value", "kind"),
    [
        ("Customer", "cus_2", "id"),
        ("Customer", "XERO-C-18", "external_id"),
        ("Customer", "Beta & Sons", "name"),
        ("Customer ID", "cus_2", "id"),
        ("Customer ref", "XERO-C-18", "external_id"),
        ("Customer name", "Beta & Sons", "name"),
    ],
)
def test_customer_by_id_external_id_or_exact_name(
    tmp_path: Path, customers: CustomerDirectory, header: str, value: str, kind: str
) -> None:
    parsed = parse(
        tmp_path, customers, [[value, "10", "x"]], header=[header, "Amount", "Description"]
    )

    assert parsed.problems == []
    assert parsed.rows[0].customer_id == "cus_2"
    assert parsed.rows[0].customer_ref == CustomerRef(kind, value)  # type: ignore[arg-type]


def test_unknown_customer(tmp_path: Path, customers: CustomerDirectory) -> None:
    parsed = parse(tmp_path, customers, [["Nobody Ltd", "10", "x", "R1", PAY_BY, ""]])

    problem = only_problem(parsed)
    assert (problem.line, problem.column, problem.value) == (2, "Customer", "Nobody Ltd")
    assert problem.reason.startswith("unknown customer")
    assert parsed.rows == [] and parsed.bad_lines == {2}


def test_a_name_differing_in_case_is_unknown_with_a_hint(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    parsed = parse(tmp_path, customers, [["acme LTD", "10", "x", "R1", PAY_BY, ""]])
    assert "did you mean 'Acme Ltd'" in only_problem(parsed).reason


def test_a_name_two_customers_share_is_ambiguous(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    parsed = parse(tmp_path, customers, [["Twin Trading", "10", "x", "R1", PAY_BY, ""]])
    reason = only_problem(parsed).reason
    assert "ambiguous customer: 2 customers" in reason and "id or externalId" in reason


def test_a_missing_customer_cell(tmp_path: Path, customers: CustomerDirectory) -> None:
    parsed = parse(tmp_path, customers, [["", "10", "x", "R1", PAY_BY, ""]])
    assert only_problem(parsed).reason == "customer is required"


def test_customer_columns_that_disagree(tmp_path: Path, customers: CustomerDirectory) -> None:
    parsed = parse(
        tmp_path,
        customers,
        [["cus_1", "Beta & Sons", "10", "x"]],
        header=["Customer ID", "Customer name", "Amount", "Description"],
    )
    assert (
        "'Customer ID' and 'Customer name' name different customers" in only_problem(parsed).reason
    )


@pytest.mark.parametrize(
    ("amount", "reason"),
    [
        ("-3", "positive"),
        ("1.234", "more than 2 decimal places"),
        ("", "amount is required"),
        ("ten", "not a number"),
    ],
)
def test_bad_amounts(
    tmp_path: Path, customers: CustomerDirectory, amount: str, reason: str
) -> None:
    problem = only_problem(
        parse(tmp_path, customers, [["Acme Ltd", amount, "x", "R1", PAY_BY, ""]])
    )
    assert (problem.column, problem.value) == ("Amount", amount)
    assert reason in problem.reason


def test_pay_by_in_the_past_in_london(tmp_path: Path, customers: CustomerDirectory) -> None:
    yesterday = (TODAY - timedelta(days=1)).strftime("%d/%m/%Y")
    today = TODAY.strftime("%d/%m/%Y")
    parsed = parse(
        tmp_path,
        customers,
        [
            ["Acme Ltd", "10", "x", "R1", yesterday, ""],
            ["Acme Ltd", "10", "x", "R2", today, ""],
        ],
    )

    problem = only_problem(parsed)
    assert (problem.line, problem.column, problem.value) == (2, "Pay by", yesterday)
    assert "is in the past (today is 22/11/2026 in London)" in problem.reason
    assert parsed.rows[0].pay_by_date == TODAY


def test_an_unparseable_date(tmp_path: Path, customers: CustomerDirectory) -> None:
    parsed = parse(tmp_path, customers, [["Acme Ltd", "10", "x", "R1", "12/31/2026", ""]])
    assert "month-first US dates" in only_problem(parsed).reason


def test_bad_tax_rate_and_currency(tmp_path: Path, customers: CustomerDirectory) -> None:
    parsed = parse(
        tmp_path,
        customers,
        [["Acme Ltd", "10", "x", "0.2", "EUR"]],
        header=["Customer", "Amount", "Description", "VAT", "Currency"],
    )
    assert [(p.column, p.value) for p in parsed.problems] == [("VAT", "0.2"), ("Currency", "EUR")]


def test_description_is_required_and_every_problem_of_a_row_is_reported(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    parsed = parse(tmp_path, customers, [["Nobody", "-1", "", "R1", "01/01/2020", "500"]])
    assert [p.column for p in parsed.problems] == [
        "Customer",
        "Amount",
        "Description",
        "Pay by",
        "Tax rate",
    ]
    assert all(p.line == 2 for p in parsed.problems)


def test_a_reference_used_twice_fails_both_rows(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    parsed = parse(
        tmp_path,
        customers,
        [
            ["Acme Ltd", "10", "a", "R1", PAY_BY, ""],
            ["Acme Ltd", "11", "b", "DUP", PAY_BY, ""],
            ["Beta & Sons", "12", "c", "DUP", PAY_BY, ""],
        ],
    )

    assert [(p.line, p.column, p.value) for p in parsed.problems] == [
        (3, "Reference", "DUP"),
        (4, "Reference", "DUP"),
    ]
    assert parsed.problems[0].reason == "duplicate reference: also on line 4"
    assert [row.line for row in parsed.rows] == [2]


def test_a_reference_imported_earlier_fails_unless_it_is_the_same_request(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    rows = [
        ["Acme Ltd", "10", "a", "OLD-1", PAY_BY, ""],
        ["Acme Ltd", "10", "b", "OLD-2", PAY_BY, ""],
    ]
    first = parse(tmp_path, customers, rows)
    same = first.rows[1].external_id

    parsed = parse(
        tmp_path,
        customers,
        rows,
        known={"OLD-1": "imported on 2026-11-01 by run r-9", "OLD-2": same},
    )

    problem = only_problem(parsed)
    assert (problem.line, problem.value) == (2, "OLD-1")
    assert (
        problem.reason
        == "reference was already imported earlier (imported on 2026-11-01 by run r-9)"
    )
    assert [row.line for row in parsed.rows] == [3]


def test_given_external_ids_are_kept_and_duplicates_fail_both(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    header = ["External ID", "Customer", "Amount", "Description"]
    parsed = parse(
        tmp_path,
        customers,
        [
            ["INV-1", "Acme Ltd", "10", "a"],
            ["INV-2", "Acme Ltd", "10", "b"],
            ["INV-2", "Acme Ltd", "11", "c"],
        ],
        header=header,
    )

    assert [(p.line, p.column) for p in parsed.problems] == [(3, "External ID"), (4, "External ID")]
    assert parsed.problems[0].reason == "duplicate externalId: also on line 4"
    assert parsed.rows[0].external_id == "INV-1" and not parsed.rows[0].external_id_derived


def test_identical_rows_without_external_id_are_reported_as_duplicates(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    row = ["Acme Ltd", "10", "a", "", PAY_BY, ""]
    parsed = parse(tmp_path, customers, [row, row])

    assert [(p.line, p.column) for p in parsed.problems] == [
        (2, "externalId (derived)"),
        (3, "externalId (derived)"),
    ]
    assert "a duplicated row?" in parsed.problems[0].reason


def test_derived_external_ids_are_deterministic_and_follow_the_business_fields(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    rows = [
        ["Acme Ltd", "10", "a", "R1", PAY_BY, ""],
        ["XERO-C-17", "10.00", "a", "R1", "2026-12-30", "20"],
    ]
    first = parse(tmp_path, customers, [rows[0]]).rows[0]
    # The same payment request written differently (by externalId, "10.00", ISO date, a tax rate).
    second = parse(tmp_path, customers, [rows[1]]).rows[0]
    assert first.external_id == second.external_id
    assert first.external_id == derive_external_id(
        biller=BILLER,
        customer_id="cus_1",
        reference="R1",
        amount=Decimal("10"),
        pay_by_date=date(2026, 12, 30),
        description="a",
    )
    changed = derive_external_id(
        biller=BILLER,
        customer_id="cus_1",
        reference="R1",
        amount=Decimal("10.01"),
        pay_by_date=date(2026, 12, 30),
        description="a",
    )
    other_biller = derive_external_id(
        biller="biller-2",
        customer_id="cus_1",
        reference="R1",
        amount=Decimal("10"),
        pay_by_date=date(2026, 12, 30),
        description="a",
    )
    assert len({first.external_id, changed, other_biller}) == 3


def test_a_row_wider_than_its_header(tmp_path: Path, customers: CustomerDirectory) -> None:
    path = tmp_path / "wide.csv"
    path.write_text("Customer,Amount,Description\r\nAcme Ltd,1,234.50,June\r\n", encoding="utf-8")

    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)

    problem = only_problem(parsed)
    assert (problem.column, problem.value) == ("column 4", "June")
    assert "4 cells but the header has only 3 columns" in problem.reason


def test_too_long_fields(tmp_path: Path, customers: CustomerDirectory) -> None:
    parsed = parse(tmp_path, customers, [["Acme Ltd", "1", "d" * 4001, "r" * 256, "", ""]])
    assert [(p.column, p.reason) for p in parsed.problems] == [
        ("Description", "longer than 4000 characters (4001)"),
        ("Reference", "longer than 255 characters (256)"),
    ]


def test_an_xlsx_file_validates_like_a_csv(tmp_path: Path, customers: CustomerDirectory) -> None:
    path = write_xlsx(
        tmp_path / "june.xlsx",
        [
            ["Acme Ltd", 120.5, "June", "R1", date(2026, 12, 30), 0.2],
            ["Acme Ltd", 1.234, "June", "R2", date(2026, 1, 1), None],
        ],
        formats={5: "0%"},
    )

    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)

    assert parsed.rows[0].amount == Decimal("120.50") and parsed.rows[0].tax_rate == Decimal("20")
    assert [(p.line, p.column) for p in parsed.problems] == [(3, "Amount"), (3, "Pay by")]
    assert parsed.sheet == "Payment requests" and parsed.encoding == "xlsx"
