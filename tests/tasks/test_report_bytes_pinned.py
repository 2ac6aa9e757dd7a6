"""The report and failed-rows files are pinned byte for byte: finance opens them in Excel and
re-drops the failed rows, so no speed-up of the writer may change a single byte
(``docs/conventions.md`` §9 Reports: UTF-8 with BOM, CRLF, the csv module's quoting, formulas
neutralised).

The expected bytes below were written by the writer before its columnar rewrite, for a file with
formulas, quotes, commas, line breaks in cells, unicode, a row wider than the header, an input
column named like one billops adds, and every outcome (rejected, created, updated, a resend
answered as a repeat, failed, pending, deleted, kept, would import). A second test holds the
writer to the csv module itself (each cell neutralised, then written by ``csv.writer``) over many
random cells, across its batch boundary.
"""

from __future__ import annotations

import csv
import io
import random
from decimal import Decimal
from pathlib import Path

import pyarrow as pa

from ledger import ItemOutcome
from tasks.common.reports import REPORT_ENCODING, neutralise, write_csv_columns
from tasks.payment_requests import CustomerDirectory, parse_payment_request_file
from tasks.payment_requests.report_files import BATCH_ROWS
from tasks.payment_requests.reports import Deletion, row_outcomes, write_report_files
from tasks.payment_requests.request_details import RequestDetails
from tests.support.finance_files import BILLER, TODAY, write_csv

HEADER = ["Customer", "Amount", "Description", "Reference", "Pay by", "outcome", "Notes"]
ROWS = [
    ["Acme Ltd", "£1,234.50", "June, part 1", "R1", "30/12/2026", "old", "plain"],
    ["Acme Ltd", "10", '=HYPERLINK("http://x.example","click")', "R2", "30/12/2026", "", "@me"],
    ["Nobody Ltd", "-4.00", "+cmd|' /C calc'!A0", "@SUM(A1)", "30/12/2026", "", "-"],
    ["Café Crème", "0.99", "Crème brûlée 🎉", "R4", "30/12/2026", "", 'say "hi"'],
    ["Beta & Sons", "£2,000", "two\nlines", "R5", "", "", "\ttabbed"],
    ["Acme Ltd", "99.999", "Too precise", "R6", "30/12/2026", "", "\rcr", "stray", "=1+1"],
    ["Acme Ltd", "12", "Failed at the service", "R7", "30/12/2026", "", ""],
    ["Acme Ltd", "13", "Not answered yet", "R8", "30/12/2026", "", "+44 20 7946 0000"],
    ["Acme Ltd", "14", "Resent chunk", "R9", "30/12/2026", "", "-12.50"],
    ["XERO-C-17", "15", "Already there", "R10", "30/12/2026", "", ""],
]
ANSWERS = {"R1": "CREATED", "R2": "UPDATED", "R7": "FAILED", "R9": "UNCHANGED", "R10": "UNCHANGED"}

