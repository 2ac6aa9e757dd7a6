"""Each rule of the contract's pause and resume (rules 1–5, and SUBMITTED) as the job meets it,
against the sandbox over HTTP: what the call's outcome is, what the ledger records, and whether
a rerun makes the call again."""

from __future__ import annotations

import threading
from collections.abc import Iterator
from dataclasses import replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import httpx
import pytest

from billing_api import BillingClient, StaticTokenAuth
from blocks import BillerCredentials
from ledger import Ledger, OperationState
from tasks.common.write_once import SendBudget
from tasks.delinquency.apply import DEFERRED, Applier, Outcome, apply_calls
from tasks.delinquency.plan import Action, CallStatus, PlannedCall
from tests.delinquency.scenario import ACCOUNTS, Scenario, ok
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin


@pytest.fixture
def ledger(tmp_path: Path) -> Iterator[Ledger]:
    with Ledger(f"sqlite:///{tmp_path / 'ledger.db'}") as opened:
        yield opened


class Biller:
    """A biller with one direct-debit customer (a signed mandate) and a way to make debts."""

    def __init__(self, admin: SandboxAdmin, tokens: BillerTokens) -> None:
        self.admin, self.tokens = admin, tokens
        self.api = httpx.Client(
            base_url=f"{admin.root}/api",
            headers=tokens.headers,
            timeout=30,
            event_hooks=admin.api.event_hooks,
        )
        self.customer = ok(self.api.post("/customers", json={"name": "Sam Short"}))
        self.mandate = self.sign()

    def sign(self) -> dict[str, Any]:
        mandate = ok(self.api.put(f"/customers/{self.customer['id']}/directdebitmandates", json={}))
        holder, sort_code, number = ACCOUNTS["pays"]
        form = {
            "account_holder": holder,
            "sort_code": sort_code,
            "account_number": number,
            "confirm": "yes",
        }
        assert self.admin.http.post(f"/dd-mandate/{mandate['id']}", data=form).status_code == 200
        return dict(mandate)

    def cancel_mandate(self) -> None:
        ok(self.api.put(f"/customers/directdebitmandates/{self.mandate['id']}:cancel"))

    def debt(self, due: str = "2031-01-31") -> dict[str, Any]:
        body = {
            "customer": {"id": self.customer["id"]},
            "dueDate": due,
            "items": [{"description": "Service", "quantity": 1, "unitAmount": 75, "taxRate": 0}],
        }
        invoice = ok(self.api.post("/invoices", json=body))
        ok(
            self.api.put(
                f"/invoices/{invoice['id']}:activate",
                json={"collectionMethod": "DIRECT_DEBIT_PAYMENT"},
            )
        )
        pr_id = ok(self.api.get(f"/invoices/{invoice['id']}"))["paymentRequests"][0]["id"]
        return dict(ok(self.api.get(f"/payment_requests/{pr_id}")))

    def auto_collect(self, pr_id: str) -> dict[str, Any]:
        methods = ok(self.api.get(f"/payment_requests/{pr_id}"))["collection"]["methods"]
        return next(m for m in methods if m["method"] == "AUTO_COLLECT")

    def calls(self, operation: str) -> int:
        requests = self.admin.biller_stats(self.tokens.biller_id).get("requests", {})
        return int(requests.get(operation, 0))


@pytest.fixture
def biller(admin: SandboxAdmin) -> Iterator[Biller]:
    made = Biller(admin, admin.connect_biller())
    yield made
    made.api.close()


def planned(biller: Biller, action: Action, pr: dict[str, Any], **changes: Any) -> PlannedCall:
    call = PlannedCall(
        biller=biller.tokens.biller_id,
        customer_id=biller.customer["id"],
        customer_name="Sam Short",
        before="",
        after="paused",
        action=action,
        target_id=pr["id"],
        target_number=pr.get("paymentRequestNo", ""),
        invoice_id="",
        amount=Decimal("75.00"),
        due_on=None,
        period="h1-2031-01-01",
        mandate_id=biller.mandate["id"],
        status=CallStatus.SEND,
        note="",
        rule="test",
    )
    return replace(call, **changes)


def applier(biller: Biller, ledger: Ledger, token: str | None = None) -> Applier:
    client = BillingClient(
        f"{biller.admin.root}/api",
        StaticTokenAuth(token or biller.tokens.access_token),
        sleep=lambda _seconds: None,
    )
    return Applier(
        client=client,
        ledger=ledger,
        run_id="run-1",
        worker="tester:1:-",
        actor="Dana",
        approver="Dana",
        policy_digest="d",
        budget=SendBudget(),
        stop=threading.Event(),
    )


