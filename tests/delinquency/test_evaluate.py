"""The policy's evaluation, without a service: each condition, the ordering of states, scope,
hysteresis, expiry, holds, and the reasons each decision carries."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, timedelta
from typing import Any

import pytest

from tasks.delinquency.evaluate import GOOD, Evaluation, evaluate, standing_frame
from tasks.delinquency.policy import Policy, parse_policy
from tasks.delinquency.snapshot import Snapshot

TODAY = date(2027, 4, 30)


def one_state(enter: str, leave: str = "", **extra: Any) -> Policy:
    """A policy with a single state ``s`` entered on ``enter`` (YAML list text)."""
    lines = ["name: t", "states:", "  - name: s", f"    enter: {enter}"]
    if leave:
        lines.append(f"    leave: {leave}")
    lines += [f"    {key}: {value}" for key, value in extra.items()]
    return parse_policy("\n".join(lines) + "\n")


def customer(cid: str = "c1", **fields: Any) -> dict[str, Any]:
    return {"customer_id": cid, "name": f"Customer {cid}", **fields}


def invoice(cid: str, days_late: int, pounds: str, iid: str | None = None, **fields: Any) -> dict:
    return {
        "kind": "invoice",
        "item_id": iid or f"inv-{cid}-{days_late}-{pounds}",
        "customer_id": cid,
        "status": fields.pop("status", "OVERDUE" if days_late > 0 else "SCHEDULED"),
        "due_on": TODAY - timedelta(days=days_late),
        "due_pence": int(float(pounds) * 100),
        **fields,
    }


def failure(cid: str, days_ago: int, pr: str = "pr-1") -> dict[str, Any]:
    return {
        "customer_id": cid,
        "payment_request_id": pr,
        "observed_on": TODAY - timedelta(days_ago),
    }


def run(
    policy: Policy,
    customers: list[dict[str, Any]],
    items: list[dict[str, Any]] = (),  # type: ignore[assignment]
    failures: list[dict[str, Any]] = (),  # type: ignore[assignment]
    standing: list[Mapping[str, Any]] = (),  # type: ignore[assignment]
    as_of: date = TODAY,
) -> Evaluation:
    snapshot = Snapshot.from_records(
        biller="b", as_of=as_of, customers=customers, items=items, failures=failures
    )
    return evaluate(snapshot, policy, standing_frame(standing))


def state_of(evaluation: Evaluation, cid: str = "c1") -> str:
    return str(evaluation.decision(cid)["after"])


# --- each condition ---------------------------------------------------------------------------


def test_days_overdue_counts_from_the_oldest_unpaid_due_date() -> None:
    policy = one_state("[{days_overdue: 30}]")
    items = [invoice("c1", 29, "10"), invoice("c2", 30, "10"), invoice("c2", 5, "10")]
    result = run(policy, [customer("c1"), customer("c2")], items)
    assert result.decision("c1")["days_overdue"] == 29
    assert (state_of(result, "c1"), state_of(result, "c2")) == (GOOD, "s")


def test_paid_void_draft_and_zero_due_debts_do_not_count() -> None:
    policy = one_state("[{days_overdue: 1}]")
    items = [
        invoice("c1", 40, "10", status="PAID"),
        invoice("c1", 40, "10", status="VOID"),
        invoice("c1", 40, "10", status="DRAFT"),
        invoice("c1", 40, "0"),
    ]
    assert state_of(run(policy, [customer()], items)) == GOOD


def test_a_payment_request_of_an_invoice_is_not_a_second_debt() -> None:
    policy = one_state("[{unpaid_invoices_at_least: 2}]")
    items = [
        invoice("c1", 3, "50", iid="i1"),
        {**invoice("c1", 3, "50"), "kind": "payment_request", "invoice_id": "i1"},
    ]
    result = run(policy, [customer()], items)
    assert result.decision("c1")["unpaid_debts"] == 1 and state_of(result) == GOOD
    standalone = {**invoice("c1", 3, "5"), "kind": "payment_request", "item_id": "pr-x"}
    assert state_of(run(policy, [customer()], [*items, standalone])) == "s"


def test_failed_attempts_within_a_window_and_ever() -> None:
    windowed = one_state("[{failed_attempts: {count: 2, within_days: 30}}]")
    ever = one_state("[{failed_attempts: 2}]")
    failures = [failure("c1", 5), failure("c1", 31), failure("c2", 1), failure("c2", 29)]
    customers = [customer("c1"), customer("c2")]
    assert state_of(run(windowed, customers, failures=failures), "c1") == GOOD
    assert state_of(run(windowed, customers, failures=failures), "c2") == "s"
    assert state_of(run(ever, customers, failures=failures), "c1") == "s"


def test_unpaid_and_overdue_amounts_are_exact_to_the_penny() -> None:
    at_least = one_state('[{unpaid_amount_at_least: "100.00"}]')
    overdue = one_state('[{overdue_amount_at_least: "60.01"}]')
    items = [invoice("c1", 3, "60.00"), invoice("c1", -3, "40.00")]
    result = run(at_least, [customer()], items)
    assert result.decision("c1")["unpaid_pence"] == 10000 and state_of(result) == "s"
    assert state_of(run(at_least, [customer()], items[:1])) == GOOD
    assert run(overdue, [customer()], items).decision("c1")["overdue_pence"] == 6000
    assert state_of(run(overdue, [customer()], items)) == GOOD


def test_below_conditions_are_strictly_below() -> None:
    policy = one_state("[{unpaid_amount_below: 10}, {unpaid_invoices_below: 2}]")
    assert state_of(run(policy, [customer()], [invoice("c1", 1, "9.99")])) == "s"
    assert state_of(run(policy, [customer()], [invoice("c1", 1, "10.00")])) == GOOD


def test_mandate_status_with_none_for_no_mandate() -> None:
    policy = one_state("[{mandate_status: [CANCELLED, NONE]}]")
    customers = [
        customer("c1", mandate_id="m1", mandate_status="CANCELLED"),
        customer("c2"),
        customer("c3", mandate_id="m3", mandate_status="ACTIVE"),
    ]
    result = run(policy, customers)
    assert [state_of(result, c) for c in ("c1", "c2", "c3")] == ["s", "s", GOOD]


def test_on_date_holds_from_that_day() -> None:
    policy = one_state("[{on_date: 2027-05-01}]")
    assert state_of(run(policy, [customer()])) == GOOD
    assert state_of(run(policy, [customer()], as_of=date(2027, 5, 1))) == "s"


def in_state(state: str, days: int, cid: str = "c1", **fields: Any) -> dict[str, Any]:
    return {"customer_id": cid, "state": state, "since": TODAY - timedelta(days), **fields}


def test_new_mandate_means_a_usable_mandate_other_than_the_one_at_entry() -> None:
    policy = one_state("[{mandate_status: [CANCELLED]}]", "[{new_mandate: true}]")
    was = [in_state("s", 10, mandate_at_entry="m1")]
    same = customer(mandate_id="m1", mandate_status="ACTIVE")
    pending = customer(mandate_id="m2", mandate_status="PENDING")
    created = customer(mandate_id="m2", mandate_status="CREATED")
    assert state_of(run(policy, [same], standing=was)) == "s"
    assert state_of(run(policy, [created], standing=was)) == "s"
    assert state_of(run(policy, [pending], standing=was)) == GOOD


# --- ordering of states -------------------------------------------------------------------------

LADDER = parse_policy(
    """\
