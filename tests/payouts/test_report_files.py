"""Reading payout reports: the sandbox's layout, another layout through a YAML file (no code
change), and every kind of broken report refused whole with file, line, column and reason."""

from __future__ import annotations

from pathlib import Path

import pytest

from tasks.payouts import PayoutReportRefused, is_payout_report, read_payout_report
from tasks.payouts._profiles import ReportProfileError, load_report_profile

HEADER = (
    "Payout ID,Bank reference,Arrival date,Payout amount,Item type,Invoice number,"
    "Payment request number,Payment ID,Customer name,Item amount"
)
ROWS = [
    "po-1,ADFIN-PO-AAAAAA,2027-03-03,288.39,PAYMENT,,PR-14,pay-1,Jack Wilson,288.39",
    "po-2,ADFIN-PO-BBBBBB,2027-03-04,40.65,PAYMENT,INV-2,PR-2,pay-2,Jane Doe,80.40",
    "po-2,ADFIN-PO-BBBBBB,2027-03-04,40.65,PAYMENT,INV-7,PR-7,pay-3,Lee Late,60.25",
    "po-2,ADFIN-PO-BBBBBB,2027-03-04,40.65,DEDUCTION,INV-6,PR-6,pay-0,Lee Late,-100.00",
]


def write(folder: Path, rows: list[str], header: str = HEADER, name: str = "payouts.csv") -> Path:
    path = folder / name
    path.write_text("\r\n".join([header, *rows]) + "\r\n", encoding="utf-8")
    return path


def test_the_sandbox_layout_reads_payouts_and_signed_items(tmp_path: Path) -> None:
    report = read_payout_report(write(tmp_path, ROWS))

    assert report.profile == "sandbox"
    assert report.payouts[["payout_id", "amount", "gross", "deductions", "items"]].to_dict(
        "records"
    ) == [
        {"payout_id": "po-1", "amount": 28839, "gross": 28839, "deductions": 0, "items": 1},
        {"payout_id": "po-2", "amount": 4065, "gross": 14065, "deductions": 10000, "items": 3},
    ]
    assert list(report.items["line"]) == [2, 3, 4, 5]
    assert list(report.items["kind"]) == ["PAYMENT", "PAYMENT", "PAYMENT", "DEDUCTION"]
    assert is_payout_report(write(tmp_path, ROWS, name="again.csv")) is None


def test_another_layout_is_a_yaml_file_in_the_users_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    (home / "payout-profiles").mkdir(parents=True)
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    (home / "payout-profiles" / "console.yaml").write_text(
        "name: console\n"
        "source: a test's own layout\n"
        "columns:\n"
        "  payout_id: [Payout]\n"
        "  reference: [Bank ref]\n"
        "  arrival_date: [Paid on]\n"
        "  payout_amount: [Payout total]\n"
        "  item_type: [Line]\n"
        "  item_amount: [Line amount]\n"
        "  payment_request_number: [Request]\n"
        "item_types:\n"
        "  PAYMENT: [Collected]\n"
        "  DEDUCTION: [Failed payment deduction]\n"
        "deductions: positive\n",
        encoding="utf-8",
    )
    text = (
        "Payout;Bank ref;Paid on;Payout total;Line;Line amount;Request\n"
        'po-2;ADFIN-PO-BBBBBB;04/03/2027;£40.65;Collected;"£80.40";PR-2\n'
        "po-2;ADFIN-PO-BBBBBB;04/03/2027;£40.65;collected;60.25;PR-7\n"
        "po-2;ADFIN-PO-BBBBBB;04/03/2027;£40.65;Failed payment deduction;£100.00;PR-6\n"
    )
    path = tmp_path / "console.csv"
    path.write_bytes(text.encode("cp1252"))

    report = read_payout_report(path)

    assert report.profile == "console"
    assert list(report.items["amount"]) == [8040, 6025, -10000]
    assert report.payouts["amount"].tolist() == [4065]
    assert str(report.payouts["arrival_date"].iloc[0]) == "2027-03-04"


def test_a_unicode_minus_and_thin_spaces_are_read_as_people_mean_them(tmp_path: Path) -> None:
    rows = [r.replace("-100.00", "\u2212100.00") for r in ROWS]
    rows[0] = rows[0].replace(",288.39,P", ",\u2009288.39,P")
    report = read_payout_report(write(tmp_path, rows))

    assert list(report.items["amount"]) == [28839, 8040, 6025, -10000]


