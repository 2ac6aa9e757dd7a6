"""Every shipped profile reads a file written from its sources: layout found, lines, money, text."""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from tasks.bank_payments import available_profiles, pounds, read_statement

DATA = Path(__file__).resolve().parents[1] / "data" / "bank"
TODAY = date(2026, 11, 24)

# file, profile, lines, (line, date, amount, payer contains, reference contains) of one line
CASES = [
    ("barclays.csv", "barclays", 4, (2, date(2026, 11, 2), "1250.00", "ACME SERVICES", "INV-0042")),
    ("hsbc_noheader.csv", "hsbc", 4, (1, date(2026, 11, 4), "1250.00", "ACME", "INV-0042")),
    ("hsbc_header.csv", "hsbc_header", 2, (2, date(2026, 11, 4), "1250.00", "ACME", "INV-0042")),
    ("lloyds.csv", "lloyds", 4, (3, date(2026, 11, 4), "-65.00", "BRITISH GAS", "")),
    (
        "lloyds_commercial.csv",
        "lloyds_commercial",
        3,
        (7, date(2026, 11, 2), "480.00", "NORTHWIND", "INVOICE 43"),
    ),
    (
        "natwest_multi.csv",
        "natwest",
        4,
        (7, date(2026, 11, 2), "480.00", "NORTHWIND", "INVOICE 43"),
    ),
    ("rbs.csv", "natwest", 2, (3, date(2026, 11, 3), "-8.50", "SERVICE", "")),
    ("santander.txt", "santander", 3, (15, date(2026, 11, 3), "-4.20", "CAFÉ NERO", "")),
    ("monzo_business.csv", "monzo", 3, (2, date(2026, 11, 2), "1250.00", "Acme", "INV-0042")),
    ("starling.csv", "starling", 3, (4, date(2026, 11, 4), "480.00", "Northwind", "inv 43")),
    (
        "revolut_business.csv",
        "revolut_business",
        2,
        (2, date(2026, 11, 2), "1250.00", "Acme", "INV-0042"),
    ),
    ("tide.csv", "tide", 2, (2, date(2026, 11, 2), "1250.00", "Acme", "INV-0042")),
    (
        "nationwide.csv",
        "generic_in_out",
        3,
        (8, date(2026, 11, 4), "480.00", "NORTHWIND", "INVOICE 43"),
    ),
    (
        "wise_business_gbp.csv",
        "wise_business",
        2,
        (2, date(2026, 11, 4), "480.00", "Northwind", "INVOICE 43"),
    ),
    ("xero_template.csv", "xero_template", 2, (3, date(2026, 11, 3), "-45.60", "Shell", "")),
    (
        "santander_midata.csv",
        "santander_midata",
        3,
        (3, date(2026, 11, 3), "1250.00", "ACME SERVICES", "INV-0042"),
    ),
    ("hsbc_midata.csv", "hsbc_midata", 2, (2, date(2026, 11, 4), "1250.00", "ACME", "INV-0042")),
    (
        "wise_business_history.csv",
        "wise_business_history",
        2,
        (2, date(2026, 11, 4), "1250.00", "Acme", "INV-0042"),
    ),
]


@pytest.mark.parametrize(("name", "profile", "count", "expected"), CASES, ids=[c[0] for c in CASES])
def test_profile_reads_its_bank_file(
    name: str, profile: str, count: int, expected: tuple[int, date, str, str, str]
) -> None:
    statement = read_statement(DATA / name, today=TODAY)
    assert statement.profile.name == profile
    assert statement.count == count
    assert statement.bad_lines == []
    assert statement.balance_issues == []
    rows = {row["line"]: row for row in statement.lines.to_pylist()}
    line, day, amount, payer, reference = expected
    row = rows[line]
    assert row["date"] == day
    assert pounds(row["amount"]) == Decimal(amount)
    assert payer in row["payer"]
    assert reference in row["reference"]


def test_every_shipped_profile_names_its_source_and_has_a_fixture() -> None:
    shipped = {p.name for p in available_profiles(user_folder=DATA / "none")}
    tested = {c[1] for c in CASES} | {"generic"}
    assert shipped == tested
    for profile in available_profiles(user_folder=DATA / "none"):
        assert profile.source.strip(), profile.name


def test_natwest_keeps_each_account_of_a_multi_account_file() -> None:
    statement = read_statement(DATA / "natwest_multi.csv", today=TODAY)
    accounts = set(statement.lines.column("account").to_pylist())
    assert accounts == {"WIDGET CO LTD 600001-12345678", "RESERVE 600001-87654321"}


def test_lines_that_are_not_transactions_are_listed_not_read() -> None:
    revolut = read_statement(DATA / "revolut_business.csv", today=TODAY)
    assert [(s.line, s.reason) for s in revolut.skipped] == [(4, "not booked (PENDING)")]
    lloyds = read_statement(DATA / "lloyds_commercial.csv", today=TODAY)
    assert [s.line for s in lloyds.skipped] == [3, 6]


def test_ids_are_kept_where_the_bank_gives_them() -> None:
    monzo = read_statement(DATA / "monzo_business.csv", today=TODAY)
    assert monzo.lines.column("txn_id").to_pylist()[0] == "tx_0000AcmE42ZWW3Pq4dXGYW"
    barclays = read_statement(DATA / "barclays.csv", today=TODAY)
    assert set(barclays.lines.column("txn_id").to_pylist()) == {""}


def test_detection_ignores_the_file_name(tmp_path: Path) -> None:
    renamed = tmp_path / "barclays-export.csv"
    renamed.write_bytes((DATA / "starling.csv").read_bytes())
    assert read_statement(renamed, today=TODAY).profile.name == "starling"


def test_a_user_profile_reads_a_layout_billops_does_not_ship(tmp_path: Path) -> None:
    from tasks.bank_payments import load_profile

    (tmp_path / "coop.yaml").write_text(
        "name: coop\nbank: Co-operative Bank\nsignature: [Posted, Details, Paid in, Paid out]\n"
        "preamble_lines: 2\nfooter_lines: 1\ndelimiter: ';'\n"
        "columns: {date: Posted, text: Details, credit: Paid in, debit: 4}\n"
        "date_formats: ['%Y-%m-%d']\nsign: in_out\ndecimal: ','\nthousands: '.'\n",
        encoding="utf-8",
    )
    statement_file = tmp_path / "s.csv"
    statement_file.write_text(
        "Account 123\nExported 2026-11-05\nPosted;Details;Paid in;Paid out\n"
        "2026-11-02;ACME INV-0042;1.250,00;\n2026-11-03;SHELL;;45,60\nTotal;;1.250,00;45,60\n",
        encoding="utf-8",
    )
    profile = load_profile(tmp_path / "coop.yaml")
    statement = read_statement(statement_file, profile=profile, today=TODAY)
    assert [pounds(a) for a in statement.lines.column("amount").to_pylist()] == [
        Decimal("1250.00"),
        Decimal("-45.60"),
    ]
