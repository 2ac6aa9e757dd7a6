"""The CSVs next to the input: every row with its outcome, and the failed rows ready to re-drop."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

from tasks.payment_request_files import (
    CustomerDirectory,
    RowOutcome,
    failed_rows_path,
    parse_payment_request_file,
    read_payment_request_file,
    report_path,
    write_failed_rows,
    write_outcome_report,
)
from tasks.payment_request_files._values import parse_amount
from tests.tasks.conftest import BILLER, TODAY, write_csv, write_xlsx

HEADER = ["Notes", "Customer", "Amount (£)", "Description", "Reference", "Pay by"]
ROWS = [
    ["first", "Acme Ltd", "£1,234.50", "June, part 1", "R1", "30/12/2026"],
    ["", "Nobody Ltd", "£10.00", "Unknown customer", "R2", "30/12/2026"],
    ["dup", "Café Crème", "£0.99", "Crème", "R3", "30/12/2026"],
    ["", "Acme Ltd", "99.999", "Too precise", "R4", "30/12/2026"],
    ["last", "Beta & Sons", "£2,000", "Big one", "R5", ""],
]


def read_back(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def outcomes_for(path: Path, customers: CustomerDirectory) -> dict[int, RowOutcome]:
    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    outcomes = {
        p.line: RowOutcome(p.line, "REJECTED", None, (f"{p.column}: {p.reason}",))
        for p in parsed.problems
    }
    for n, row in enumerate(parsed.rows):
        outcomes[row.line] = RowOutcome(row.line, "CREATED", f"pr_{n}", ())
    return outcomes


def test_report_paths_sit_next_to_the_input(tmp_path: Path) -> None:
    assert report_path(tmp_path / "june.xlsx") == tmp_path / "june.report.csv"
    assert failed_rows_path(tmp_path / "june.csv") == tmp_path / "june.failed.csv"


def test_the_report_has_every_row_as_read_and_its_outcome(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(tmp_path / "june.csv", ROWS, header=HEADER, encoding="cp1252", delimiter=";")
    rows_in = read_payment_request_file(path)

    written = write_outcome_report(report_path(path), rows_in, outcomes_for(path, customers))

    assert written == tmp_path / "june.report.csv"
    assert written.read_bytes().startswith(b"\xef\xbb\xbf")  # Excel shows the £ correctly
    report = read_back(written)
    assert list(report[0]) == [*HEADER, "line", "outcome", "payment_request_id", "errors"]
    assert [[r[h] for h in HEADER] for r in report] == ROWS
    assert [r["outcome"] for r in report] == [
        "CREATED",
        "REJECTED",
        "CREATED",
        "REJECTED",
        "CREATED",
    ]
    assert [r["line"] for r in report] == ["2", "3", "4", "5", "6"]
    assert report[0]["payment_request_id"] == "pr_0"
    assert report[1]["errors"].startswith("Customer: unknown customer")
    # Ties out to the penny: created + rejected amounts = the file's total.
    total = sum(
        (parse_amount(r["Amount (£)"]) for r in report if r["outcome"] == "CREATED"), Decimal(0)
    )
    assert total == Decimal("3235.49")


def test_a_line_without_outcome_is_marked(tmp_path: Path) -> None:
    path = write_csv(tmp_path / "f.csv", ROWS[:2], header=HEADER)
    rows_in = read_payment_request_file(path)

    report = read_back(write_outcome_report(report_path(path), rows_in, {}))

    assert [r["outcome"] for r in report] == ["NO_OUTCOME", "NO_OUTCOME"]


def test_failed_rows_are_ready_to_fix_and_drop_again(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(tmp_path / "june.csv", ROWS, header=HEADER)
    rows_in = read_payment_request_file(path)
    outcomes = outcomes_for(path, customers)
    failed = {line for line, o in outcomes.items() if o.status == "REJECTED"}

    written = write_failed_rows(
        failed_rows_path(path), rows_in, failed, {n: "; ".join(outcomes[n].errors) for n in failed}
    )

    back = read_back(written)
    assert [[r[h] for h in HEADER] for r in back] == [ROWS[1], ROWS[3]]
    assert "unknown customer" in back[0]["reason"] and "decimal places" in back[1]["reason"]
    # Fixed and dropped again: it reads as an input file, the reason column ignored but kept.
    again = read_payment_request_file(written)
    assert [r.values["reference"] for r in again] == ["R2", "R4"]

    rewritten = write_failed_rows(failed_rows_path(written), again, {2}, {2: "still bad"})

    header = next(csv.reader(rewritten.open(encoding="utf-8-sig", newline="")))
    assert header == [*HEADER, "reason"]  # the old reason column is replaced, not repeated
    assert read_back(rewritten)[0]["reason"] == "still bad"


def test_rows_wider_than_the_header_keep_their_extra_cells(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text("Customer,Amount,Description\r\nAcme Ltd,1,234.50,June\r\n", encoding="utf-8")

    written = write_failed_rows(failed_rows_path(path), read_payment_request_file(path), {2}, {})

    assert read_back(written) == [
        {
            "Customer": "Acme Ltd",
            "Amount": "1",
            "Description": "234.50",
            "column 4": "June",
            "reason": "failed",
        }
    ]


def test_an_xlsx_input_gets_csv_reports_with_its_cells_as_text(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_xlsx(tmp_path / "june.xlsx", [["Acme Ltd", 120.5, "June", "R1", None, 20]])
    rows_in = read_payment_request_file(path)

    report = read_back(
        write_outcome_report(report_path(path), rows_in, outcomes_for(path, customers))
    )

    assert report[0]["Amount"] == "120.5" and report[0]["outcome"] == "CREATED"
    assert (tmp_path / "june.report.csv").exists()