name: ladder
states:
  - name: warning
    enter: [{days_overdue: 7}]
    leave: [{overdue_amount_below: 1}]
  - name: paused
    enter: [{days_overdue: 30}]
    leave: [{overdue_amount_below: 1}]
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
  - name: escalated
    enter: [{days_overdue: 60}]
    leave: [{overdue_amount_below: 1}]
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
"""
)


def test_the_most_severe_state_whose_conditions_hold_wins() -> None:
    items = [invoice("c1", 8, "10"), invoice("c2", 31, "10"), invoice("c3", 61, "10")]
    result = run(LADDER, [customer("c1"), customer("c2"), customer("c3")], items)
    assert [state_of(result, c) for c in ("c1", "c2", "c3")] == ["warning", "paused", "escalated"]
    assert result.decision("c3")["move"] == "enter"


def test_escalation_is_immediate_and_keeps_the_hold() -> None:
    standing = [in_state("paused", 1, hold_period="h1-2027-04-29", hold_count=1)]
    result = run(LADDER, [customer()], [invoice("c1", 61, "10")], standing=standing)
    decision = result.decision("c1")
    assert (decision["after"], decision["move"]) == ("escalated", "escalate")
    assert decision["holds"] and not decision["release"]
    assert decision["hold_period"] == "h1-2027-04-29" and decision["hold_count"] == 1


def test_leaving_moves_to_the_most_severe_milder_state_that_holds() -> None:
    standing = [in_state("escalated", 10, hold_period="h1-x", hold_count=1)]
    items = [invoice("c1", 40, "0.50")]  # overdue below £1: escalated's leave holds
    decision = run(LADDER, [customer()], items, standing=standing).decision("c1")
    # paused's enter (30 days) still holds, so the customer steps down to paused, not out.
    assert (decision["after"], decision["move"]) == ("paused", "leave")
    assert decision["holds"] and decision["hold_period"] == "h1-x"


# --- scope ----------------------------------------------------------------------------------------


def test_include_and_exclude_by_id_external_id_and_tag() -> None:
    policy = parse_policy(
        MINIMAL_SCOPE.format(include="customers: [c1, EXT-2]\n    tags: [vip-tag]")
        + "exclude:\n  customers: [c1]\n  tags: [do-not-pause]\n"
    )
    customers = [
        customer("c1"),
        customer("c2", external_id="EXT-2"),
        customer("c3", tags=("vip-tag",)),
        customer("c4", tags=("vip-tag", "do-not-pause")),
        customer("c5"),
    ]
    items = [invoice(c["customer_id"], 40, "10") for c in customers]
    result = run(policy, customers, items)
    assert [state_of(result, f"c{n}") for n in range(1, 6)] == [GOOD, "s", "s", GOOD, GOOD]


MINIMAL_SCOPE = """\
name: scoped
include:
    {include}
