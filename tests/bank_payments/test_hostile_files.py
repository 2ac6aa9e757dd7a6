"""Hostile and broken statement files: each is refused naming the file, the line and the reason
(or, where the bytes are unambiguous, read correctly), and the next good file reads fine."""

from __future__ import annotations

import codecs
import csv
from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from tasks.bank_payments import StatementRefused, UnknownLayout, pounds, read_statement

DATA = Path(__file__).resolve().parents[1] / "data" / "bank"
TODAY = date(2026, 11, 24)
STARLING = "Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes\n"
GOOD = "02/11/2026,Acme Services Ltd,INV-0042,FASTER PAYMENT,1250.00,6250.00,INCOME,\n"
IN_OUT = "Date,Description,Paid in,Paid out\n"
NATWEST = "Date, Type, Description, Value, Balance, Account Name, Account Number\n"


def _write(tmp_path: Path, name: str, data: bytes | str) -> Path:
    path = tmp_path / name
    path.write_bytes(data.encode("utf-8") if isinstance(data, str) else data)
    return path


def _refused(path: Path, line: int | None, *words: str) -> StatementRefused:
    with pytest.raises(StatementRefused) as caught:
        read_statement(path, today=TODAY)
    error = caught.value
    assert error.file == str(path)
    assert str(path) in str(error)
    assert error.line == line, str(error)
    for word in words:
        assert word in error.reason, error.reason
    # the next file is fine
    assert read_statement(DATA / "starling.csv", today=TODAY).count == 3
    return error


CASES = [
    ("empty", b"", None, ("empty",)),
    ("header only", STARLING, 1, ("no statement lines",)),
    ("blank lines only", "\n\n  \n\n", None, ("empty",)),
    ("impossible date", STARLING + GOOD + "31/02/2026,X,R,T,1.00,1.00,,\n", 3, ("31/02/2026",)),
    ("mixed dates", STARLING + GOOD + "2026-11-03,X,R,T,1.00,1.00,,\n", 3, ("not a valid date",)),
    (
        "non-numeric amount",
        STARLING + GOOD + "03/11/2026,X,R,T,twelve,1.00,,\n",
        3,
        ("not a number",),
    ),
    ("foreign currency symbol", STARLING + "03/11/2026,X,R,T,€12.00,1.00,,\n", 2, ("euros",)),
    (
        "european decimals",
        STARLING + 'O3/11/2026,X,R,T,"1.234,56",1.00,,\n'.replace("O", "0"),
        2,
        ("decimal comma",),
    ),
    # "+-1.00" lost its plus and was read as -£1.00.
    ("two signs", STARLING + GOOD + "03/11/2026,X,R,T,+-1.00,1.00,,\n", 3, ("more than one sign",)),
    ("negative zero", STARLING + "03/11/2026,X,R,T,-0.00,1.00,,\n", 2, ("-0.00",)),
    ("absurd amount", STARLING + "03/11/2026,X,R,T,9999999999.00,1.00,,\n", 2, ("believable",)),
    # int64's least value as pennies: its absolute value is itself (negative), so a check of
    # size by np.abs let it through as a believable line.
    (
        "amount at int64's edge",
        STARLING + "03/11/2026,X,R,T,-92233720368547758.08,1.00,,\n",
        2,
        ("too large",),
    ),
    ("header repeated", STARLING + GOOD + STARLING + GOOD, 3, ("header row is repeated",)),
    ("extra cells", STARLING + GOOD + "03/11/2026,Smith, J,R,T,1.00,1.00,,\n", 3, ("9 cells", "8")),
    # An unquoted "1,250.00" on the first line, whose last cell is empty, was taken for a
    # trailing comma (NatWest's): every row was read one cell wider and the amount as £1.00.
    (
        "unquoted thousands on the first line",
        STARLING + "02/11/2026,Acme,INV-0042,FP,1,250.00,6250.00,INCOME,\n",
        2,
        ("9 cells", "8", "unquoted comma"),
    ),
    (
        "unquoted thousands on the first of several lines",
        STARLING + "02/11/2026,Acme,INV-0042,FP,1,250.00,6250.00,INCOME,\n" + GOOD + GOOD,
        2,
        ("9 cells", "8", "unquoted comma"),
    ),
    # In a file whose rows end with a trailing comma, a row with an unquoted "1,250.00" and
    # no trailing comma has as many cells as the others: it was read as £1.00.
    (
        "unquoted thousands in a trailing-comma file",
        NATWEST
        + '02/11/2026,BAC,"\'ACME , INV-0042",1250.00,6250.00,"\'W","\'600001-12345678",\n'
        + '03/11/2026,BAC,"\'NORTHWIND , INV-0043",1,250.00,7500.00,"\'W","\'600001-12345678"\n',
        3,
        ("8 cells", "7", "unquoted comma"),
    ),
    (
        "unterminated quote",
        STARLING + GOOD + '03/11/2026,"Smith,R,T,1.00,1.00,,\n',
        3,
        ("never closed",),
    ),
    (
        "long line",
        STARLING + GOOD + "03/11/2026," + "X" * 10_000 + ",R,T,1.00,1.00,,\n",
        3,
        ("characters long",),
    ),
    # A minus (or accounting brackets) in a money-in column lost its sign: a returned or
    # reversed credit was read as money received, and could pay an invoice.
    (
        "negative money in",
        IN_OUT + "02/11/2026,ACME INV-0042,-1250.00,\n",
        2,
        ("money in", "-1250.00", "negative"),
    ),
    ("bracketed money in", IN_OUT + "02/11/2026,ACME INV-0042,(1250.00),\n", 2, ("negative",)),
    (
        "negative credit amount (Lloyds)",
        "Transaction Date,Transaction Type,Sort Code,Account Number,Transaction Description,"
        "Debit Amount,Credit Amount,Balance\n"
        "05/11/2026,FPI,'30-96-26,12345678,ACME SERVICES LTD INV-0042,,-1250.00,5030.55\n",
        2,
        ("money in", "negative"),
    ),
    ("future date", STARLING + "02/12/2026,X,R,T,1.00,1.00,,\n", 2, ("after today",)),
    ("footer total", STARLING + GOOD + "Total,,,,1250.00,,,\n", 3, ("footer",)),
    ("nul byte", (STARLING + GOOD).encode() + b"03/11/2026,X\x00,R,T,1.00,1.00,,\n", 3, ("NUL",)),
    ("xlsx named csv", b"PK\x03\x04" + b"\x00" * 100, None, ("Excel .xlsx",)),
    (
        "html named csv",
        b"<html><body><table><tr><td>1</td></tr></table></body></html>",
        None,
        ("web page",),
    ),
    ("pdf named csv", b"%PDF-1.7\n%\xe2\xe3\xcf\xd3\n", None, ("PDF",)),
    ("binary", bytes(range(256)) * 4, 1, ("NUL",)),
    (
        "another currency",
        "TransferWise ID,Date,Amount,Currency,Description\nT-1,02-11-2026,10.00,EUR,x\n",
        2,
        ("EUR",),
    ),
]


