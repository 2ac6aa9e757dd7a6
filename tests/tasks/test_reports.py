"""The CSVs next to the input: every row with its outcome, and the failed rows ready to re-drop."""

from __future__ import annotations

import csv
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from ledger import ItemOutcome
from tasks.common.finance_files.values import parse_amount
from tasks.payment_requests import (
    CustomerDirectory,
    ParsedFile,
    failed_rows_path,
    parse_payment_request_file,
    read_payment_request_file,
    report_path,
    write_failed_rows,
    write_outcome_report,
)
from tasks.payment_requests.report_files import Outcomes
from tasks.payment_requests.reports import _index_in, row_outcomes
from tests.support.finance_files import BILLER, TODAY, write_csv, write_xlsx

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


def parsed_and_created(path: Path, customers: CustomerDirectory) -> tuple[ParsedFile, Outcomes]:
    """The file checked, and every good row answered CREATED as ``pr_<n>``."""
    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    items = {
        row.external_id: ItemOutcome("op", row.external_id, row.line, "CREATED", f"pr_{n}")
        for n, row in enumerate(parsed.rows)
    }
    return parsed, row_outcomes(parsed, items, dry_run=False, sent=True)


def test_report_paths_sit_next_to_the_input(tmp_path: Path) -> None:
    assert report_path(tmp_path / "june.xlsx") == tmp_path / "june.report.csv"
    assert failed_rows_path(tmp_path / "june.csv") == tmp_path / "june.failed.csv"