states:
  - name: s
    enter: [{{days_overdue: 30}}]
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
"""


def test_a_customer_put_out_of_scope_leaves_at_once_and_is_released() -> None:
    policy = parse_policy(MINIMAL_SCOPE.format(include="customers: [c9]"))
    standing = [in_state("s", 0, hold_period="h1-x", hold_count=1)]
    decision = run(policy, [customer()], [invoice("c1", 40, "10")], standing=standing).decision(
        "c1"
    )
    assert (decision["after"], decision["move"]) == (GOOD, "excluded")
    assert decision["release"] and "not in the policy's scope" in decision["reasons"][0]


# --- hysteresis, minimum time, expiry -------------------------------------------------------------

HYSTERESIS = one_state(
    '[{unpaid_amount_at_least: "100.00"}]',
    '[{unpaid_amount_below: "20.00"}]',
    min_days=5,
    on_enter="[pause_auto_collect]",
    on_leave="[resume_collection]",
)


def test_leave_conditions_differ_from_enter_conditions() -> None:
    standing = [in_state("s", 10, hold_period="h1-x", hold_count=1)]
    # Below the enter threshold but not below the leave one: stays, and says what it waits for.
    decision = run(HYSTERESIS, [customer()], [invoice("c1", 1, "50")], standing=standing).decision(
        "c1"
    )
    assert (decision["after"], decision["move"]) == ("s", "stay")
    assert "waiting for unpaid below £20.00" in decision["reasons"][0]
    left = run(HYSTERESIS, [customer()], [invoice("c1", 1, "19.99")], standing=standing)
    assert left.decision("c1")["move"] == "leave" and left.decision("c1")["release"]


def test_a_state_is_not_left_before_its_minimum_days() -> None:
    early = [in_state("s", 4, hold_period="h1-x", hold_count=1)]
    decision = run(HYSTERESIS, [customer()], [], standing=early).decision("c1")
    assert decision["move"] == "stay"
    assert "but 4 of the 5 minimum days" in decision["reasons"][0]
    on_time = [in_state("s", 5, hold_period="h1-x", hold_count=1)]
    assert run(HYSTERESIS, [customer()], [], standing=on_time).decision("c1")["move"] == "leave"


def test_figures_hovering_at_the_threshold_do_not_flap() -> None:
    """Unpaid goes 100, 99, 100, 99 ... over ten runs: one entry, no leave."""
    standing: list[dict[str, Any]] = []
    moves = []
    for day in range(10):
        as_of = TODAY + timedelta(days=day)
        pounds = "100.00" if day % 2 == 0 else "99.00"
        items = [{**invoice("c1", 1, pounds), "due_on": as_of - timedelta(days=1)}]
        decision = run(HYSTERESIS, [customer()], items, standing=standing, as_of=as_of).decision(
            "c1"
        )
        moves.append(decision["move"])
        standing = [_next_standing(decision)]
    assert moves == ["enter"] + ["stay"] * 9


def _next_standing(decision: Mapping[str, Any]) -> dict[str, Any]:
    return {
        "customer_id": decision["customer_id"],
        "state": decision["after"],
        "since": decision["since"],
        "hold_period": decision["hold_period"],
        "hold_count": decision["hold_count"],
        "mandate_at_entry": decision["mandate_at_entry"],
        "left_on": decision["left_on"],
    }


EXPIRING = one_state(
    "[{days_overdue: 30}]",
    "[{after_days: 90}]",
    cooldown_days=30,
    on_enter="[pause_auto_collect]",
    on_leave="[resume_collection]",
)


def test_a_state_expires_after_its_days_and_cools_down_before_it_is_entered_again() -> None:
    items = [invoice("c1", 200, "10")]  # still delinquent throughout
    standing = [in_state("s", 90, hold_period="h1-x", hold_count=1)]
    expired = run(EXPIRING, [customer()], items, standing=standing).decision("c1")
    assert (expired["after"], expired["move"], expired["release"]) == (GOOD, "leave", True)
    assert "90 days in the state" in expired["reasons"][0]
    assert expired["left_on"] == {"s": TODAY.isoformat()}
    cooling = [_next_standing(expired)]
    for day, wanted in ((29, GOOD), (30, "s")):
        later = TODAY + timedelta(days=day)
        decision = run(EXPIRING, [customer()], items, standing=cooling, as_of=later).decision("c1")
        assert decision["after"] == wanted
    back = run(
        EXPIRING, [customer()], items, standing=cooling, as_of=TODAY + timedelta(days=30)
    ).decision("c1")
    assert back["hold_count"] == 2 and back["hold_period"] == "h2-2027-05-30"


def test_a_state_without_leave_conditions_is_left_when_its_enter_conditions_stop() -> None:
    policy = one_state("[{days_overdue: 30}]", min_days=2)
    standing = [in_state("s", 2)]
    assert (
        run(policy, [customer()], [invoice("c1", 31, "1")], standing=standing).decision("c1")[
            "move"
        ]
        == "stay"
    )
    assert run(policy, [customer()], [], standing=standing).decision("c1")["move"] == "leave"


# --- holds and releases ---------------------------------------------------------------------------


def test_a_pausing_state_opens_a_hold_and_leaving_without_resume_keeps_the_pauses() -> None:
    keep = one_state(
        "[{days_overdue: 30}]", "[{overdue_amount_below: 1}]", on_enter="[pause_auto_collect]"
    )
    entered = run(keep, [customer()], [invoice("c1", 30, "10")]).decision("c1")
    assert entered["holds"] and entered["hold_period"] == f"h1-{TODAY.isoformat()}"
    left = run(keep, [customer()], [], standing=[_next_standing(entered)]).decision("c1")
    assert left["move"] == "leave" and not left["release"] and left["keeps_paused"]


def test_a_state_the_policy_no_longer_has_is_left_and_released() -> None:
    standing = [in_state("retired", 3, hold_period="h1-x", hold_count=1)]
    decision = run(LADDER, [customer()], [], standing=standing).decision("c1")
    assert (decision["before"], decision["after"], decision["move"]) == ("retired", GOOD, "leave")
    assert decision["release"]


def test_good_payers_carry_no_reasons_and_everyone_in_a_state_does() -> None:
    items = [invoice("c1", 31, "10"), invoice("c2", -5, "10")]
    result = run(LADDER, [customer("c1"), customer("c2")], items)
    assert result.decision("c2")["reasons"] == ()
    (reason,) = result.decision("c1")["reasons"]
    assert reason.startswith("entered paused: oldest unpaid due date at least 30 days ago")
    assert "(31 days overdue)" in reason
    assert list(result.involved["customer_id"]) == ["c1"]


def test_an_unknown_customer_id_is_a_clear_error() -> None:
    with pytest.raises(KeyError, match="no customer 'zz'"):
        run(LADDER, [customer()]).decision("zz")