def test_rule_1_pause_and_resume_answer_204_once_each(biller: Biller, ledger: Ledger) -> None:
    pr = biller.debt()
    pause, resume = planned(biller, Action.PAUSE, pr), planned(biller, Action.RESUME, pr)
    (paused,) = apply_calls(applier(biller, ledger), [pause])
    assert paused.outcome is Outcome.DONE
    assert biller.auto_collect(pr["id"]) == {
        **biller.auto_collect(pr["id"]),
        "paused": True,
        "override": "PAUSED",
    }
    (again,) = apply_calls(applier(biller, ledger), [pause])  # a rerun: the ledger says done
    assert again.outcome is Outcome.ALREADY_DONE
    assert biller.calls("payment_requests.pause_collection") == 1
    (resumed,) = apply_calls(applier(biller, ledger), [resume])
    assert (
        resumed.outcome is Outcome.DONE and biller.auto_collect(pr["id"])["override"] == "RESUMED"
    )
    audit = [e.action for e in ledger.audit_entries(subject=f"payment_request:{pr['id']}")]
    assert audit == ["delinquency:pause", "delinquency:resume"]


def test_rule_2_resume_without_direct_debit_is_refused_and_not_retried(
    biller: Biller, ledger: Ledger
) -> None:
    pr = biller.debt()
    apply_calls(applier(biller, ledger), [planned(biller, Action.PAUSE, pr)])
    biller.cancel_mandate()
    resume = planned(biller, Action.RESUME, pr)
    (refused,) = apply_calls(applier(biller, ledger), [resume])
    assert refused.outcome is Outcome.REFUSED
    assert refused.detail.startswith("DIRECT_DEBIT_NOT_AVAILABLE: Sam Short")
    assert "Ask the customer for a new mandate" in refused.detail
    assert ledger.get(resume.key).state is OperationState.FAILED  # type: ignore[union-attr]
    apply_calls(applier(biller, ledger), [resume])
    assert biller.calls("payment_requests.resume_collection") == 1  # never twice per mandate
    assert biller.auto_collect(pr["id"])["override"] == "PAUSED"  # nothing was resumed
    biller.mandate = biller.sign()  # a new mandate: a new key, one more try
    (done,) = apply_calls(
        applier(biller, ledger), [replace(resume, mandate_id=biller.mandate["id"])]
    )
    assert done.outcome is Outcome.DONE and biller.auto_collect(pr["id"])["override"] == "RESUMED"


def test_rule_3_pause_not_eligible_is_refused_with_what_to_do(
    biller: Biller, ledger: Ledger
) -> None:
    pr = biller.debt()
    biller.cancel_mandate()
    (refused,) = apply_calls(applier(biller, ledger), [planned(biller, Action.PAUSE, pr)])
    assert refused.outcome is Outcome.REFUSED
    assert refused.detail.startswith(
        "COLLECTION_METHOD_NOT_ELIGIBLE: AUTO_COLLECT cannot be paused"
    )
    assert "collect on demand" in refused.detail
    assert not biller.auto_collect(pr["id"])["paused"]


def test_rule_4_an_unrecognised_method_is_refused_and_reported(
    biller: Biller, ledger: Ledger
) -> None:
    pr = biller.debt()
    call = planned(biller, Action.PAUSE, pr, method="HOLD_EVERYTHING")
    (refused,) = apply_calls(applier(biller, ledger), [call])
    assert refused.outcome is Outcome.REFUSED and "collectionMethods" in refused.detail
    assert ledger.get(call.key).state is OperationState.FAILED  # type: ignore[union-attr]
    assert not biller.auto_collect(pr["id"])["paused"]


