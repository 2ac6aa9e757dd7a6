"""Sixty simulated days of a biller whose customers pay by direct debit with the documented test
accounts (one pays, one fails and pays by card instead, one fails late), the job run every ten
days on that morning's downloads — the payout export up to today, the bank statement up to
yesterday (a bank's statement shows days that are over) — and once more the next morning
(``make soak``; about a minute on a loaded 2-core machine). The default suite's short version
runs the job on the shared month's downloads (52 days of the same customers) and the next
morning's statement, with no clock moved:

- every payout on the statement is matched to its credit, the others are in transit;
- every deduction is explained by the payment the sandbox failed late;
- the in-transit balance at the end equals the payouts the sandbox paid that the statement does
  not show yet, and the roll-up ties out;
- the next morning's run moves yesterday's in-transit payouts to matched without adding a row.
"""

from __future__ import annotations

from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pytest

from tasks.payouts import IN_TRANSIT, MATCHED
from tasks.payouts._profiles import DEDUCTION
from tests.payouts.scenario import (
    Month,
    PayoutScenario,
    payout_total,
    pennies,
    standard_customers,
    yesterday,
)


def _read(path: str) -> list[dict[str, str]]:
    import csv

    with Path(path).open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


@pytest.mark.slow
def test_sixty_days_of_payouts(payouts: PayoutScenario) -> None:
    sc = payouts
    invoices = standard_customers(sc.base)
    run: Any = None
    for step in range(6):
        today = sc.advance(10)
        if step == 0:
            sc.base.pay_by_card(invoices["Sam"][0])  # the failing payer pays by card instead
        if step == 5:  # the last morning is one with a payout today: it is in transit
            while not any(p["arrivalDate"] == str(today) for p in sc.paid_payouts()):
                today = sc.advance(1)
        report = sc.payout_report(today)
        bank = sc.bank_statement(yesterday(today), layout="barclays")
        state, run = sc.run(report, bank)
        assert state.is_completed(), state.message
        assert run.state == "Reconciled", (run.message, _read(run.files["exceptions"]))

    truth = sc.paid_payouts()
    assert len(truth) >= 6, "sixty days of collections must make payouts"
    payout_results = sc.results("payout")
    statement_end = yesterday(today)
    for payout in truth:
        result = payout_results[payout["id"]]
        arrived = payout["arrivalDate"] <= str(statement_end)
        assert result.state == (MATCHED if arrived else IN_TRANSIT), (payout, result)
    # Every deduction is the payment the sandbox failed late, shown with it.
    failed = sc.late_failures()
    assert failed, "the late-failing payer's debit must fail late"
    rows = _read(run.files["reconciliation"])
    deductions = [i for p in truth for i in p["items"] if i["type"] == DEDUCTION]
    assert {d["paymentId"] for d in deductions} == failed
    explained = " ".join(r["deductions_explained"] for r in rows)
    for payment in failed:
        assert f"takes back payment {payment}" in explained
    # The balance: what the statement does not show yet, tying out.
    assert run.closing == payout_total(truth, after=statement_end) > 0
    assert run.opening + run.collected - run.deductions - run.paid_out == run.closing
    assert run.deductions == sum(-pennies(d["amount"]) for d in deductions)

    # The next morning: yesterday's payouts arrive on the statement; nothing is duplicated.
    waiting = [r for r in payout_results.values() if r.state == IN_TRANSIT]
    assert waiting, "the statement up to yesterday leaves today's payouts in transit"
    next_day = sc.advance(1)
    state, again = sc.run(sc.payout_report(next_day), sc.bank_statement(today, layout="barclays"))
    assert state.is_completed(), state.message
    after = sc.results("payout")
    for result in waiting:
        assert after[result.subject_id].state == MATCHED
        assert after[result.subject_id].first_state == IN_TRANSIT
    truth = sc.paid_payouts()
    counts = sc.ledger_counts()
    assert counts["ledger_payouts"] == len(truth)
    assert counts["payout_items"] == sum(len(p["items"]) for p in truth)
    assert counts["ledger_payout_results"] == len(truth) + counts["ledger_payout_credits"]
    assert counts["ledger_payout_credits"] == sum(
        1 for p in truth if p["arrivalDate"] <= str(today)
    )


def test_a_month_of_payouts_and_the_next_morning(month: Month, fresh_ledger: Path) -> None:
    """The short version: the month's payout export with the statement that ends the day
    before its last payouts arrived, then the next morning's statement (they arrived)."""
    sc = month.scenario
    truth = sc.paid_payouts()
    arrivals = sorted({date.fromisoformat(p["arrivalDate"]) for p in truth})
    assert len(arrivals) >= 4, "fifty-two days of collections must make payouts"
    statement_end = arrivals[-1] - timedelta(days=1)
    bank = sc.bank_statement(statement_end, name=f"short-statement-{statement_end}.csv")

    state, run = sc.run(month.report, bank)

    assert state.is_completed() and run.state == "Reconciled", (run.message, run.files)
    results = sc.results("payout")
    for payout in truth:
        arrived = payout["arrivalDate"] <= str(statement_end)
        assert results[payout["id"]].state == (MATCHED if arrived else IN_TRANSIT), payout
    failed = sc.late_failures()
    deductions = [i for p in truth for i in p["items"] if i["type"] == DEDUCTION]
    assert failed and {d["paymentId"] for d in deductions} == failed
    explained = " ".join(r["deductions_explained"] for r in _read(run.files["reconciliation"]))
    assert all(f"takes back payment {payment}" in explained for payment in failed)
    assert run.closing == payout_total(truth, after=statement_end) > 0
    assert run.opening + run.collected - run.deductions - run.paid_out == run.closing
    assert run.deductions == sum(-pennies(d["amount"]) for d in deductions)

    # The next morning: the last payouts are on the statement; nothing is duplicated.
    next_bank = sc.bank_statement(arrivals[-1], name=f"short-statement-{arrivals[-1]}.csv")
    state, again = sc.run(month.report, next_bank)

    assert state.is_completed() and again.state == "Reconciled", again.message
    after = sc.results("payout")
    waiting = [r for r in results.values() if r.state == IN_TRANSIT]
    assert waiting and all(after[r.subject_id].state == MATCHED for r in waiting)
    assert all(after[r.subject_id].first_state == IN_TRANSIT for r in waiting)
    assert again.closing == 0
    counts = sc.ledger_counts()
    assert counts["ledger_payouts"] == len(truth)
    assert counts["payout_items"] == sum(len(p["items"]) for p in truth)
    assert counts["ledger_payout_credits"] == len(truth)
    assert counts["ledger_payout_results"] == 2 * len(truth)
