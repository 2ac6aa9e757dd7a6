"""The three checks, the balance and the journal on a hand-written payout report, bank credits and
the service's answer (no Prefect, no sandbox): a late failure paid out then deducted, a payout
split in two credits, a credit a penny short, a payout still in transit; items the service
disagrees with; the tie-out per day and per month (and the roll-up file); the in-transit balance
on any day from the ledger; every journal balancing, with the deduction against the failed
invoice."""

from __future__ import annotations

import csv
from collections.abc import Sequence
from datetime import date, timedelta
from pathlib import Path

import pandas as pd
import pytest

from ledger import Ledger
from ledger.payouts import PayoutCredit
from tasks.payouts import (
    IN_TRANSIT,
    ITEM_MISMATCH,
    MATCHED,
    WITH_DIFFERENCE,
    Reconciliation,
    Scope,
    in_transit_on,
    read_payout_report,
    reconcile,
)
from tasks.payouts._balance import balance
from tasks.payouts._credits import credits_frame
from tasks.payouts._journal import journal_frame, journal_lines
from tasks.payouts._profiles import SHIPPED, load_report_profile
from tasks.payouts._service import DOCUMENT_COLUMNS
from tasks.payouts.report import report_files, summary_markdown, write_rollup
from tasks.payouts.settings import JournalAccounts
from tasks.payouts.steps import keep_report, keep_results
from tests.support.ledger_db import clock, ledger, ledger_url

__all__ = ["clock", "ledger", "ledger_url"]

HEADER = (
    "Payout ID,Bank reference,Arrival date,Payout amount,Item type,Invoice number,"
    "Payment request number,Payment ID,Customer name,Item amount"
)
MARCH = [
    "po-1,ADFIN-PO-000001,2027-03-01,150.00,PAYMENT,,PR-1,pay-1,Jane,100.00",
    "po-1,ADFIN-PO-000001,2027-03-01,150.00,PAYMENT,,PR-2,pay-2,Lee,50.00",
    "po-2,ADFIN-PO-000002,2027-03-02,30.00,PAYMENT,,PR-3,pay-3,Jill,80.00",
    "po-2,ADFIN-PO-000002,2027-03-02,30.00,DEDUCTION,,PR-2,pay-2,Lee,-50.00",
    "po-3,ADFIN-PO-000003,2027-03-03,200.00,PAYMENT,,PR-4,pay-4,Jane,200.00",
    "po-4,ADFIN-PO-000004,2027-03-04,60.00,PAYMENT,,PR-5,pay-5,Jill,60.00",
    "po-5,ADFIN-PO-000005,2027-03-10,70.00,PAYMENT,,PR-6,pay-6,Jane,70.00",
]
CREDITS = [  # key, day, pennies, reference
    ("c1", date(2027, 3, 1), 15_000, "ADFIN-PO-000001"),
    ("c2", date(2027, 3, 2), 3_000, "ADFIN-PO-000002"),
    ("c3a", date(2027, 3, 3), 12_000, "ADFIN-PO-000003 1/2"),
    ("c3b", date(2027, 3, 3), 8_000, "ADFIN-PO-000003 2/2"),
    ("c4", date(2027, 3, 4), 5_999, "ADFIN-PO-000004"),
]
DOCUMENTS = [  # number, status, total, paid (pennies), last changed
    ("PR-1", "SETTLED", 10_000, 10_000, date(2027, 3, 1)),
    ("PR-2", "UNPAID", 5_000, 0, date(2027, 3, 1)),  # paid, paid out, then failed late
    ("PR-3", "SETTLED", 8_000, 8_000, date(2027, 3, 2)),
    ("PR-4", "SETTLED", 20_000, 20_000, date(2027, 3, 3)),
    ("PR-5", "SETTLED", 6_000, 6_000, date(2027, 3, 4)),
    ("PR-6", "PAID", 7_000, 7_000, date(2027, 3, 8)),
]
COVERAGE = (date(2027, 2, 22), date(2027, 3, 10))
MONEYLESS = ("period", "from", "to")