def test_rule_5_401_and_403_stop_the_run_and_nothing_is_lost(
    admin: SandboxAdmin, biller: Biller, ledger: Ledger
) -> None:
    first, second = biller.debt(), biller.debt()
    calls = [planned(biller, Action.PAUSE, first), planned(biller, Action.PAUSE, second)]
    outcomes = apply_calls(applier(biller, ledger, token="not-a-token"), calls)
    assert [o.outcome for o in outcomes] == [Outcome.NOT_SENT, Outcome.NOT_SENT]
    assert outcomes[0].detail.startswith("401: the service refused the biller's token")
    read_only = admin.connect_biller(read_only=True)
    outcomes = apply_calls(applier(biller, ledger, token=read_only.access_token), calls)
    assert outcomes[0].detail.startswith("403: the biller's token does not allow updating")
    first_op = ledger.get(calls[0].key)
    assert first_op is not None and first_op.state is OperationState.INTENDED  # released
    assert ledger.get(calls[1].key) is None  # never reached: nothing recorded, nothing sent
    assert not biller.auto_collect(first["id"])["paused"]
    outcomes = apply_calls(applier(biller, ledger), calls)  # a rerun with a good token
    assert [o.outcome for o in outcomes] == [Outcome.DONE, Outcome.DONE]


def test_rule_5_404_drops_the_call(biller: Biller, ledger: Ledger) -> None:
    gone = {"id": "00000000-0000-4000-8000-000000000000", "paymentRequestNo": "PR-0"}
    (dropped,) = apply_calls(applier(biller, ledger), [planned(biller, Action.PAUSE, gone)])
    assert dropped.outcome is Outcome.DROPPED and "404" in dropped.detail


def test_rule_5_a_500_leaves_the_outcome_unknown_and_the_rerun_asks_first(
    admin: SandboxAdmin, biller: Biller, ledger: Ledger
) -> None:
    pr = biller.debt()
    call = planned(biller, Action.PAUSE, pr)
    rule = {"pathPrefix": f"/api/payment_requests/{pr['id']}:pause_collection", "errorRate": 1}
    ok(admin.http.post("/_sandbox/faults", json={"rules": [rule], "seed": 1}))
    try:
        (unknown,) = apply_calls(applier(biller, ledger), [call])
    finally:
        ok(admin.http.delete("/_sandbox/faults"), (200, 204))
    assert unknown.outcome is Outcome.UNKNOWN and "500" in unknown.detail
    assert ledger.get(call.key).state is OperationState.UNKNOWN  # type: ignore[union-attr]
    (done,) = apply_calls(applier(biller, ledger), [call])
    assert done.outcome is Outcome.DONE and biller.auto_collect(pr["id"])["paused"]


def test_an_unknown_outcome_found_applied_is_not_sent_again(biller: Biller, ledger: Ledger) -> None:
    """The answer was lost after the service applied the pause: the rerun finds it done."""
    pr = biller.debt()
    call = planned(biller, Action.PAUSE, pr)
    ledger.record_intent(
        key=call.key,
        kind="delinquency.pause",
        biller=call.biller,
        request_digest=f"pause:{pr['id']}:AUTO_COLLECT",
    )
    ledger.claim(call.key, worker="gone:1:-")
    ledger.mark_unknown(call.key, error="connection dropped")
    body = {"collectionMethods": ["AUTO_COLLECT"]}
    ok(biller.api.put(f"/payment_requests/{pr['id']}:pause_collection", json=body), 204)
    before = biller.calls("payment_requests.pause_collection")
    (found,) = apply_calls(applier(biller, ledger), [call])
    assert found.outcome is Outcome.FOUND
    assert biller.calls("payment_requests.pause_collection") == before


def _pause_of(sc: Scenario, invoice: dict[str, Any], pr: dict[str, Any]) -> PlannedCall:
    """The plan's pause of Sam's payment request ``pr`` (of ``invoice``), to be sent."""
    return PlannedCall(
        biller=sc.biller_id,
        customer_id=sc.customers["Sam"]["id"],
        customer_name="Sam",
        before="",
        after="paused",
        action=Action.PAUSE,
        target_id=pr["id"],
        target_number=pr["paymentRequestNo"],
        invoice_id=invoice["id"],
        amount=Decimal("75.00"),
        due_on=None,
        period="h1-x",
        mandate_id="m",
        status=CallStatus.SEND,
        note="",
        rule="test",
    )


def _applier(client: BillingClient, ledger: Ledger) -> Applier:
    return Applier(
        client=client,
        ledger=ledger,
        run_id="r",
        worker="w:1:-",
        actor="Dana",
        approver=None,
        policy_digest="d",
        budget=SendBudget(),
        stop=threading.Event(),
    )


