"""Row checks, file checks and derived externalIds, on real files."""

from __future__ import annotations

from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from ledger import PaymentRequestSeen
from tasks.payment_requests import (
    CustomerDirectory,
    CustomerRef,
    ImportRules,
    ParsedFile,
    RowProblem,
    derive_external_id,
    parse_payment_request_file,
)
from tasks.payment_requests.known import KnownPaymentRequests
from tests.support.finance_files import BILLER, TODAY, write_csv, write_xlsx

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
        path, customers=customers, today=TODAY, biller=BILLER, known=known_references(known or {})
    )


def seen(**fields: object) -> PaymentRequestSeen:
    """A payment request as the ledger's copy of the service holds it."""
    values: dict[str, object] = {
        "biller": BILLER,
        "payment_request_id": "pr-1",
        "number": "PR-1",
        "external_id": None,
        "reference": None,
        "customer_id": "cus_1",
        "description": None,
        "amount_pennies": 1000,
        "paid_pennies": 0,
        "pay_by_date": None,
        "status": "DRAFT",
        "source": "BULK_IMPORT",
        "last_updated": None,
    }
    values.update(fields)
    return PaymentRequestSeen(**values)  # type: ignore[arg-type]


def known_references(references: dict[str, str]) -> KnownPaymentRequests:
    """Payment requests carrying these references, each under the externalId given."""
    return KnownPaymentRequests(
        listed=[
            seen(payment_request_id=f"pr-{n}", reference=ref, external_id=ext)
            for n, (ref, ext) in enumerate(references.items())
        ]
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
        ("+-3.00", "more than one sign"),  # was charged as £3.00
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


def test_a_tax_rate_finer_than_the_service_takes_is_a_bad_row(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    # The service answers 422 for more than 4 decimal places; the file said nothing before.
    parsed = parse(
        tmp_path,
        customers,
        [["Acme Ltd", "10", "x", "17.50001"]],
        header=["Customer", "Amount", "Description", "VAT"],
    )
    problem = only_problem(parsed)
    assert (problem.column, problem.value) == ("VAT", "17.50001")
    assert "more than 4 decimal places" in problem.reason


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


def test_amounts_over_the_ceiling_per_row_are_refused_with_the_reason(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(
        tmp_path / "big.csv",
        [
            ["Acme Ltd", "99,999,999,999.99", "x", "R1", PAY_BY, ""],
            ["Acme Ltd", "500.00", "y", "R2", PAY_BY, ""],
        ],
    )
    rules = ImportRules(max_row_amount=Decimal("1000"), max_file_amount=Decimal("1000000"))

    parsed = parse_payment_request_file(
        path, customers=customers, today=TODAY, biller=BILLER, rules=rules
    )

    problem = only_problem(parsed)
    assert (problem.line, problem.column) == (2, "Amount")
    assert "over the biller's ceiling of £1,000.00 per payment request" in problem.reason
    assert [row.line for row in parsed.rows] == [3]


def test_a_file_over_the_ceiling_per_file_is_refused_whole(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    rows = [["Acme Ltd", "600.00", f"row {n}", f"R{n}", PAY_BY, ""] for n in range(3)]
    path = write_csv(tmp_path / "many.csv", rows)
    rules = ImportRules(max_row_amount=Decimal("1000"), max_file_amount=Decimal("1500"))

    parsed = parse_payment_request_file(
        path, customers=customers, today=TODAY, biller=BILLER, rules=rules
    )

    assert parsed.rows == []
    assert [p.line for p in parsed.problems] == [2, 3, 4]
    assert "total £1,800.00, over the biller's ceiling of £1,500.00 per file" in (
        parsed.problems[0].reason
    )


def test_the_default_ceilings_refuse_a_hundred_billion(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    parsed = parse(tmp_path, customers, [["Acme Ltd", "99,999,999,999.99", "x", "R1", PAY_BY, ""]])
    assert "ceiling" in only_problem(parsed).reason


def test_formulas_in_text_are_flagged_and_sent_neutralised_by_default(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    parsed = parse(
        tmp_path,
        customers,
        [["Acme Ltd", "10", '=HYPERLINK("http://x.example","pay")', "+R1", PAY_BY, ""]],
    )

    assert parsed.problems == []
    (row,) = parsed.rows
    assert row.description == '\'=HYPERLINK("http://x.example","pay")'
    assert row.reference == "'+R1"
    assert any("Description starts like a spreadsheet formula" in n for n in parsed.notes[2])


def test_formulas_in_text_are_refused_when_the_biller_says_so(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(tmp_path / "f.csv", [["Acme Ltd", "10", "@SUM(A1)", "R1", PAY_BY, ""]])

    parsed = parse_payment_request_file(
        path,
        customers=customers,
        today=TODAY,
        biller=BILLER,
        rules=ImportRules(formula_cells="reject"),
    )

    problem = only_problem(parsed)
    assert (problem.column, problem.value) == ("Description", "@SUM(A1)")
    assert "spreadsheet formula" in problem.reason


def test_a_keyless_row_that_looks_like_an_edit_of_an_imported_one_is_refused(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    header = ["Customer", "Amount", "Description", "Pay by"]
    original = parse(tmp_path, customers, [["Acme Ltd", "14.04", "Fees", PAY_BY]], header=header)
    imported = seen(
        external_id=original.rows[0].external_id,
        customer_id="cus_1",
        description="Fees",
        amount_pennies=1404,
        pay_by_date=date(2026, 12, 30),
        number="PR-7",
    )
    path = write_csv(
        tmp_path / "edited.csv", [["Acme Ltd", "999.99", "Fees", PAY_BY]], header=header
    )

    parsed = parse_payment_request_file(
        path,
        customers=customers,
        today=TODAY,
        biller=BILLER,
        known=KnownPaymentRequests(listed=[imported]),
    )
    again = parse_payment_request_file(
        write_csv(tmp_path / "same.csv", [["Acme Ltd", "14.04", "Fees", PAY_BY]], header=header),
        customers=customers,
        today=TODAY,
        biller=BILLER,
        known=KnownPaymentRequests(listed=[imported]),
    )

    reason = only_problem(parsed).reason
    assert reason.startswith("looks like an edit of PR-7 (£14.04, pay by 30/12/2026)")
    assert "void it, or give an External ID" in reason
    assert again.problems == [] and len(again.rows) == 1  # the same row again is an update


def test_a_row_whose_payment_request_was_voided_becomes_a_new_one(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    """An undone import imported again: the service edits no VOID request, so each row gets the
    next derived id (a new payment request); a given External ID that is VOID is refused."""
    rows = [["Acme Ltd", "10", "a", "R1", PAY_BY, ""]]
    first = parse(tmp_path, customers, rows).rows[0]
    voided = seen(external_id=first.external_id, reference="R1", status="VOID")
    given = seen(payment_request_id="pr-2", number="PR-2", external_id="INV-9", status="VOID")
    known = KnownPaymentRequests(listed=[voided, given])

    again = parse_payment_request_file(
        write_csv(tmp_path / "again.csv", rows),
        customers=customers,
        today=TODAY,
        biller=BILLER,
        known=known,
    )
    refused = parse_payment_request_file(
        write_csv(
            tmp_path / "given.csv",
            [["INV-9", "Acme Ltd", "10", "b"]],
            header=["External ID", "Customer", "Amount", "Description"],
        ),
        customers=customers,
        today=TODAY,
        biller=BILLER,
        known=known,
    )

    assert again.problems == []  # its reference belongs to a VOID request: free again
    assert again.rows[0].external_id not in (first.external_id, "")
    assert again.rows[0].external_id == derive_external_id(
        biller=BILLER,
        customer_id="cus_1",
        reference="R1",
        amount=Decimal("10.00"),
        pay_by_date=date(2026, 12, 30),
        description="a",
        round_=1,
    )
    assert (
        "VOID" in only_problem(refused).reason and "new External ID" in only_problem(refused).reason
    )