EXPECTED_REPORT = (
    "Customer,Amount,Description,Reference,Pay by,Notes,column 8,column 9,l"
    "ine,outcome,payment_request_id,errors,outcome_notes,payment_request_no"
    ",payment_request_status,payment_link\r\n"
    'Acme Ltd,"£1,234.50","June, part 1",R1,30/12/2026,plain,,,2,CREATED,pr'
    '_0,,,PR-1,UNPAID,"https://pay.example/a,b"\r\n'
    'Acme Ltd,10,"\'=HYPERLINK(""http://x.example"",""click"")",R2,30/12/202'
    "6,'@me,,,3,CREATED,pr_1,,Description starts like a spreadsheet formula"
    ": sent with a leading '; created by this run (a resend was answered as"
    " a repeat),,,\r\n"
    "Nobody Ltd,-4.00,'+cmd|' /C calc'!A0,'@SUM(A1),30/12/2026,-,,,4,REJECT"
    "ED,,\"Customer 'Nobody Ltd': unknown customer: no customer has the id, "
    "externalId or name 'Nobody Ltd'; Amount '-4.00': amount must be positi"
    've (more than £0.00)",,,,\r\n'
    'Café Crème,0.99,Crème brûlée 🎉,R4,30/12/2026,"say ""hi""",,,5,PENDING,'
    ",,,,,\r\n"
    'Beta & Sons,"£2,000","two\nlines",R5,,\'\ttabbed,,,6,PENDING,,,,,,\r\n'
    "Acme Ltd,99.999,Too precise,R6,30/12/2026,\"'\rcr\",stray,'=1+1,8,REJECTE"
    "D,,Amount '99.999': amount has more than 2 decimal places; column 8 's"
    "tray': the row has 9 cells but the header has only 7 columns (a stray "
    "delimiter?),,,,\r\n"
    'Acme Ltd,12,Failed at the service,R7,30/12/2026,,,,10,FAILED,,"amount,'
    ' over the limit",,,,\r\n'
    "Acme Ltd,13,Not answered yet,R8,30/12/2026,'+44 20 7946 0000,,,11,PEND"
    "ING,,,,,,\r\n"
    "Acme Ltd,14,Resent chunk,R9,30/12/2026,-12.50,,,12,CREATED,pr_3,,creat"
    "ed by this run (a resend was answered as a repeat),,,\r\n"
    "XERO-C-17,15,Already there,R10,30/12/2026,,,,13,UNCHANGED,pr_4,,,,,\r\n"
    ',,,,,,,,,DELETED,pr_old,,"externalId bo-1, customer cus_1, £5.00",,,\r\n'
    ',,,,,,,,,NOT_DELETED,pr_kept,"paid, kept","externalId =ext, customer c'
    'us_2, £1,234.56",,,\r\n'
)
EXPECTED_FAILED = (
    "Customer,Amount,Description,Reference,Pay by,outcome,Notes,column 8,co"
    "lumn 9,reason\r\n"
    "Nobody Ltd,-4.00,'+cmd|' /C calc'!A0,'@SUM(A1),30/12/2026,,-,,,\"Custom"
    "er 'Nobody Ltd': unknown customer: no customer has the id, externalId "
    "or name 'Nobody Ltd'; Amount '-4.00': amount must be positive (more th"
    'an £0.00)"\r\n'
    "Acme Ltd,99.999,Too precise,R6,30/12/2026,,\"'\rcr\",stray,'=1+1,Amount '"
    "99.999': amount has more than 2 decimal places; column 8 'stray': the "
    "row has 9 cells but the header has only 7 columns (a stray delimiter?)"
    "\r\n"
    'Acme Ltd,12,Failed at the service,R7,30/12/2026,,,,,"amount, over the '
    'limit"\r\n'
)
EXPECTED_DRY_RUN_REPORT = (
    "Customer,Amount,Description,Reference,Pay by,Notes,column 8,column 9,l"
    "ine,outcome,payment_request_id,errors,outcome_notes,payment_request_no"
    ",payment_request_status,payment_link\r\n"
    'Acme Ltd,"£1,234.50","June, part 1",R1,30/12/2026,plain,,,2,WOULD_IMPO'
    "RT,,,,,,\r\n"
    'Acme Ltd,10,"\'=HYPERLINK(""http://x.example"",""click"")",R2,30/12/202'
    "6,'@me,,,3,WOULD_IMPORT,,,Description starts like a spreadsheet formul"
    "a: sent with a leading ',,,\r\n"
    "Nobody Ltd,-4.00,'+cmd|' /C calc'!A0,'@SUM(A1),30/12/2026,-,,,4,REJECT"
    "ED,,\"Customer 'Nobody Ltd': unknown customer: no customer has the id, "
    "externalId or name 'Nobody Ltd'; Amount '-4.00': amount must be positi"
    've (more than £0.00)",,,,\r\n'
    'Café Crème,0.99,Crème brûlée 🎉,R4,30/12/2026,"say ""hi""",,,5,WOULD_IM'
    "PORT,,,,,,\r\n"
    'Beta & Sons,"£2,000","two\nlines",R5,,\'\ttabbed,,,6,WOULD_IMPORT,,,,,,\r\n'
    "Acme Ltd,99.999,Too precise,R6,30/12/2026,\"'\rcr\",stray,'=1+1,8,REJECTE"
    "D,,Amount '99.999': amount has more than 2 decimal places; column 8 's"
    "tray': the row has 9 cells but the header has only 7 columns (a stray "
    "delimiter?),,,,\r\n"
    "Acme Ltd,12,Failed at the service,R7,30/12/2026,,,,10,WOULD_IMPORT,,,,"
    ",,\r\n"
    "Acme Ltd,13,Not answered yet,R8,30/12/2026,'+44 20 7946 0000,,,11,WOUL"
    "D_IMPORT,,,,,,\r\n"
    "Acme Ltd,14,Resent chunk,R9,30/12/2026,-12.50,,,12,WOULD_IMPORT,,,,,,\r"
    "\n"
    "XERO-C-17,15,Already there,R10,30/12/2026,,,,13,WOULD_IMPORT,,,,,,\r\n"
)


