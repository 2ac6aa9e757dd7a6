"""Real export variants (older and newer column sets, preambles, trailing commas, BOMs, other
encodings) of the banks billops ships profiles for: each file in ``tests/data/bank/variants``
is written from a public source named in its ``SOURCES.md`` (header rows as the banks write
them, transaction lines invented). Each is detected as its bank's profile and read line by
line: date, signed amount (credits positive), payer and reference.

Variants billops cannot read without a change to its code are ``xfail(strict=True)``, each
naming the change it needs; a strict xfail that starts passing fails the run, so the mark is
taken off when the code is fixed.
"""

from __future__ import annotations

from datetime import date
from decimal import Decimal
from pathlib import Path

import pytest

from tasks.bank_payments import (
    StatementRefused,
    UnknownLayout,
    detect_layout,
    load_profile,
    pounds,
    read_statement,
)

VARIANTS = Path(__file__).resolve().parents[1] / "data" / "bank" / "variants"
TODAY = date(2026, 11, 24)

# A line: (physical line, date, amount, payer contains, reference contains).
Line = tuple[int, date, str, str, str]

# file, profile detected, usable lines, lines checked
CASES: list[tuple[str, str, int, list[Line]]] = [
    (
        "barclays_2024_tab_memo.csv",
        "barclays",
        4,
        [
            (2, date(2026, 11, 6), "-42.50", "TESCO STORES", ""),
            (3, date(2026, 11, 5), "1250.00", "ACME SERVICES LTD", ""),
            (4, date(2026, 11, 4), "-731.79", "NATIONWIDE", "SBS00001"),
            (5, date(2026, 11, 3), "-26.35", "J SMITH", "FUNMONEY"),
        ],
    ),
    (
        "tsb_2016_lloyds_layout.csv",
        "lloyds",
        2,
        [
            (2, date(2026, 11, 5), "480.00", "NORTHWIND TRADING", "INVOICE 43"),
            (3, date(2026, 11, 4), "-25.00", "SCREWFIX", ""),
        ],
    ),
    (
        "lloyds_commercial_header_first.csv",
        "lloyds_commercial",
        2,
        [
            (2, date(2026, 11, 2), "1250.00", "ACME SERVICES", "INV-0042"),
            (3, date(2026, 11, 3), "-65.00", "BRITISH GAS", "8004412231"),
        ],
    ),
    (
        "natwest_2014_blank_after_header.csv",
        "natwest",
        2,
        [
            (4, date(2014, 12, 31), "1250.00", "ACME SERVICES LTD", "INV-0042"),
            (5, date(2014, 12, 31), "-8.64", "SHELL LEEDS", ""),
        ],
    ),
    (
        "hsbc_paid_out_paid_in.csv",
        "generic_in_out",
        2,
        [
            (2, date(2026, 11, 4), "1250.00", "ACME SERVICES", "INV-0042"),
            (3, date(2026, 11, 3), "-65.00", "BRITISH GAS", ""),
        ],
    ),
    (
        "santander_business_csv.csv",
        "generic_in_out",
        2,
        [
            (2, date(2026, 11, 4), "1250.00", "ACME SERVICES LTD", "INV-0042"),
            (3, date(2026, 11, 3), "-65.00", "BRITISH GAS", ""),
        ],
    ),
    (
        "monzo_2020_without_money_in_out.csv",
        "monzo",
        2,
        [
            (2, date(2026, 11, 2), "1250.00", "Acme Services Ltd", "INV-0042"),
            (3, date(2026, 11, 3), "-25.00", "Screwfix", ""),
        ],
    ),
    (
        "starling_2019_without_notes.csv",
        "starling",
        2,
        [
            (2, date(2019, 10, 1), "1250.00", "Acme Services Ltd", "INV-0042"),
            (3, date(2019, 10, 2), "-1000.00", "Landlord", "Rent"),
        ],
    ),
    (
        "revolut_business_2022_without_state.csv",
        "revolut_business",
        2,
        [
            # "Payer" is the team member (empty on money received): the payer is the
            # Description's "Payment from ..." in an export without "Sender name".
            (2, date(2022, 7, 4), "1250.00", "Acme Services Ltd", "INV-0042"),
            (3, date(2022, 7, 4), "-45.50", "Google Ads", ""),
        ],
    ),
    (
        "revolut_business_2025_local_dates_bom.csv",
        "revolut_business",
        1,
        [(2, date(2026, 11, 2), "1250.00", "Acme Services Ltd", "INV-0042")],
    ),
    (
        "tide_2018_minimal.csv",
        "tide",
        2,
        [
            (2, date(2018, 7, 2), "1250.00", "", "INV-0042"),
            (3, date(2018, 7, 1), "-25.00", "", "SCREWFIX"),
        ],
    ),
    (
        "tide_like_paid_in_paid_out.csv",
        "generic_in_out",
        2,
        [
            (2, date(2026, 11, 4), "1250.00", "Acme Services Ltd", "INV-0042"),
            (3, date(2026, 11, 3), "-25.00", "Screwfix Direct", ""),
        ],
    ),
    (
        "wise_business_2025_title_line.csv",
        "wise_business",
        2,
        [
            (3, date(2026, 11, 4), "480.00", "Northwind Trading", "INVOICE 43"),
            (4, date(2026, 11, 3), "-12.50", "", ""),
        ],
    ),
    (
        "xero_template_check_number_iso_dates.csv",
        "xero_template",
        2,
        [
            (2, date(2026, 11, 2), "1250.00", "Acme Services Ltd", "INV-0042"),
            (3, date(2026, 11, 3), "-45.60", "Shell", ""),
        ],
    ),
]