def test_submitted_cannot_be_paused_and_is_deferred_to_the_next_run(
    scenario: Scenario, ledger: Ledger
) -> None:
    """A debit that went to the bank after the plan was made: deferred (never a failure), and
    paused by a later run once the bank has answered."""
    sc = scenario
    sc.customer("Sam", "fails")
    invoice = sc.invoice("Sam", "75.00", 3)  # submitted two working days before it is due
    sc.advance(1)
    pr = sc.request_of(invoice)
    assert pr["status"] == "SUBMITTED"
    call = _pause_of(sc, invoice, pr)
    client = BillerCredentials.load_named(sc.block).get_client()
    try:
        run = _applier(client, ledger)
        (deferred,) = apply_calls(run, [call])
        assert deferred.outcome is Outcome.DEFERRED and "SUBMITTED" in deferred.detail
        # Refused by the service, so certainly not applied: sendable again, marked deferred.
        op = ledger.get(call.key)
        assert op is not None and op.state is OperationState.INTENDED
        assert (op.error or "").startswith(DEFERRED)
        assert not sc.auto_collect(invoice)["paused"]
        sc.advance(3)  # the bank refuses the debit: back to SCHEDULED for a retry
        assert sc.request_of(invoice)["status"] == "SCHEDULED"
        (done,) = apply_calls(run, [call])
        assert done.outcome is Outcome.DONE and sc.auto_collect(invoice)["paused"]
    finally:
        client.close()


def test_a_deferred_pause_a_person_resumed_is_settled_as_refused_and_never_sent(
    scenario: Scenario, ledger: Ledger
) -> None:
    """Deferred while SUBMITTED (the service refused it), then resumed by a person: the plan
    leaves it (``settles``), and settling records the refusal, never a pause that did not
    happen, and sends nothing."""
    sc = scenario
    sc.customer("Sam", "fails")
    invoice = sc.invoice("Sam", "75.00", 3)
    sc.advance(1)
    pr = sc.request_of(invoice)
    assert pr["status"] == "SUBMITTED"
    call = _pause_of(sc, invoice, pr)
    client = BillerCredentials.load_named(sc.block).get_client()
    try:
        run = _applier(client, ledger)
        (deferred,) = apply_calls(run, [call])
        assert deferred.outcome is Outcome.DEFERRED
        sc.resume_by_hand(invoice)
        sc.advance(3)  # the bank refused the debit: collectable again
        assert sc.request_of(invoice)["status"] == "SCHEDULED"
        pauses = sc.calls()["payment_requests.pause_collection"]
        left = replace(call, status=CallStatus.SKIPPED, settles=True)
        settled = run.settle(left)
        assert settled.outcome is Outcome.REFUSED and "never applied" in settled.detail
        op = ledger.get(call.key)
        assert op is not None and op.state is OperationState.FAILED
        assert "collection resumed by a person" in (op.error or "")
        assert sc.calls()["payment_requests.pause_collection"] == pauses
        assert not sc.auto_collect(invoice)["paused"]
        assert ledger.audit_entries(subject=f"payment_request:{pr['id']}") == []
    finally:
        client.close()


def test_billops_ledger_resolve_settles_an_unknown_call_by_asking_the_service(
    biller: Biller, ledger: Ledger
) -> None:
    from ledger import resolve_operations
    from tasks.delinquency.resolution import delinquency_resolver

    applied, not_applied = biller.debt(), biller.debt()
    calls = [planned(biller, Action.PAUSE, applied), planned(biller, Action.PAUSE, not_applied)]
    for call in calls:
        ledger.record_intent(
            key=call.key,
            kind="delinquency.pause",
            biller=call.biller,
            request_digest=f"pause:{call.target_id}:AUTO_COLLECT",
            payload={"target": call.target_id},
        )
        ledger.claim(call.key, worker="gone:1:-")
        ledger.mark_unknown(call.key, error="connection dropped")
    body = {"collectionMethods": ["AUTO_COLLECT"]}
    ok(biller.api.put(f"/payment_requests/{applied['id']}:pause_collection", json=body), 204)
    client = BillingClient(f"{biller.admin.root}/api", StaticTokenAuth(biller.tokens.access_token))
    try:
        outcomes = resolve_operations(ledger, delinquency_resolver(client), biller=calls[0].biller)
    finally:
        client.close()
    assert sorted((o.before.value, o.after.value) for o in outcomes) == [
        ("unknown", "confirmed"),
        ("unknown", "intended"),
    ]
    assert ledger.get(calls[0].key).state is OperationState.CONFIRMED  # type: ignore[union-attr]
    assert ledger.get(calls[1].key).state is OperationState.INTENDED  # type: ignore[union-attr]
