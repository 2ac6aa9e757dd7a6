"""The payout tables on SQLite and PostgreSQL: a report kept once (its items rewritten only when
they change), credits kept once with the days their statement covered, results updated in place
(the first state and since when kept), the sums the balance is built from."""

from __future__ import annotations

from datetime import date

from ledger import Ledger
from ledger.payouts import BankCoverage, PayoutCredit, PayoutRecord, PayoutResult
from tests.support.ledger_db import FakeClock, clock, ledger, ledger_url

__all__ = ["clock", "ledger", "ledger_url"]

BILLER = "biller-1"


def _payout(pid: str, day: date, items: list[int], digest: str = "d1") -> PayoutRecord:
    return PayoutRecord(
        payout_id=pid,
        reference=f"ADFIN-PO-{pid.upper()}",
        arrival_date=day,
        amount_pennies=sum(items),
        gross_pennies=sum(i for i in items if i > 0),
        deduction_pennies=-sum(i for i in items if i < 0),
        item_count=len(items),
        items_digest=digest,
        report_sha256="sha",
    )


def _items(pid: str, amounts: list[int], payments: list[str]) -> list[tuple[object, ...]]:
    return [
        (pid, n, "PAYMENT" if a > 0 else "DEDUCTION", a, p, "", f"PR-{n}", "", "", "Cust", "")
        for n, (a, p) in enumerate(zip(amounts, payments, strict=True))
    ]


def test_a_report_is_kept_once_and_changed_items_replace_the_old(ledger: Ledger) -> None:
    first = [_payout("a", date(2027, 3, 1), [100, 200]), _payout("b", date(2027, 3, 2), [50])]
    items = _items("a", [100, 200], ["p1", "p2"]) + _items("b", [50], ["p3"])

    assert ledger.record_payout_report(BILLER, first, items).new == 2
    again = ledger.record_payout_report(BILLER, first, items)
    changed = [_payout("a", date(2027, 3, 1), [100, 200, -100], digest="d2")]
    rewrite = ledger.record_payout_report(
        BILLER, changed, _items("a", [100, 200, -100], ["p1", "p2", "p1"])
    )

    assert (again.new, again.changed, again.unchanged) == (0, 0, 2)
    assert (rewrite.new, rewrite.changed) == (0, 1)
    assert [i[3] for i in ledger.payout_items(BILLER, ["a"])] == [100, 200, -100]
    assert len(ledger.payout_items(BILLER, ["a", "b"])) == 4
    assert [
        p.payout_id for p in ledger.payouts_between(BILLER, date(2027, 3, 1), date(2027, 3, 1))
    ] == ["a"]
    assert ledger.payout_span(BILLER) == (date(2027, 3, 1), date(2027, 3, 2))
    assert ledger.payout_net_before(BILLER, date(2027, 3, 2)) == 200
    assert [i[0] for i in ledger.payout_deduction_items(BILLER)] == ["a"]
    assert {i[4] for i in ledger.payout_items_of_payments(BILLER, ["p1"])} == {"p1"}
    assert len(ledger.payout_items_of_documents(BILLER, ["PR-0"])) == 2
    assert ledger.payout_span("someone-else") is None


def test_a_payment_in_two_payouts_is_found(ledger: Ledger) -> None:
    payouts = [_payout("a", date(2027, 3, 1), [100]), _payout("b", date(2027, 3, 2), [100])]
    ledger.record_payout_report(
        BILLER, payouts, _items("a", [100], ["p1"]) + _items("b", [100], ["p1"])
    )

    assert ledger.payments_paid_out_twice(BILLER) == {"p1": ["a", "b"]}


def test_credits_are_kept_once_with_the_days_their_statement_covered(ledger: Ledger) -> None:
    credit = PayoutCredit("k1", date(2027, 3, 2), 300, "ADFIN", "ADFIN-PO-A", "", "s1", 7)
    coverage = BankCoverage("s1", date(2027, 3, 1), date(2027, 3, 5), 40)

    assert ledger.record_payout_credits(BILLER, [credit], coverage) == 1
    assert ledger.record_payout_credits(BILLER, [credit], coverage) == 0
    ledger.record_payout_credits(
        BILLER, [], BankCoverage("s2", date(2027, 2, 20), date(2027, 3, 9), 9)
    )

    assert ledger.payout_credits_between(BILLER, date(2027, 3, 1), date(2027, 3, 3)) == [credit]
    assert ledger.bank_coverage(BILLER) == (date(2027, 2, 20), date(2027, 3, 9))


def test_results_update_in_place_and_remember_where_they_started(
    ledger: Ledger, clock: FakeClock
) -> None:
    waiting = PayoutResult("payout", "a", "in_transit", date(2027, 3, 1), 300)
    ledger.record_payout_results(BILLER, [waiting], run_id="r1")
    started = ledger.payout_results(BILLER)[0].state_since
    clock.advance(days=1)
    ledger.record_payout_results(BILLER, [waiting], run_id="r2")
    assert ledger.payout_results(BILLER)[0].state_since == started
    clock.advance(days=1)
    matched = PayoutResult("payout", "a", "matched", date(2027, 3, 1), 300, linked=("k1",))
    credit = PayoutResult("credit", "k1", "matched", date(2027, 3, 2), 300, linked=("a",))
    ledger.record_payout_results(BILLER, [matched, credit], run_id="r3")

    (payout,) = ledger.payout_results(BILLER, "payout")
    assert (payout.state, payout.first_state, payout.run_id) == ("matched", "in_transit", "r3")
    assert payout.state_since is not None and started is not None and payout.state_since > started
    assert len(ledger.payout_results(BILLER)) == 2
    assert ledger.paid_out_before(BILLER, date(2027, 3, 2)) == 0
    assert ledger.paid_out_before(BILLER, date(2027, 3, 3)) == 300
