"""Sixty simulated days of a biller whose customers signed with every documented test account,
the job run every day on the sandbox's day, as its nightly schedule would:

- customers cross the policy's thresholds on the day the policy says (the second failed
  collection, twenty days overdue, the mandate cancelled) and are paused by that day's run;
- good payers are never paused; a debt raised while a customer is paused is paused on the next run;
- a paused customer who pays (on the card page, or by an imported payment) is resumed on the next
  run; a pause an operator made by hand is never resumed by billops;
- no call is made twice: a second run on the same day makes none, and the service saw exactly one
  call per operation the ledger recorded.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest

from ledger import OperationState
from tests.delinquency.conftest import START
from tests.delinquency.scenario import LONDON, Scenario, ok, write_policy

POLICY = """\
name: sixty-days
apply: {automatic: true, max_customers: 10, max_amount: "10000.00"}
states:
  - name: paused
    enter:
      all: [{unpaid_amount_at_least: "1.00"}]
      any:
        - failed_attempts: {count: 2, within_days: 60}
        - days_overdue: 20
        - mandate_status: [CANCELLED]
    leave:
      all: [{overdue_amount_below: "1.00"}, {mandate_status: [ACTIVE, PENDING]}]
    min_days: 2
    cooldown_days: 10
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
"""


def event_days(sc: Scenario, event_type: str, **match: str) -> list[date]:
    """London days of the biller's events of a type whose payload matches."""
    events = ok(
        sc.admin.http.get(
            "/_sandbox/webhooks/events",
            params={"billerId": sc.biller_id, "eventType": event_type, "limit": 1000},
        )
    )["events"]
    return [
        datetime.fromisoformat(e["occurredTime"]).astimezone(LONDON).date()
        for e in events
        if all(e["payload"].get(k) == v for k, v in match.items())
    ]


@pytest.mark.slow
def test_sixty_days_of_delinquency(scenario: Scenario, tmp_path: Path) -> None:
    sc = scenario
    policy = write_policy(tmp_path, POLICY)
    for label, account in (
        ("Jane", "pays"),
        ("Sam", "fails"),
        ("Carl", "cancels"),
        ("Lee", "late"),
    ):
        sc.customer(label, account if account != "late" else "fails_late")
    jane = [sc.invoice("Jane", "100.00", 7), sc.invoice("Jane", "80.00", 35)]
    sam_first, sam_later = sc.invoice("Sam", "100.00", 7), sc.invoice("Sam", "50.00", 45)
    sam_by_hand = sc.invoice("Sam", "30.00", 45)
    sc.invoice("Carl", "100.00", 7)
    carl_later = sc.invoice("Carl", "120.00", 40)
    lee_first, lee_later = sc.invoice("Lee", "100.00", 7), sc.invoice("Lee", "60.00", 50)

    entered: dict[str, date] = {}
    left: dict[str, date] = {}
    sam_new_debt: dict[str, Any] | None = None
    states: dict[date, dict[str, str]] = {}
    for _ in range(60):
        today = sc.advance(1)
        if today == START + timedelta(days=2):
            sc.pause_by_hand(sam_by_hand)  # an operator, in the console
        if "Sam" in entered and today == entered["Sam"] + timedelta(days=1):
            sam_new_debt = sc.invoice("Sam", "40.00", 30)  # raised while Sam is paused
        if "Sam" in entered and today == entered["Sam"] + timedelta(days=3):
            sc.pay_by_card(sam_first)
        if "Lee" in entered and today == entered["Lee"] + timedelta(days=3):
            sc.import_payment(lee_first)
        state, run = sc.run(policy)
        assert state.is_completed(), state.message
        states[today] = {label: sc.state_of(label) for label in sc.customers}
        for label, now in states[today].items():
            if now and label not in entered:
                entered[label] = today
            if not now and label in entered and label not in left:
                left[label] = today
        if today == START + timedelta(days=30):  # a second run the same day makes no call
            before = sc.calls()
            again, _ = sc.run(policy)
            assert again.name == "Nothing to do" and sc.calls() == before

    # Good payers are never paused, and billops never touched them.
    assert "Jane" not in entered
    assert all(not sc.auto_collect(inv)["paused"] for inv in jane if sc.request_of(inv))
    assert not [op for op in sc.operations() if sc.customers["Jane"]["id"] in op.key]

    # Thresholds crossed on the day the policy says.
    sam_request = sc.request_of(sam_first)["id"]
    failures = event_days(sc, "DD_PAYMENT_FAILED", paymentRequestId=sam_request)
    assert len(failures) >= 2 and entered["Sam"] == failures[1]
    assert entered["Lee"] == date.fromisoformat(lee_first["dueDate"]) + timedelta(days=20)
    cancelled = event_days(sc, "DIRECT_DEBIT_MANDATE_CANCELLED")
    assert cancelled and entered["Carl"] == cancelled[0]
    assert states[max(states)]["Carl"] == "paused"  # no usable mandate: never leaves
    assert not sc.auto_collect(carl_later)["paused"]  # and nothing could be paused for it

    # A debt raised while Sam was paused is paused by the next run.
    assert sam_new_debt is not None
    paused_ops = {
        op.key.split(":")[5]
        for op in sc.operations()
        if ":pause:" in op.key and op.state is OperationState.CONFIRMED
    }
    assert sc.request_of(sam_new_debt)["id"] in paused_ops
    assert sc.request_of(sam_later)["id"] in paused_ops

    # Paid (before that day's run): resumed by that run, the first after the payment.
    assert left["Sam"] == entered["Sam"] + timedelta(days=3)
    assert left["Lee"] == entered["Lee"] + timedelta(days=3)
    resumed = {
        op.key.split(":")[5]
        for op in sc.operations()
        if ":resume:" in op.key and op.state is OperationState.CONFIRMED
    }
    assert sc.request_of(sam_later)["id"] in resumed
    assert sc.request_of(lee_later)["id"] in resumed

    # The operator's pause stays: billops neither paused nor resumed it.
    hand = sc.request_of(sam_by_hand)
    assert sc.auto_collect(sam_by_hand)["override"] == "PAUSED"
    assert not [op for op in sc.operations() if hand["id"] in op.key]

    # Exactly one call per operation the ledger recorded as made.
    made = [op for op in sc.operations() if op.state is OperationState.CONFIRMED]
    calls = sc.calls()
    paused_by_billops = sum(":pause:" in op.key for op in made)
    assert calls["payment_requests.pause_collection"] == paused_by_billops + sc.by_hand
    assert calls["payment_requests.resume_collection"] == sum(":resume:" in op.key for op in made)
    assert all(op.attempts == 1 for op in made)