def _written(tmp_path: Path, customers: CustomerDirectory, *, dry_run: bool) -> tuple[bytes, bytes]:
    path = write_csv(tmp_path / "mixed.csv", ROWS, header=HEADER)
    parsed = parse_payment_request_file(path, customers=customers, today=TODAY, biller=BILLER)
    by_reference = {row.reference: row for row in parsed.rows}
    items = {}
    for n, (reference, status) in enumerate(ANSWERS.items()):
        row = by_reference[reference]
        errors = ("amount, over the limit",) if status == "FAILED" else ()
        request = "" if status == "FAILED" else f"pr_{n}"
        items[row.external_id] = ItemOutcome(
            "op", row.external_id, row.line, status, request, errors
        )
    existed = {by_reference["R10"].external_id}
    outcomes = row_outcomes(
        parsed, {} if dry_run else items, dry_run=dry_run, sent=True, existed_before=existed
    )
    deletions = [
        Deletion("DELETED", "pr_old", "bo-1", "cus_1", Decimal("5.00")),
        Deletion("NOT_DELETED", "pr_kept", "=ext", "cus_2", Decimal("1234.56"), "paid, kept"),
    ]
    details = {"pr_0": RequestDetails("PR-1", "UNPAID", "https://pay.example/a,b")}
    report = write_report_files(
        parsed,
        outcomes,
        deletions=[] if dry_run else deletions,
        dry_run_report=dry_run,
        details=None if dry_run else details,
    )
    assert report.failed_csv is not None
    return report.report_csv.read_bytes(), report.failed_csv.read_bytes()


def test_the_report_and_failed_rows_are_the_pinned_bytes(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    report, failed = _written(tmp_path, customers, dry_run=False)

    assert report == EXPECTED_REPORT.encode(REPORT_ENCODING)  # with its byte-order mark
    assert failed == EXPECTED_FAILED.encode(REPORT_ENCODING)


def test_a_dry_runs_report_is_the_pinned_bytes(
    tmp_path: Path, customers: CustomerDirectory
) -> None:
    report, _ = _written(tmp_path, customers, dry_run=True)

    assert report == EXPECTED_DRY_RUN_REPORT.encode(REPORT_ENCODING)


CHARACTERS = [
    '"',
    ",",
    "\n",
    "\r",
    "\t",
    "=",
    "+",
    "-",
    "@",
    "'",
    " ",
    "£",
    "é",
    "🎉",
    "1",
    ".",
    "a",
]


def _cell(rng: random.Random) -> str:
    return "".join(rng.choice(CHARACTERS) for _ in range(rng.randrange(0, 6)))


def test_the_columnar_writer_writes_what_the_csv_module_writes(tmp_path: Path) -> None:
    rng = random.Random(12)
    rows = BATCH_ROWS + 7  # across a batch boundary
    columns = [[_cell(rng) for _ in range(rows)] for _ in range(3)]
    columns.append([""] * rows)  # an empty column: the csv module writes nothing between commas
    header = ["a", "=b", "c,d", "e"]

    written = write_csv_columns(
        tmp_path / "r.csv",
        header,
        (
            [pa.array(column[start : start + BATCH_ROWS], pa.string()) for column in columns]
            for start in range(0, rows, BATCH_ROWS)
        ),
    )

    expected = io.StringIO(newline="")
    writer = csv.writer(expected)
    writer.writerow([neutralise(name) for name in header])
    writer.writerows([neutralise(cell) for cell in row] for row in zip(*columns, strict=True))
    assert written.read_bytes() == expected.getvalue().encode(REPORT_ENCODING)


def test_a_one_column_report_writes_an_empty_cell_as_the_csv_module_does(tmp_path: Path) -> None:
    written = write_csv_columns(
        tmp_path / "r.csv", ["only"], [[pa.array(["", "x", "-", "=y"], pa.string())]]
    )

    assert written.read_bytes().decode(REPORT_ENCODING) == 'only\r\n""\r\nx\r\n-\r\n\'=y\r\n'


def test_columns_empty_on_every_row_are_written_as_the_csv_module_writes_them(
    tmp_path: Path,
) -> None:
    """The writer folds runs of wholly empty columns into their commas (a dry run's report has
    six): at the start, between others, at the end, alone or together, and every column empty."""
    rng = random.Random(5)
    rows = 50
    full = [_cell(rng) for _ in range(rows)]
    blank = [""] * rows
    shapes = [
        [blank, full, blank, blank, full, blank],
        [blank, blank, blank, full],
        [full, blank],
        [full, full, blank, blank, blank, blank, blank, blank],
        [blank, blank, blank],
        [blank, blank],
    ]
    for number, columns in enumerate(shapes):
        header = [f"h{n}" for n in range(len(columns))]
        written = write_csv_columns(
            tmp_path / f"r{number}.csv",
            header,
            [[pa.array(column, pa.string()) for column in columns]],
        )

        expected = io.StringIO(newline="")
        writer = csv.writer(expected)
        writer.writerow(header)
        writer.writerows([neutralise(cell) for cell in row] for row in zip(*columns, strict=True))
        assert written.read_bytes() == expected.getvalue().encode(REPORT_ENCODING), number
