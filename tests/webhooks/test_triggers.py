"""An event from the service starts a deployment run through the trigger in
``deployments/prefect.yaml``, on the Prefect test harness's real server (its trigger and action
services run there): the sandbox delivers, the receiver emits, the automation starts one run of
the deployment for that biller however many events arrive in the window: payment-request events
start ``poll-import-jobs``, mandate events ``pause-delinquent-customers`` as a dry run, invoice
events ``refresh-open-items``.

The deployment's triggers are read from the file and attached to a stand-in flow with the same
parameter, so the test is about the trigger and does not depend on the job's own run.

The default suite starts the payout case on the server and checks every other deployment's
trigger against the receiver's own events with Prefect's matching (no server, no waiting);
``make soak`` runs every deployment's case on the server.
"""

from __future__ import annotations

import json
import time
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import httpx
import pytest
import yaml
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
from prefect.client.schemas.objects import FlowRun
from prefect.events import DeploymentEventTrigger
from prefect.server.events.schemas.automations import EventTrigger
from prefect.server.events.schemas.events import ReceivedEvent

from blocks import PlatformCredentials
from ledger import Ledger
from ledger.webhooks import WebhookEventRecord
from tasks.webhooks.prefect_events import prefect_event
from tasks.webhooks.received import read_delivery
from tasks.webhooks.subscription import set_up_webhooks
from tests.support.billing import new_customer, new_invoice, new_payment_request, sent_invoice
from tests.support.credentials import save_connected_block, unique_name
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox
from tests.webhooks.conftest import Platform
from tests.webhooks.harness import reserve_port, running_receiver, url_of
from tests.webhooks.prefect_events import wait_for_events

ROOT = Path(__file__).resolve().parents[2]


@flow(name="triggered-by-webhook")
def stand_in(biller: str, dry_run: bool = True) -> str:
    """Stands in for the deployments' flows (same parameters): the test is about the trigger."""
    return biller


def payment_requests(admin: SandboxAdmin, tokens: BillerTokens) -> None:
    """Three events for one biller: a burst."""
    customer = new_customer(admin, tokens)
    for _ in range(3):
        new_payment_request(admin, tokens, customer["id"])


def mandates(admin: SandboxAdmin, tokens: BillerTokens) -> None:
    """A mandate set up for each of three customers: three dd-mandate events for one biller."""
    for _ in range(3):
        customer = new_customer(admin, tokens)
        path = f"/customers/{customer['id']}/directdebitmandates"
        assert admin.api.put(path, headers=tokens.headers).status_code == 200


def invoices(admin: SandboxAdmin, tokens: BillerTokens) -> None:
    """Three invoices drafted and one of them sent: four invoice events for one biller."""
    customer = new_customer(admin, tokens)
    for _ in range(2):
        new_invoice(admin, tokens, customer["id"])
    sent_invoice(admin, tokens, customer["id"])


def triggers_of(deployment: str) -> list[DeploymentEventTrigger]:
    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    [found] = [d for d in spec["deployments"] if d["name"] == deployment]
    return [DeploymentEventTrigger(**trigger) for trigger in found["triggers"]]


def runs_of(deployment_id: Any) -> list[FlowRun]:
    with get_client(sync_client=True) as client:
        return client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id]))
        )


CASES = {
    # deployment: (event kinds subscribed, what makes the service emit, parameters expected)
    "poll-import-jobs": (["payment-request"], payment_requests, {}),
    "pause-delinquent-customers": (["dd-mandate"], mandates, {"dry_run": True}),
    "refresh-open-items": (["invoice", "payment"], invoices, {}),
}


