"""The plan, without a service: which calls, and which not (with the reason), from decisions and
what the ledger says billops did."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from typing import Any

from ledger import Operation, OperationState
from tasks.delinquency.evaluate import evaluate, standing_frame
from tasks.delinquency.plan import Action, CallStatus, Done, Plan, build_plan, operation_key
from tasks.delinquency.policy import parse_policy
from tasks.delinquency.snapshot import Snapshot

TODAY = date(2027, 4, 30)
BILLER = "biller-1"
POLICY = parse_policy(
    """\
name: t
states:
  - name: paused
    enter: [{days_overdue: 30}]
    leave: [{overdue_amount_below: 1}]
    on_enter: [pause_auto_collect, cancel_collection_on_failure]
    on_leave: [resume_collection]
"""
)


def request(pr: str, *, days_late: int = 40, status: str = "SCHEDULED", **fields: Any) -> dict:
    return {
        "kind": "payment_request",
        "item_id": pr,
        "number": f"PR-{pr}",
        "customer_id": "c1",
        "status": status,
        "due_on": TODAY - timedelta(days=days_late),
        "due_pence": fields.pop("due_pence", 5000),
        "collection_method": "AUTO_COLLECT",
        **fields,
    }


def op(
    action: Action, target: str, state: OperationState, period: str = "h1-x", **kw: Any
) -> Operation:
    now = datetime(2027, 4, 1, tzinfo=UTC)
    key = operation_key(BILLER, "c1", period, action, target) + f":{kw.pop('mandate', 'm1')}"
    return Operation(
        key=key,
        kind=f"delinquency.{action.value}",
        biller=BILLER,
        request_digest="d",
        state=state,
        remote_id=target,
        run_id="r",
        payload=None,
        result=None,
        error=kw.pop("error", None),
        attempts=1,
        created_at=now,
        updated_at=now,
        sent_at=now,
        settled_at=now,
    )


def plan_for(
    items: list[dict[str, Any]],
    ops: list[Operation] = (),  # type: ignore[assignment]
    standing: list[dict[str, Any]] = (),  # type: ignore[assignment]
    mandate: str = "ACTIVE",
    customer_paused: frozenset[str] = frozenset(),
) -> Plan:
    snapshot = Snapshot.from_records(
        biller=BILLER,
        as_of=TODAY,
        customers=[
            {"customer_id": "c1", "name": "One", "mandate_id": "m1", "mandate_status": mandate}
        ],
        items=items,
    )
    evaluation = evaluate(snapshot, POLICY, standing_frame(standing))
    done = Done.from_operations(BILLER, ops)
    return build_plan(
        evaluation, snapshot.items, biller=BILLER, done=done, customer_paused=customer_paused
    )


def calls(plan: Plan, action: Action) -> dict[str, tuple[CallStatus, str]]:
    return {c.target_id: (c.status, c.note) for c in plan.calls if c.action is action}


HELD = [
    {
        "customer_id": "c1",
        "state": "paused",
        "since": TODAY - timedelta(5),
        "hold_period": "h1-x",
        "hold_count": 1,
        "mandate_at_entry": "m1",
    }
]


def test_entering_a_pausing_state_pauses_every_open_direct_debit() -> None:
    plan = plan_for([request("p1"), request("p2", status="UNPAID", days_late=-3)])
    assert calls(plan, Action.PAUSE) == {
        "p1": (CallStatus.SEND, "pause AUTO_COLLECT"),
        "p2": (CallStatus.SEND, "pause AUTO_COLLECT"),
    }
    (first,) = [c for c in plan.to_send if c.target_id == "p1" and c.action is Action.PAUSE]
    assert first.key == f"delinquency:{BILLER}:c1:h1-2027-04-30:pause:p1:m1"
    assert first.amount == Decimal("50.00") and first.rule.startswith("entered paused")
    assert (plan.customers_changed, plan.amount_changed) == (1, Decimal("100.00"))


def test_on_demand_debts_paid_debts_and_an_invoices_own_row_are_left_alone() -> None:
    items = [
        request("p1"),
        request("od", collection_method="ON_DEMAND", status="UNPAID"),
        request("paid", status="PAID"),
        {**request("inv"), "kind": "invoice"},
    ]
    assert set(calls(plan_for(items), Action.PAUSE)) == {"p1"}


def test_submitted_is_deferred_and_no_usable_mandate_is_skipped_with_what_to_do() -> None:
    plan = plan_for([request("p1", status="SUBMITTED")])
    assert calls(plan, Action.PAUSE)["p1"][0] is CallStatus.DEFERRED
    skipped = calls(plan_for([request("p1")], mandate="CANCELLED"), Action.PAUSE)["p1"]
    assert skipped[0] is CallStatus.SKIPPED
    assert "mandate CANCELLED" in skipped[1] and "collect on demand" in skipped[1]


def test_what_a_person_paused_or_resumed_is_never_touched() -> None:
    items = [
        request("by-hand", auto_paused=True, auto_source="PAYMENT_REQUEST", auto_override="PAUSED"),
        request("customer-level", auto_paused=True, auto_source="CUSTOMER"),
        request("resumed", auto_override="RESUMED"),
    ]
    plan = plan_for(items)
    assert calls(plan, Action.PAUSE) == {
        "resumed": (CallStatus.SKIPPED, "collection resumed by a person: left collecting")
    }


def test_a_resume_billops_made_is_not_a_person_resuming() -> None:
    earlier = op(Action.RESUME, "p1", OperationState.CONFIRMED, period="h0-old")
    plan = plan_for([request("p1", auto_override="RESUMED")], ops=[earlier])
    assert calls(plan, Action.PAUSE)["p1"][0] is CallStatus.SEND


def test_a_held_customer_gets_new_debts_paused_and_done_ones_left() -> None:
    items = [
        request("old", auto_paused=True, auto_override="PAUSED"),
        request("new", days_late=-10),
        request("person-resumed", auto_override="RESUMED"),
    ]
    ops = [
        op(Action.PAUSE, "old", OperationState.CONFIRMED),
        op(Action.PAUSE, "person-resumed", OperationState.CONFIRMED),
    ]
    plan = plan_for(items, ops=ops, standing=HELD)
    pauses = calls(plan, Action.PAUSE)
    assert pauses["new"][0] is CallStatus.SEND
    assert "old" not in pauses  # done, and still paused: nothing to do
    assert pauses["person-resumed"] == (
        CallStatus.SKIPPED,
        "resumed by a person after billops paused it: left collecting",
    )
    assert next(c for c in plan.to_send if c.target_id == "new").period == "h1-x"


def test_a_call_refused_under_this_mandate_is_not_made_again_but_is_under_a_new_one() -> None:
    refused = op(Action.PAUSE, "p1", OperationState.FAILED, error="400 NOT ELIGIBLE")
    plan = plan_for([request("p1")], ops=[refused], standing=HELD)
    status, note = calls(plan, Action.PAUSE)["p1"]
    assert status is CallStatus.SKIPPED and "400 NOT ELIGIBLE" in note
    new_mandate = op(Action.PAUSE, "p1", OperationState.FAILED, mandate="m0")
    assert (
        calls(plan_for([request("p1")], ops=[new_mandate], standing=HELD), Action.PAUSE)["p1"][0]
        is CallStatus.SEND
    )


def test_an_unsettled_call_is_driven_to_its_end() -> None:
    open_op = op(Action.PAUSE, "p1", OperationState.UNKNOWN)
    plan = plan_for([request("p1")], ops=[open_op], standing=HELD)
    (call,) = [c for c in plan.to_send if c.action is Action.PAUSE]
    assert call.key == open_op.key


def test_an_unsettled_pause_a_person_resumed_since_is_left_and_settled_not_sent() -> None:
    open_op = op(Action.PAUSE, "p1", OperationState.UNKNOWN)
    plan = plan_for([request("p1", auto_override="RESUMED")], ops=[open_op], standing=HELD)
    (call,) = [c for c in plan.calls if c.action is Action.PAUSE]
    assert (call.status, call.settles, call.key) == (CallStatus.SKIPPED, True, open_op.key)
    assert call.note.startswith("collection resumed by a person: left collecting")
    assert plan.to_send == [c for c in plan.to_send if c.action is not Action.PAUSE]
    assert plan.to_settle == [call]
    # A resume billops made itself is no person's: the attempt is finished as before.
    ours = op(Action.RESUME, "p1", OperationState.CONFIRMED, period="h0-old")
    again = plan_for([request("p1", auto_override="RESUMED")], ops=[open_op, ours], standing=HELD)
    (finish,) = [c for c in again.to_send if c.action is Action.PAUSE]
    assert finish.key == open_op.key and not finish.settles and again.to_settle == []


def test_leaving_resumes_only_what_billops_paused_and_is_still_paused() -> None:
    items = [
        request("ours", days_late=-5, auto_paused=True, auto_override="PAUSED"),
        request("ours-resumed-by-person", days_late=-5, auto_override="RESUMED"),
        request("by-hand", days_late=-5, auto_paused=True, auto_override="PAUSED"),
    ]
    ops = [
        op(Action.PAUSE, t, OperationState.CONFIRMED)
        for t in ("ours", "ours-resumed-by-person", "gone")
    ]
    plan = plan_for(items, ops=ops, standing=HELD)
    decision = plan.evaluation.decision("c1")
    assert decision["move"] == "leave" and decision["release"]
    assert calls(plan, Action.RESUME) == {"ours": (CallStatus.SEND, "resume AUTO_COLLECT")}
    assert plan.holds_kept_open == frozenset()
    (resume,) = plan.to_send
    assert resume.period == "h1-x" and resume.key.endswith(":h1-x:resume:ours:m1")


def test_a_customer_level_pause_or_no_mandate_keeps_the_hold_open() -> None:
    items = [request("ours", days_late=-5, auto_paused=True, auto_override="PAUSED")]
    ops = [op(Action.PAUSE, "ours", OperationState.CONFIRMED)]
    console = plan_for(items, ops=ops, standing=HELD, customer_paused=frozenset({"c1"}))
    status, note = calls(console, Action.RESUME)["ours"]
    assert status is CallStatus.SKIPPED and "paused in the console" in note
    assert console.holds_kept_open == {"c1"}
    no_mandate = plan_for(items, ops=ops, standing=HELD, mandate="CANCELLED")
    assert calls(no_mandate, Action.RESUME)["ours"][0] is CallStatus.DEFERRED
    assert no_mandate.holds_kept_open == {"c1"}


def test_a_hold_kept_open_is_resumed_once_possible() -> None:
    items = [request("ours", days_late=-5, auto_paused=True, auto_override="PAUSED")]
    ops = [op(Action.PAUSE, "ours", OperationState.CONFIRMED)]
    good_with_hold = [{**HELD[0], "state": "", "since": None}]
    plan = plan_for(items, ops=ops, standing=good_with_hold)
    assert plan.evaluation.decision("c1")["move"] == "none"
    assert calls(plan, Action.RESUME)["ours"][0] is CallStatus.SEND


def test_cancel_collection_on_failure_once_per_state_entry() -> None:
    plan = plan_for([request("p1"), request("p2", status="UNPAID")])
    assert set(calls(plan, Action.CANCEL_ON_FAILURE)) == {"p1"}  # only what is being collected
    (cancel,) = [c for c in plan.to_send if c.action is Action.CANCEL_ON_FAILURE]
    assert cancel.key == f"delinquency:{BILLER}:c1:paused@{TODAY.isoformat()}:cancel-on-failure:p1"


def test_the_cap_counts_customers_and_pounds() -> None:
    plan = plan_for([request("p1"), request("p2")])
    assert plan.over_cap(5, Decimal("1000.00")) == []
    assert plan.over_cap(1, Decimal("100.00")) == []  # at the cap is within it
    assert plan.over_cap(0, Decimal("99.99")) == [
        "1 customers (cap 0)",
        "£100.00 (cap £99.99)",
    ]