@pytest.mark.parametrize(("name", "profile", "count", "expected"), CASES, ids=[c[0] for c in CASES])
def test_a_real_variant_is_detected_and_read(
    name: str, profile: str, count: int, expected: list[Line]
) -> None:
    path = VARIANTS / name
    detection, _head, _encoding = detect_layout(path.read_bytes(), where=name)
    assert detection.profile.name == profile
    statement = read_statement(path, today=TODAY)
    assert statement.profile.name == profile
    assert statement.count == count
    assert statement.bad_lines == []
    assert statement.balance_issues == []
    rows = {row["line"]: row for row in statement.lines.to_pylist()}
    for line, day, amount, payer, reference in expected:
        row = rows[line]
        assert row["date"] == day, line
        assert pounds(row["amount"]) == Decimal(amount), line
        assert payer in row["payer"], line
        assert reference in row["reference"], line


def test_revolut_business_newest_export_books_only_completed_lines() -> None:
    statement = read_statement(VARIANTS / "revolut_business_2025_local_dates_bom.csv", today=TODAY)
    assert statement.encoding == "utf-8-sig"
    assert [(s.line, s.reason) for s in statement.skipped] == [(3, "not booked (PENDING)")]


def test_wise_title_line_is_preamble_not_a_bad_line() -> None:
    statement = read_statement(VARIANTS / "wise_business_2025_title_line.csv", today=TODAY)
    assert statement.detection.endswith("after 1 line(s) of preamble")


def test_barclays_net_two_digit_year_export_is_refused_not_misread() -> None:
    # Barclays.Net (Barclays' corporate channel) writes dd/mm/yy dates: billops refuses
    # two-digit years (docs/conventions.md §3), so no profile may claim this file.
    with pytest.raises(UnknownLayout):
        read_statement(VARIANTS / "barclays_net_two_digit_years.csv", today=TODAY)


def test_lloyds_header_with_a_trailing_comma_reads_rows_without_one() -> None:
    statement = read_statement(VARIANTS / "lloyds_2015_header_trailing_comma.csv", today=TODAY)
    assert statement.profile.name == "lloyds"
    assert [pounds(a) for a in statement.lines.column("amount").to_pylist()] == [
        Decimal("1250.00"),
        Decimal("-65.00"),
    ]