def _report(folder: Path, rows: Sequence[str], name: str = "payouts.csv") -> Path:
    path = folder / name
    path.write_text("\r\n".join([HEADER, *rows]) + "\r\n", encoding="utf-8")
    return path


def _credits(rows: Sequence[tuple[str, date, int, str]]) -> list[PayoutCredit]:
    return [
        PayoutCredit(key, day, pennies, "ADFIN", reference, "", "sha", n + 2)
        for n, (key, day, pennies, reference) in enumerate(rows)
    ]


def _documents(rows: Sequence[tuple[str, str, int, int, date]]) -> pd.DataFrame:
    return pd.DataFrame(
        [("payment_request", n, f"id-{n}", s, t, p, d) for n, s, t, p, d in rows],
        columns=list(DOCUMENT_COLUMNS),
    )


def _reconcile(
    folder: Path,
    rows: Sequence[str] = MARCH,
    credits: Sequence[tuple[str, date, int, str]] = CREDITS,
    documents: Sequence[tuple[str, str, int, int, date]] = DOCUMENTS,
) -> Reconciliation:
    sandbox = load_report_profile(SHIPPED / "sandbox.yaml", origin="shipped")
    report = read_payout_report(_report(folder, rows), profile=sandbox)
    scope = Scope(
        first=date(2027, 3, 1),
        last=date(2027, 3, 10),
        payouts=report.payouts,
        items=report.items,
        credits=credits_frame(_credits(credits)),
        coverage=COVERAGE,
        documents=_documents(documents),
        history=report.items,
        window=3,
    )
    return reconcile(scope)


def _payouts(reconciliation: Reconciliation) -> dict[str, dict[str, object]]:
    return {str(r["payout_id"]): r for r in reconciliation.payouts.to_dict("records")}


def test_each_payout_is_checked_three_ways(tmp_path: Path) -> None:
    found = _payouts(_reconcile(tmp_path))

    assert {p: r["state"] for p, r in found.items()} == {
        "po-1": MATCHED,
        "po-2": MATCHED,
        "po-3": MATCHED,
        "po-4": WITH_DIFFERENCE,
        "po-5": IN_TRANSIT,
    }
    assert "split in 2 credits" in str(found["po-3"]["bank_how"])
    assert found["po-4"]["bank_difference"] == -1 and "£0.01 less" in str(found["po-4"]["reasons"])
    assert "not on the bank statements yet (0 working day(s) old" in str(found["po-5"]["reasons"])
    # The late failure: the deduction names the payment and the payout that paid it out, and
    # the payment paid out is shown with the deduction that took it back.
    assert str(found["po-2"]["deduction_notes"]) == (
        "takes back payment pay-2 of PR-2 (£50.00) paid out in payout ADFIN-PO-000001 on "
        "2027-03-01; PR-2 is UNPAID now"
    )
    assert all(r["bad_items"] == 0 and r["items_difference"] == 0 for r in found.values())