def test_the_report_has_every_row_as_read_and_its_outcome(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(tmp_path / "june.csv", ROWS, header=HEADER, encoding="cp1252", delimiter=";")
    parsed, outcomes = parsed_and_created(path, customers)

    written = write_outcome_report(report_path(path), parsed.table, outcomes)

    assert written == tmp_path / "june.report.csv"
    assert written.read_bytes().startswith(b"\xef\xbb\xbf")  # Excel shows the £ correctly
    report = read_back(written)
    assert list(report[0]) == [
        *HEADER,
        "line",
        "outcome",
        "payment_request_id",
        "errors",
        "outcome_notes",
        "payment_request_no",
        "payment_request_status",
        "payment_link",
    ]
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
    assert report[1]["errors"].startswith("Customer 'Nobody Ltd': unknown customer")
    # Ties out to the penny: created + rejected amounts = the file's total.
    total = sum(
        (parse_amount(r["Amount (£)"]) for r in report if r["outcome"] == "CREATED"), Decimal(0)
    )
    assert total == Decimal("3235.49")


def test_outcomes_follow_external_ids_not_positions(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    """Answers are matched to rows by externalId: the order they come back in does not matter,
    and a row the answers do not name stays PENDING."""
    path = write_csv(tmp_path / "f.csv", [ROWS[0], ROWS[2], ROWS[4]], header=HEADER)
    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    first, second, third = parsed.rows
    items = {
        third.external_id: ItemOutcome("op", third.external_id, 2, "UPDATED", "pr_c"),
        first.external_id: ItemOutcome("op", first.external_id, 4, "CREATED", "pr_a"),
    }

    outcomes = row_outcomes(parsed, items, dry_run=False, sent=True, existed_before={"x"})

    assert outcomes.status.to_pylist() == ["CREATED", "PENDING", "CREATED"]
    assert outcomes.payment_request_id.to_pylist() == ["pr_a", "", "pr_c"]
    assert "created by this run" in outcomes.notes.to_pylist()[2]


def test_a_repeat_of_a_row_that_existed_before_stays_as_the_service_said(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(tmp_path / "f.csv", [ROWS[0]], header=HEADER)
    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    (row,) = parsed.rows
    items = {row.external_id: ItemOutcome("op", row.external_id, 2, "UNCHANGED", "pr_a")}

    outcomes = row_outcomes(
        parsed, items, dry_run=False, sent=True, existed_before={row.external_id}
    )

    assert outcomes.status.to_pylist() == ["UNCHANGED"]


def test_failed_rows_are_ready_to_fix_and_drop_again(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    path = write_csv(tmp_path / "june.csv", ROWS, header=HEADER)
    parsed, outcomes = parsed_and_created(path, customers)
    failed = pa.array([1, 3], pa.int64())
    reasons = pa.array(["unknown customer", "more than 2 decimal places"], pa.string())

    written = write_failed_rows(failed_rows_path(path), parsed.table, failed, reasons)

    back = read_back(written)
    assert [[r[h] for h in HEADER] for r in back] == [ROWS[1], ROWS[3]]
    assert "unknown customer" in back[0]["reason"] and "decimal places" in back[1]["reason"]
    # Fixed and dropped again: it reads as an input file, the reason column ignored but kept.
    again = read_payment_request_file(written)
    assert [r.values["reference"] for r in again.rows] == ["R2", "R4"]

    rewritten = write_failed_rows(
        failed_rows_path(written), again.table, pa.array([0]), pa.array(["still bad"])
    )

    header = next(csv.reader(rewritten.open(encoding="utf-8-sig", newline="")))
    assert header == [*HEADER, "reason"]  # the old reason column is replaced, not repeated
    assert read_back(rewritten)[0]["reason"] == "still bad"


def test_rows_wider_than_the_header_keep_their_extra_cells(tmp_path: Path) -> None:
    path = tmp_path / "wide.csv"
    path.write_text("Customer,Amount,Description\r\nAcme Ltd,1,234.50,June\r\n", encoding="utf-8")
    table = read_payment_request_file(path).table

    written = write_failed_rows(failed_rows_path(path), table, pa.array([0]), pa.array(["failed"]))

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
    parsed, outcomes = parsed_and_created(path, customers)

    report = read_back(write_outcome_report(report_path(path), parsed.table, outcomes))

    assert report[0]["Amount"] == "120.5" and report[0]["outcome"] == "CREATED"
    assert (tmp_path / "june.report.csv").exists()


def test_formulas_in_cells_reach_no_report_alive(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    """Cells Excel would run (=, +, -, @, tab, CR first) are written with a leading apostrophe in
    the report and the failed-rows file; plain negative numbers stay numbers."""
    rows = [
        ["Acme Ltd", "10.00", '=HYPERLINK("http://x.example","click")', "R1", "30/12/2026"],
        ["Nobody", "-4.00", "+cmd|' /C calc'!A0", "@SUM(A1)", "30/12/2026"],
    ]
    path = write_csv(tmp_path / "evil.csv", rows, header=HEADER[1:])
    parsed, outcomes = parsed_and_created(path, customers)

    report = read_back(write_outcome_report(report_path(path), parsed.table, outcomes))
    failed = read_back(
        write_failed_rows(failed_rows_path(path), parsed.table, pa.array([1]), pa.array(["x"]))
    )

    assert report[0]["Description"] == '\'=HYPERLINK("http://x.example","click")'
    assert report[1]["Description"] == "'+cmd|' /C calc'!A0"
    assert report[1]["Reference"] == "'@SUM(A1)"
    assert report[1]["Amount (£)"] == "-4.00"
    assert failed[0]["Description"] == "'+cmd|' /C calc'!A0"
    for cell in [*report[0].values(), *report[1].values(), *failed[0].values()]:
        assert not cell.startswith(("=", "+", "@", "\t", "\r")), cell


def test_rows_are_found_among_lines_in_any_order_as_arrow_finds_them() -> None:
    """Outcomes are matched to lines by a binary search when the lines increase, and by Arrow's
    hash otherwise: both give what ``index_in`` gives."""
    keys = pa.array([2, 3, 5, 8, 13, 1, 40], pa.int64())
    for values in ([1, 2, 5, 13, 21], [13, 2, 21, 1, 5], [], [7]):
        wanted = pa.array(values, pa.int64())

        found = _index_in(keys, wanted)

        assert found.to_pylist() == pc.index_in(keys, value_set=wanted).to_pylist()