@pytest.mark.slow
@pytest.mark.parametrize("deployment_name", sorted(CASES))
def test_service_events_start_one_run_of_the_deployment_for_the_biller(
    deployment_name: str,
    hooks_sandbox: SandboxAdmin,
    prefect_api: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path))
    ledger = Ledger(f"sqlite:///{tmp_path / 'ledger.db'}")
    # A biller connected to an app (its credential block), and the app's platform block.
    block_name = unique_name("acme")
    _biller_block, tokens = save_connected_block(hooks_sandbox, block_name)
    platform_name = unique_name("plat")
    PlatformCredentials(
        environment="sandbox",
        base_url=f"{hooks_sandbox.root}/api",
        client_id=tokens.app.client_id,
        client_secret=tokens.app.client_secret,  # type: ignore[arg-type]
    ).save(platform_name)
    platform = Platform(PlatformCredentials.load_named(platform_name), platform_name, tokens)
    listener = reserve_port()
    kinds, make_events, parameters = CASES[deployment_name]
    set_up_webhooks(platform.block, url=url_of(listener), events=kinds)
    ledger.set_biller_block(tokens.biller_id, block_name)

    deployment = stand_in.to_deployment(
        name=f"{deployment_name}-{block_name}", triggers=triggers_of(deployment_name)
    )
    deployment_id = deployment.apply()
    time.sleep(2)  # the trigger service loads new automations every few seconds

    def load() -> Any:
        return PlatformCredentials.load_named(platform_name).webhooks

    with running_receiver(ledger, load, listener=listener):
        make_events(hooks_sandbox, tokens)
        wait_for_events(f"billops.biller.{tokens.biller_id}", 3)
        deadline = time.monotonic() + 60
        while not (runs := runs_of(deployment_id)):
            assert time.monotonic() < deadline, "no run was started by the trigger"
            time.sleep(1)
        time.sleep(5)  # a second run, if the window did not hold, would have been created now
        runs = runs_of(deployment_id)
    ledger.close()

    assert len(runs) == 1, [r.parameters for r in runs]
    assert runs[0].parameters == {"biller": block_name, **parameters}


def received(kind: str, type_: str, block: str | None, **ids: str) -> ReceivedEvent:
    """The Prefect event the receiver emits for a delivery of ``type_`` (``kind`` its header)."""
    body = json.dumps({"type": type_, "eventId": f"e-{type_}", "billerId": "b-1", **ids})
    new = read_delivery(body.encode(), {"adfin-webhook-type": kind})
    now = datetime.now(UTC)
    record = WebhookEventRecord(
        1,
        new.dedup_key,
        new.event_id,
        new.biller_id,
        new.kind,
        new.type,
        new.payload,
        1,
        now,
        now,
        None,
        0,
    )
    return ReceivedEvent(**prefect_event(record, block).model_dump())


MANDATE = {"customerId": "c-1", "directDebitMandateId": "m-1"}
STARTS = {
    # deployment: (events that start it, events that do not)
    "poll-import-jobs": (
        [("payment-request", "PAYMENT_REQUEST_PAID", {"paymentRequestId": "pr-1"})],
        [("payment", "PAYMENT_SENT", {"paymentId": "p-1"})],
    ),
    "pause-delinquent-customers": (
        [
            ("payment", "DD_PAYMENT_FAILED", {"paymentId": "p-1"}),
            ("dd-mandate", "DIRECT_DEBIT_MANDATE_INITIATED", MANDATE),
        ],
        [("payment", "PAYMENT_SENT", {"paymentId": "p-1"})],
    ),
    "reconcile-payouts": (
        [("payout", "PAYOUT_PAID", {"payoutId": "po-1"})],
        [("invoice", "INVOICE_CREATED", {"invoiceId": "i-1"})],
    ),
    "refresh-open-items": (
        [
            ("payment", "PAYMENT_SENT", {"paymentId": "p-1"}),
            ("payment", "DD_PAYMENT_FAILED", {"paymentId": "p-1"}),
            ("invoice", "INVOICE_ACTIVATED", {"invoiceId": "i-1"}),
        ],
        [
            ("payout", "PAYOUT_PAID", {"payoutId": "po-1"}),
            ("customer", "CUSTOMER_UPDATED", {"customerId": "c-1"}),
        ],
    ),
}


def test_every_deployment_with_a_trigger_is_checked() -> None:
    spec = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text())
    triggered = {d["name"] for d in spec["deployments"] if d.get("triggers")}
    assert triggered == set(STARTS) == set(CASES) | {"reconcile-payouts"}