@pytest.mark.parametrize(("kind", "data", "line", "words"), CASES, ids=[c[0] for c in CASES])
def test_hostile_file_is_refused_with_file_line_and_reason(
    tmp_path: Path, kind: str, data: bytes | str, line: int | None, words: tuple[str, ...]
) -> None:
    _refused(_write(tmp_path, f"{kind.replace(' ', '_')}.csv", data), line, *words)


def test_missing_amount_column_is_refused(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.csv", "*Date,*Amount,Payee,Description,Reference\n")
    path.write_text("Date,Payee,Description,Reference,Amount (GBP)x\n02/11/2026,A,B,C,1\n")
    error = _refused(path, 1, "no bank profile matches")
    assert isinstance(error, UnknownLayout)
    assert error.closest and error.template and "columns:" in error.template


def test_duplicate_column_names_are_refused(tmp_path: Path) -> None:
    header = "Date,Counter Party,Reference,Type,Amount (GBP),Amount (GBP),Spending Category,Notes\n"
    _refused(_write(tmp_path, "s.csv", header + GOOD), 1, "more than once")


def test_a_csv_that_is_not_a_statement_names_the_closest_profiles(tmp_path: Path) -> None:
    error = _refused(_write(tmp_path, "s.csv", "name,email\nAnn,a@example.com\n"), 1, "closest")
    assert isinstance(error, UnknownLayout)


def test_wrong_delimiter_is_named(tmp_path: Path) -> None:
    text = (STARLING + GOOD).replace(",", ";")
    _refused(_write(tmp_path, "s.csv", text), 1, "separated by ';'")


def test_skip_reads_the_good_lines_and_lists_the_bad(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.csv", STARLING + GOOD + "31/02/2026,X,R,T,1.00,1.00,,\n" + GOOD)
    statement = read_statement(path, today=TODAY, on_bad_lines="skip")
    assert statement.count == 2
    assert [(b.line, "31/02/2026" in b.reason) for b in statement.bad_lines] == [(3, True)]


@pytest.mark.parametrize(
    ("encoding", "data"),
    [
        ("utf-8 BOM", codecs.BOM_UTF8 + (STARLING + GOOD).encode()),
        ("utf-16 BOM", (STARLING + GOOD).encode("utf-16")),
        ("utf-16 without BOM", (STARLING + GOOD).encode("utf-16-le")),
        ("windows-1252", (STARLING + GOOD.replace("Acme", "Café Acme")).encode("cp1252")),
        ("CR-only line endings", (STARLING + GOOD).replace("\n", "\r").encode()),
    ],
)
def test_unambiguous_encodings_are_read_not_refused(
    tmp_path: Path, encoding: str, data: bytes
) -> None:
    statement = read_statement(_write(tmp_path, "s.csv", data), today=TODAY)
    assert statement.count == 1
    assert pounds(statement.lines.column("amount")[0].as_py()) == Decimal("1250.00")
    assert "Acme" in statement.lines.column("payer")[0].as_py()


def test_pound_signs_and_thousands_separators_read_exactly(tmp_path: Path) -> None:
    path = _write(tmp_path, "s.csv", STARLING + '02/11/2026,A,R,T,"£1,234.56",1.00,,\n')
    statement = read_statement(path, today=TODAY)
    assert pounds(statement.lines.column("amount")[0].as_py()) == Decimal("1234.56")


def test_running_balance_that_does_not_add_up_is_reported(tmp_path: Path) -> None:
    path = _write(
        tmp_path,
        "s.csv",
        STARLING + GOOD + "03/11/2026,B,R,T,-10.00,6200.00,,\n",
    )
    statement = read_statement(path, today=TODAY)
    assert [b.line for b in statement.balance_issues] == [3]
    assert "6250.00 + -10.00 is not 6200.00" in statement.balance_issues[0].reason


def test_skipped_lines_are_each_in_the_report_with_their_reason(tmp_path: Path) -> None:
    from tasks.bank_payments._owed import items_frame
    from tasks.bank_payments._plan import plan_statement
    from tasks.bank_payments.report import summary_markdown, write_reports

    bad = [f"3{n % 10}/02/2026,X{n},R,T,1.00,1.00,,\n" for n in range(25)]  # no 30th-39th Feb
    path = _write(tmp_path, "s.csv", STARLING + GOOD + "".join(bad[:2]) + GOOD + "".join(bad[2:]))
    statement = read_statement(path, today=TODAY, on_bad_lines="skip")
    plan = plan_statement(statement, items_frame([]))

    report, _review = write_reports(plan, [], path, dry_run=True)

    with report.open(encoding="utf-8-sig", newline="") as handle:
        rows = list(csv.DictReader(handle))
    skipped = [r for r in rows if r["outcome"] == "skipped"]
    assert [int(r["line"]) for r in skipped] == [3, 4, *range(6, 29)]
    assert [r["text"] for r in skipped] == [" ".join(b.split(",")[:6]) for b in bad]  # its cells
    assert all("/02/2026" in r["reason"] and r["recorded"] == "0.00" for r in skipped)
    assert [r["line"] for r in rows if r["outcome"] != "skipped"] == ["2", "5"]
    summary = "\n".join(summary_markdown(plan, [], biller="acme", dry_run=True))
    assert "and 5 more (every one is in the report, outcome skipped)" in summary


def _santander_record(date_line: bool, description: str, amount: str, balance: str) -> str:
    head = "Date:\u00a005/11/2026\n" if date_line else ""
    return (
        f"{head}Description:\u00a0{description}\nAmount:\u00a0{amount} \n"
        f"Balance:\u00a0{balance} \n\n"
    )


def test_a_santander_record_without_its_date_line_is_refused_not_merged(tmp_path: Path) -> None:
    # The record lost its "Date:" line (a damaged or hand-edited download): its labels were
    # written over the record before it, so Acme's £1,250.00 vanished and Northwind's £480.00
    # took Acme's date.
    text = (
        "From: 01/11/2026 to 05/11/2026\n\nAccount: XXXX XXXX XXXX 4821\n\n"
        + _santander_record(
            True, "FASTER PAYMENTS RECEIPT REF.INV-0042 FROM ACME", "1250.00", "6280.55"
        )
        + _santander_record(
            False, "FASTER PAYMENTS RECEIPT REF.INV-0043 FROM NORTHWIND", "480.00", "6760.55"
        )
        + _santander_record(True, "BRITISH GAS", "-65.00", "6695.55")
    )
    path = _write(tmp_path, "santander.txt", text.encode("cp1252"))

    error = _refused(path, 10, "'Date'", "Description")

    assert "more bad line" not in error.reason  # one reason for the whole broken record
    statement = read_statement(path, today=TODAY, on_bad_lines="skip")
    read = statement.lines.select(["line", "amount"]).to_pylist()
    assert read == [{"line": 5, "amount": 125000}, {"line": 14, "amount": -6500}]
    assert [b.line for b in statement.bad_lines] == [10]