def test_items_the_service_disagrees_with_and_payouts_that_do_not_add_up(tmp_path: Path) -> None:
    as_of = COVERAGE[1]
    rows = [
        # Its items add up to £30.00, not the £30.01 it says.
        "po-6,ADFIN-PO-000006,2027-03-08,30.01,PAYMENT,,PR-7,pay-7,Jane,30.00",
        # A deduction of a payment no payout billops has seen paid out.
        "po-7,ADFIN-PO-000007,2027-03-08,10.00,PAYMENT,,PR-8,pay-8,Jane,20.00",
        "po-7,ADFIN-PO-000007,2027-03-08,10.00,DEDUCTION,,PR-9,pay-9,Lee,-10.00",
        # Not at the service; settled for less than paid out; unpaid again lately (the next
        # payout will deduct it); unpaid for weeks and never deducted.
        "po-8,ADFIN-PO-000008,2027-03-09,100.00,PAYMENT,,PR-404,pay-10,Jill,10.00",
        "po-8,ADFIN-PO-000008,2027-03-09,100.00,PAYMENT,,PR-11,pay-11,Jill,20.00",
        "po-8,ADFIN-PO-000008,2027-03-09,100.00,PAYMENT,,PR-12,pay-12,Jill,30.00",
        "po-8,ADFIN-PO-000008,2027-03-09,100.00,PAYMENT,,PR-13,pay-13,Jill,40.00",
    ]
    documents = [
        ("PR-7", "SETTLED", 3_000, 3_000, as_of),
        ("PR-8", "SETTLED", 2_000, 2_000, as_of),
        ("PR-9", "UNPAID", 1_000, 0, as_of),
        ("PR-11", "SETTLED", 1_000, 1_000, as_of),
        ("PR-12", "UNPAID", 3_000, 0, as_of - timedelta(days=1)),
        ("PR-13", "UNPAID", 4_000, 0, as_of - timedelta(days=30)),
    ]
    reconciliation = _reconcile(tmp_path, rows, credits=[], documents=documents)
    found = _payouts(reconciliation)
    notes = {
        str(r["doc"]): (bool(r["ok"]), str(r["note"]))
        for r in reconciliation.items.to_dict("records")
    }

    assert {p: r["state"] for p, r in found.items()} == dict.fromkeys(found, ITEM_MISMATCH)
    assert "(difference £0.01)" in str(found["po-6"]["reasons"])
    assert notes["PR-9"] == (
        False,
        "takes back £10.00 of PR-9, a payment billops has not seen paid out: load the report of "
        "the payout that paid it out",
    )
    assert notes["PR-404"] == (False, "PR-404 is not found at the service")
    assert notes["PR-11"] == (False, "£20.00 paid out, but PR-11 shows £10.00 paid")
    assert notes["PR-12"][0] and "the next payout should deduct it" in notes["PR-12"][1]
    assert not notes["PR-13"][0]
    assert "no payout has deducted this payment in 10 working days" in notes["PR-13"][1]
    assert found["po-8"]["bad_items"] == 3


def test_the_balance_ties_out_per_day_and_per_month(tmp_path: Path) -> None:
    reconciliation = _reconcile(tmp_path)

    money = balance(reconciliation, opening=0)

    assert (money.collected, money.deductions, money.paid_out) == (56_000, 5_000, 43_999)
    assert money.closing == money.opening + money.collected - money.deductions - money.paid_out
    assert (money.closing, money.awaiting, money.differences, money.earlier) == (7_001, 7_000, 1, 0)
    by_day = dict(zip(money.daily["day"], money.daily["in_transit"], strict=True))
    assert by_day[date(2027, 3, 3)] == 0 and by_day[date(2027, 3, 4)] == 1
    assert by_day[date(2027, 3, 10)] == 7_001 and len(by_day) == 10
    (month,) = money.monthly().to_dict("records")
    assert month == {
        "month": "2027-03",
        "opening": 0,
        "collected": 56_000,
        "deductions": 5_000,
        "paid_out": 43_999,
        "in_transit": 7_001,
    }
    files = report_files(tmp_path, "payouts")
    summary = "\n".join(summary_markdown(reconciliation, money, {}, files, biller="b"))
    assert "**= in transit on 2027-03-10 (closing)** | **£70.01**" in summary
    assert f"![payouts and bank credits by day]({files.picture.as_uri()})" in summary

    with write_rollup(money, files).open(encoding="utf-8-sig", newline="") as handle:
        rollup = list(csv.DictReader(handle))
    assert len(rollup) == 11 and rollup[-1] == {
        "period": "month",
        "from": "2027-03-01",
        "to": "2027-03-10",
        "opening_in_transit": "0.00",
        "collected": "560.00",
        "deductions": "50.00",
        "paid_out": "439.99",
        "closing_in_transit": "70.01",
    }
    for row in rollup:
        cents = {k: round(float(v) * 100) for k, v in row.items() if k not in MONEYLESS}
        moved = cents["collected"] - cents["deductions"] - cents["paid_out"]
        assert cents["opening_in_transit"] + moved == cents["closing_in_transit"], row
    assert rollup[3]["from"] == "2027-03-04" and rollup[3]["closing_in_transit"] == "0.01"