@pytest.mark.parametrize("deployment_name", sorted(STARTS))
def test_each_trigger_covers_its_events_per_biller_and_no_others(deployment_name: str) -> None:
    """Prefect's own matching of the deployment's trigger against the events the receiver
    emits: the events that should start it do, per biller block, and only when the ledger knows
    the block (an event of an unknown biller starts nothing: there is no block to run)."""
    [trigger] = triggers_of(deployment_name)
    fields = ("match", "match_related", "expect", "for_each", "posture", "threshold", "within")
    matcher = EventTrigger.model_validate(trigger.model_dump(include=set(fields)))
    assert (matcher.posture, matcher.threshold) == ("Reactive", 1)
    assert matcher.within == timedelta(seconds=60)  # a burst starts one run per minute
    assert trigger.parameters is not None
    assert trigger.parameters["biller"] == "{{ event.resource['billops.biller.block'] }}"
    starting, other = STARTS[deployment_name]
    for kind, type_, ids in starting:
        event = received(kind, type_, "acme", **ids)
        assert matcher.covers(event), event.event
        assert matcher.bucketing_key(event) == ("acme",)
        assert matcher.bucketing_key(received(kind, type_, "bravo", **ids)) == ("bravo",)
        assert not matcher.covers(received(kind, type_, None, **ids)), "no block, no run"
    for kind, type_, ids in other:
        assert not matcher.covers(received(kind, type_, "acme", **ids)), type_


CARD = {
    "cardholder_name": "Jane Doe",
    "card_number": "4000 0566 5566 5556",
    "expiry": "03/30",
    "cvc": "737",
}


def test_a_payout_event_starts_a_reconciliation_run_for_the_biller(
    prefect_api: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The sandbox pays a card payment out two working days later (its simulated clock moves),
    and the payout's events start ``reconcile-payouts`` for that biller."""
    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path))
    url = f"sqlite:///{tmp_path / 'sandbox.db'}"
    start = date(2026, 12, 21)
    with (
        running_sandbox(
            url, clock_start=start, accessTokenTtl=366 * 86400, webhookRetryBaseSeconds=0.2
        ) as admin,
        Ledger(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger,
    ):
        block_name = unique_name("payee")
        _block, tokens = save_connected_block(admin, block_name)
        platform_name = unique_name("plat")
        PlatformCredentials(
            environment="sandbox",
            base_url=f"{admin.root}/api",
            client_id=tokens.app.client_id,
            client_secret=tokens.app.client_secret,  # type: ignore[arg-type]
        ).save(platform_name)
        listener = reserve_port()
        block = PlatformCredentials.load_named(platform_name)
        set_up_webhooks(block, url=url_of(listener), events=["payout"])
        ledger.set_biller_block(tokens.biller_id, block_name)
        deployment = stand_in.to_deployment(
            name=f"reconcile-payouts-{block_name}", triggers=triggers_of("reconcile-payouts")
        )
        deployment_id = deployment.apply()
        time.sleep(2)  # the trigger service loads new automations every few seconds

        def load() -> Any:
            return PlatformCredentials.load_named(platform_name).webhooks

        with running_receiver(ledger, load, listener=listener):
            customer = new_customer(admin, tokens)
            item = {"description": "Work", "quantity": 1, "unitAmount": 120.0}
            invoice = sent_invoice(admin, tokens, customer["id"], items=[item])
            paid = httpx.post(invoice["paymentRequests"][0]["paymentLink"]["url"], data=CARD)
            assert paid.status_code in (200, 303), paid.text
            admin.advance_clock(until=(start + timedelta(days=2)).isoformat())
            events = wait_for_events(f"billops.biller.{tokens.biller_id}", 2)
            deadline = time.monotonic() + 60
            while not (runs := runs_of(deployment_id)):
                assert time.monotonic() < deadline, "no run was started by the trigger"
                time.sleep(1)
            time.sleep(5)
            runs = runs_of(deployment_id)

    assert {e["event"] for e in events} == {
        "billops.service.payout.payout_created",
        "billops.service.payout.payout_paid",
    }
    assert len(runs) == 1 and runs[0].parameters == {"biller": block_name}
