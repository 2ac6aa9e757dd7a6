"""One period after another on one ledger (no Prefect, no sandbox): what an earlier period's run
settled stays settled when the next period's run looks at the days around its start, so the
in-transit balance carried from one period to the next stays right."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from pathlib import Path

import pandas as pd

from ledger import Ledger
from ledger.payouts import BankCoverage, PayoutCredit
from tasks.payouts import MATCHED, read_payout_report, reconcile
from tasks.payouts._profiles import SHIPPED, load_report_profile
from tasks.payouts._scope import gather
from tasks.payouts._service import DOCUMENT_COLUMNS
from tasks.payouts.steps import keep_report, keep_results
from tests.support.ledger_db import clock, ledger, ledger_url

__all__ = ["clock", "ledger", "ledger_url"]

HEADER = (
    "Payout ID,Bank reference,Arrival date,Payout amount,Item type,Invoice number,"
    "Payment request number,Payment ID,Customer name,Item amount"
)
BILLER = "b"


def _documents(invoices: set[str], requests: set[str], since: datetime) -> pd.DataFrame:
    """The service's answer: every payment request named is settled for what was paid out."""
    rows = [("payment_request", n, f"id-{n}", "SETTLED", 10_000, 10_000, None) for n in requests]
    return pd.DataFrame(rows, columns=list(DOCUMENT_COLUMNS))


def _month(
    ledger: Ledger, folder: Path, name: str, rows: Sequence[str], first: date, last: date
) -> tuple[int, int]:
    """Keep a month's payout report and reconcile the month: (opening, closing) in transit."""
    path = folder / name
    path.write_text("\r\n".join([HEADER, *rows]) + "\r\n", encoding="utf-8")
    sandbox = load_report_profile(SHIPPED / "sandbox.yaml", origin="shipped")
    report = read_payout_report(path, profile=sandbox)
    keep_report(ledger, BILLER, report)
    scope = gather(ledger, _documents, BILLER, (first, last), report=report, window=3)
    money = keep_results(ledger, BILLER, reconcile(scope), run_id=name)
    return money.opening, money.closing


def test_a_credit_the_last_period_matched_stays_matched(tmp_path: Path, ledger: Ledger) -> None:
    """February's last payout (Monday 22nd) is credited on Tuesday 23rd, one working day later
    and inside the days March's run looks at before its start (its payouts reach back four
    working days, to the 23rd): that credit is February's, so March opens with nothing in
    transit and the credit stays matched. A credit after the period that pays none of its
    payouts is the next period's to judge: no result is kept for it."""
    credits = [
        PayoutCredit("c-feb", date(2027, 2, 23), 10_000, "ADFIN", "ADFIN-PO-F", "", "s", 2),
        PayoutCredit("c-mar", date(2027, 3, 1), 5_000, "ADFIN", "ADFIN-PO-M", "", "s", 3),
    ]
    ledger.record_payout_credits(
        BILLER, credits, BankCoverage("s", date(2027, 2, 1), date(2027, 3, 10), 9)
    )
    february = ["po-f,ADFIN-PO-F,2027-02-22,100.00,PAYMENT,,PR-1,pay-1,Jane,100.00"]
    march = ["po-m,ADFIN-PO-M,2027-03-01,50.00,PAYMENT,,PR-2,pay-2,Jill,50.00"]

    feb = _month(ledger, tmp_path, "feb.csv", february, date(2027, 2, 1), date(2027, 2, 28))
    after_february = {r.subject_id: r.state for r in ledger.payout_results(BILLER)}
    mar = _month(ledger, tmp_path, "mar.csv", march, date(2027, 3, 1), date(2027, 3, 31))

    assert after_february == {"po-f": MATCHED, "c-feb": MATCHED}
    results = {r.subject_id: r for r in ledger.payout_results(BILLER)}
    assert results["c-feb"].state == MATCHED and results["c-feb"].linked == ("po-f",)
    assert results["c-mar"].first_state == MATCHED
    assert (feb, mar) == ((0, 0), (0, 0))