def test_every_journal_balances_and_a_deduction_is_owed_on_its_invoice(tmp_path: Path) -> None:
    accounts = JournalAccounts()
    journal = journal_frame(list(journal_lines(_reconcile(tmp_path), accounts)))
    pennies = journal.assign(
        debit=[round(float(v or 0) * 100) for v in journal["debit"]],
        credit=[round(float(v or 0) * 100) for v in journal["credit"]],
    )

    sums = pennies.groupby("journal")[["debit", "credit"]].sum()
    assert (sums["debit"] == sums["credit"]).all()
    assert sorted(sums.index) == [
        "ADFIN-PO-000001",
        "ADFIN-PO-000002",
        "ADFIN-PO-000002-D1",
        "ADFIN-PO-000003",
        "ADFIN-PO-000004",
    ]  # the payout in transit has no transfer yet
    deduction = pennies[pennies["journal"] == "ADFIN-PO-000002-D1"]
    assert deduction[["account", "debit", "credit", "document", "payment_id", "date"]].to_dict(
        "records"
    ) == [
        {
            "account": accounts.receivables_account,
            "debit": 5_000,
            "credit": 0,
            "document": "PR-2",
            "payment_id": "pay-2",
            "date": "2027-03-02",
        },
        {
            "account": accounts.clearing_account,
            "debit": 0,
            "credit": 5_000,
            "document": "PR-2",
            "payment_id": "pay-2",
            "date": "2027-03-02",
        },
    ]
    split = pennies[pennies["journal"] == "ADFIN-PO-000003"]
    assert sorted(split[split["account"] == accounts.bank_account]["debit"]) == [8_000, 12_000]
    short = pennies[pennies["journal"] == "ADFIN-PO-000004"]
    assert short[short["account"] == accounts.differences_account]["debit"].tolist() == [1]
    assert list(journal["date"]) == sorted(journal["date"])


def test_the_in_transit_balance_on_any_day_from_the_ledger(tmp_path: Path, ledger: Ledger) -> None:
    reconciliation = _reconcile(tmp_path)
    sandbox = load_report_profile(SHIPPED / "sandbox.yaml", origin="shipped")
    keep_report(ledger, "b", read_payout_report(_report(tmp_path, MARCH), profile=sandbox))

    money = keep_results(ledger, "b", reconciliation, run_id="r1")

    days = {date(2027, 2, 26): 0, date(2027, 3, 1): 0, date(2027, 3, 4): 1}
    days[date(2027, 3, 10)] = money.closing
    assert {day: in_transit_on(ledger, "b", day) for day in days} == days
    assert money.closing == 7_001


@pytest.mark.parametrize(("window", "state"), [(3, "missing_in_bank"), (4, IN_TRANSIT)])
def test_a_payout_without_credit_is_missing_once_older_than_the_window(
    tmp_path: Path, window: int, state: str
) -> None:
    """A payout four working days before the statement's last day, never credited."""
    rows = ["po-9,ADFIN-PO-000009,2027-03-04,10.00,PAYMENT,,PR-1,pay-1,Jane,10.00"]
    sandbox = load_report_profile(SHIPPED / "sandbox.yaml", origin="shipped")
    report = read_payout_report(_report(tmp_path, rows), profile=sandbox)
    scope = Scope(
        date(2027, 3, 1),
        date(2027, 3, 10),
        report.payouts,
        report.items,
        credits_frame([]),
        COVERAGE,
        _documents(DOCUMENTS),
        report.items,
        window=window,
    )

    (found,) = reconcile(scope).payouts["state"]

    assert found == state