BROKEN = [
    (["po-1,ADFIN-PO-A,2027-02-30,1.00,PAYMENT,,PR-1,p1,A,1.00"], "line 2, column 'Arrival date'"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,PR-1,p1,A,1.005"], "at most 2 decimal places"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,PR-1,p1,A,one"], "column 'Item amount'"),
    # Written plainly (-12.50), an amount over the £10bn any payout is refused as its other
    # spellings (£1,234.50) are, not read as pennies.
    (
        ["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,PR-1,p1,A,9999999999999.99"],
        "line 2, column 'Item amount' ('9999999999999.99'): '9999999999999.99' is too large",
    ),
    # "+-1.00" lost both marks and was read as £1.00 paid.
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,PR-1,p1,A,+-1.00"], "has more than one sign"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,PR-1,p1,A,(1.00"], "column 'Item amount'"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,REFUND,,PR-1,p1,A,1.00"], "is not a line type"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,PR-1,p1,A,-1.00"], "cannot have a negative"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,DEDUCTION,,PR-1,p1,A,1.00"], "must be negative"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,,,A,1.00"], "names no invoice, payment request"),
    (["po-1,ADFIN-PO-A,2027-03-03,,PAYMENT,,PR-1,p1,A,1.00"], "column 'Payout amount': is empty"),
    (["po-1,ADFIN-PO-A,2027-03-03,1.00,PAYMENT,,PR-1,p1,A,1.00,extra"], "more cells than"),
    (
        [
            "po-1,ADFIN-PO-A,2027-03-03,2.00,PAYMENT,,PR-1,p1,A,1.00",
            "po-1,ADFIN-PO-A,2027-03-04,2.00,PAYMENT,,PR-2,p2,A,1.00",
        ],
        "line 3, column 'Arrival date' ('2027-03-04'): differs from the first line of payout po-1",
    ),
    (
        [
            "po-1,ADFIN-PO-A,2027-03-03,2.00,PAYMENT,,PR-1,p1,A,1.00",
            "po-1,ADFIN-PO-A,2027-03-03,2.00,PAYMENT,,PR-1,p1,A,1.00",
        ],
        "line 3, column 'Payment ID' ('p1'): appears twice in payout po-1",
    ),
]


@pytest.mark.parametrize(("rows", "reason"), BROKEN, ids=lambda v: str(v)[:40])
def test_a_broken_report_is_refused_naming_file_line_and_column(
    tmp_path: Path, rows: list[str], reason: str
) -> None:
    path = write(tmp_path, rows)

    with pytest.raises(PayoutReportRefused) as refused:
        read_payout_report(path)

    assert str(path) in str(refused.value) and reason in str(refused.value)
    assert "nothing was kept" in str(refused.value)


def test_files_that_are_not_payout_reports_are_refused(tmp_path: Path) -> None:
    statement = tmp_path / "statement.csv"
    statement.write_text(
        "Date,Type,Counterparty,Reference,Amount,Balance\n2027-03-01,BACS,A,B,1.00,2\n"
    )
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(b"\x00\x01\x02payout")

    assert "not a payout report billops knows" in str(is_payout_report(statement))
    assert "required column missing" in str(is_payout_report(statement))
    assert "is empty" in str(is_payout_report(empty))
    assert "binary" in str(is_payout_report(binary))
    assert "cannot be read" in str(is_payout_report(tmp_path / "missing.csv"))


def test_a_report_of_a_period_without_payouts_is_empty_not_refused(tmp_path: Path) -> None:
    report = read_payout_report(write(tmp_path, []))

    assert report.payouts.empty and report.items.empty and report.first_day is None


def test_a_broken_layout_file_names_the_file_and_the_key(tmp_path: Path) -> None:
    path = tmp_path / "bad.yaml"
    path.write_text("name: bad\nsource: x\ncolumns:\n  payout_id: [A]\n  colour: [B]\n")

    with pytest.raises(
        ReportProfileError, match=r"bad.yaml: columns: .*unknown field\(s\) \['colour'\]"
    ):
        load_report_profile(path)