def test_barclays_tab_memo_keeps_the_whole_reference() -> None:
    statement = read_statement(VARIANTS / "barclays_2024_tab_memo.csv", today=TODAY)
    rows = {row["line"]: row for row in statement.lines.to_pylist()}
    assert rows[4]["reference"].startswith("SBS00001/123456789")
    assert rows[2]["reference"].startswith("ON 05 NOV")


def test_wise_transaction_history_export_is_read_with_signs_from_direction() -> None:
    statement = read_statement(VARIANTS / "wise_business_transaction_history.csv", today=TODAY)
    assert statement.profile.bank == "Wise Business"
    rows = {row["line"]: row for row in statement.lines.to_pylist()}
    assert pounds(rows[2]["amount"]) == Decimal("480.00")
    assert "Northwind" in rows[2]["payer"]
    assert pounds(rows[3]["amount"]) == Decimal("-12.50")


MIDATA_PROFILE = (
    "name: midata_semicolon\nbank: Santander UK (midata)\nsource: test\ndelimiter: ';'\n"
    "signature: [Date, Type, Merchant/Description, Debit/Credit, Balance]\n"
    "columns: {date: Date, type: Type, text: Merchant/Description, amount: Debit/Credit, "
    "balance: Balance}\nfooter_patterns: ['^Arranged overdraft limit']\n"
)


def test_santander_midata_is_read_by_a_profile_with_its_layout(tmp_path: Path) -> None:
    (tmp_path / "midata.yaml").write_text(MIDATA_PROFILE, encoding="utf-8")
    profile = load_profile(tmp_path / "midata.yaml")
    statement = read_statement(
        VARIANTS / "santander_midata_cp1252.csv", profile=profile, today=TODAY
    )
    assert statement.encoding == "cp1252"
    assert [pounds(a) for a in statement.lines.column("amount").to_pylist()] == [
        Decimal("1250.00"),
        Decimal("-3.01"),
    ]


def test_santander_midata_is_detected_by_a_shipped_profile() -> None:
    statement = read_statement(VARIANTS / "santander_midata_cp1252.csv", today=TODAY)
    assert "Santander" in statement.profile.bank
    assert statement.count == 2


def test_a_footer_pattern_leaves_out_only_the_lines_it_matches(tmp_path: Path) -> None:
    """The overdraft-limit line is left out; a short line the pattern does not match is still
    refused, naming its line."""
    data = (VARIANTS / "santander_midata_cp1252.csv").read_bytes()
    broken = tmp_path / "midata.csv"
    broken.write_bytes(data.replace(b"\r\n\r\n", b"\r\nTOTAL;9\r\n\r\n"))
    with pytest.raises(StatementRefused) as refused:
        read_statement(broken, today=TODAY)
    assert refused.value.line == 4
    assert "cells" in str(refused.value)


@pytest.mark.parametrize(
    ("edit", "why"),
    [
        ((",OUT,", ",SIDEWAYS,"), "'SIDEWAYS' is neither money in (IN) nor money out (OUT)"),
        (("Ltd,12.50,GBP", "Ltd,-12.50,GBP"), "sign where the direction gives it"),
    ],
    ids=["unknown direction", "signed amount"],
)
def test_a_line_the_direction_cannot_sign_is_refused_naming_it(
    tmp_path: Path, edit: tuple[str, str], why: str
) -> None:
    data = (VARIANTS / "wise_business_transaction_history.csv").read_text(encoding="utf-8")
    assert edit[0] in data
    path = tmp_path / "history.csv"
    path.write_text(data.replace(*edit), encoding="utf-8")
    with pytest.raises(StatementRefused) as refused:
        read_statement(path, today=TODAY)
    assert refused.value.line == 3
    assert why in str(refused.value)
