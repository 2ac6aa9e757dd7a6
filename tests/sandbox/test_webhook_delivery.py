"""Webhook delivery: events emitted by state changes reach subscribed receivers, signed, retried.

A real receiver listens on a loopback port; the module's own sandbox retries on a millisecond
scale (``webhookRetryBaseSeconds``) so the retry schedule is observable in a second.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import re
import threading
import time
import uuid
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest
from sqlalchemy import select

from sandbox.core.db import init_schema, make_engine, make_session_factory, session_scope
from sandbox.models.webhooks import WebhookEvent
from sandbox.webhooks import events
from sandbox.webhooks.delivery import sign
from tests.support.billing import (
    activate_invoice,
    new_customer,
    new_invoice,
    new_payment_request,
    ok,
    set_mandate,
)
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox

RETRY_BASE = 0.2  # seconds: waits of 0.2-0.3 s, then 0.4-0.6 s (jitter up to 50%)
QUIET = 0.6  # how long "nothing arrives" is watched for, after a control delivery arrived
TIMESTAMP = re.compile(r"^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,6})?Z$")


# --- a receiver -----------------------------------------------------------------------------------


@dataclass
class Delivery:
    path: str
    headers: dict[str, str]
    body: bytes
    at: float  # time.monotonic() on arrival

    @property
    def json(self) -> dict[str, Any]:
        return dict(json.loads(self.body))


@dataclass
class Receiver:
    port: int
    # Status codes to answer, per path, in order; 200 once a path's list is used up.
    plan: dict[str, list[int]] = field(default_factory=dict)
    received: list[Delivery] = field(default_factory=list)
    changed: threading.Condition = field(default_factory=threading.Condition)

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.port}{path}"

    def at(self, path: str) -> list[Delivery]:
        with self.changed:
            return [d for d in self.received if d.path == path]

    def wait(self, path: str, count: int = 1, timeout: float = 10.0) -> list[Delivery]:
        deadline = time.monotonic() + timeout
        with self.changed:
            while len(got := [d for d in self.received if d.path == path]) < count:
                left = deadline - time.monotonic()
                assert left > 0, f"{path}: {len(got)} of {count} deliveries arrived"
                self.changed.wait(left)
        return got


@pytest.fixture(scope="module")
def receiver() -> Iterator[Receiver]:
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            me = holder[0]
            headers = {key.lower(): value for key, value in self.headers.items()}
            with me.changed:
                me.received.append(Delivery(self.path, headers, body, time.monotonic()))
                plan = me.plan.get(self.path) or []
                status = plan.pop(0) if plan else 200
                me.changed.notify_all()
            self.send_response(status)
            self.send_header("Content-Length", "0")
            self.end_headers()

        def log_message(self, *args: object) -> None:
            """Keep the test output clean: no access log."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(server.server_address[1]))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield holder[0]
    server.shutdown()
    server.server_close()


@pytest.fixture(scope="module")
def sandbox_admin(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxAdmin]:
    url = f"sqlite:///{tmp_path_factory.mktemp('webhooks') / 'sandbox.db'}"
    runtime = {"webhookRetryBaseSeconds": RETRY_BASE, "webhookTimeoutSeconds": 2}
    with running_sandbox(url, **runtime) as admin:
        yield admin


# --- helpers --------------------------------------------------------------------------------------


@dataclass
class Subscriber:
    tokens: BillerTokens  # the biller, connected to the app
    platform: dict[str, str]  # the app's platform-token headers

    @property
    def client_id(self) -> str:
        return self.tokens.app.client_id


def subscriber(admin: SandboxAdmin) -> Subscriber:
    tokens = admin.connect_biller()
    return Subscriber(tokens, admin.platform_token(tokens.app).headers)


def subscribe(admin: SandboxAdmin, who: Subscriber, url: str, kinds: list[str]) -> dict[str, Any]:
    body = {"url": url, "events": kinds, "name": "test"}
    return ok(
        admin.api.post(f"/apps/{who.client_id}/webhooks", headers=who.platform, json=body), 201
    )


def new_secret(admin: SandboxAdmin, who: Subscriber) -> str:
    path = f"/apps/{who.client_id}/webhooks/digest"
    return str(ok(admin.api.put(path, headers=who.platform))["secretKey"])


def path() -> str:
    return f"/{uuid.uuid4().hex}"


def verify(secret: str, delivery: Delivery) -> bool:
    """The receiver's check, written from the contract (not the sandbox's code)."""
    timestamp = delivery.headers["adfin-webhook-signature-timestamp"]
    key = secret.encode("utf-8")
    digest = hmac.new(key, delivery.body + timestamp.encode("utf-8"), hashlib.sha256).digest()
    expected = base64.b64encode(digest).decode("ascii")
    return hmac.compare_digest(expected, delivery.headers.get("adfin-webhook-signature", ""))


def events_of(admin: SandboxAdmin, biller_id: str) -> list[dict[str, Any]]:
    answer = admin.http.get("/_sandbox/webhooks/events", params={"billerId": biller_id})
    return list(ok(answer)["events"])


def deliveries(admin: SandboxAdmin, **filters: str) -> list[dict[str, Any]]:
    return list(ok(admin.http.get("/_sandbox/webhooks/deliveries", params=filters))["deliveries"])


def delivery_when(admin: SandboxAdmin, webhook_id: str, status: str) -> dict[str, Any]:
    """The subscription's one delivery, once it reached ``status`` (outcomes are recorded just
    after the receiver answered)."""
    deadline = time.monotonic() + 5
    while (row := deliveries(admin, webhookId=webhook_id)[0])["status"] != status:
        assert time.monotonic() < deadline, row
        time.sleep(0.05)
    return row


# --- what arrives ---------------------------------------------------------------------------------


def test_signature_follows_the_contracts_example() -> None:
    body = (
        b'{"type":"INVOICE_PAID","eventId":"7d9f3c2a-1b4e-4f6a-9c8d-2e5f7a1b3c4d",'
        b'"billerId":"b-123","invoiceId":"inv-1"}'
    )
    secret, timestamp = "whsec_3nP0mQ8dV2sX7kL1aZ9yT4bR6cF5hJ0g", "2025-06-01T09:30:00Z"
    assert sign(secret, body, timestamp) == "na34aBVbmAOXMidx92UY93EsMr2jPEUFML5pWIzB9fk="


def test_an_event_arrives_signed_with_the_thin_payload_and_every_header(
    sandbox_admin: SandboxAdmin, receiver: Receiver
) -> None:
    who, where = subscriber(sandbox_admin), path()
    hook = subscribe(sandbox_admin, who, receiver.url(where), ["customer"])
    secret = new_secret(sandbox_admin, who)
    customer = new_customer(sandbox_admin, who.tokens)

    [delivery] = receiver.wait(where)
    payload = delivery.json
    assert payload["type"] == "CUSTOMER_CREATED"
    assert payload["billerId"] == who.tokens.biller_id
    assert payload["customerId"] == payload["sourceEntityId"] == customer["id"]
    assert set(payload) <= {"type", "eventId", "billerId", "userId", "customerId"} | {
        "sourceEntityId",
        "occurredTime",
    }
    headers = delivery.headers
    assert headers["content-type"] == "application/json; charset=utf-8"
    assert headers["adfin-webhook-id"] == payload["eventId"]
    assert headers["adfin-webhook-type"] == "customer"
    assert uuid.UUID(headers["adfin-webhook-instance-id"])
    assert re.fullmatch(r"[A-Za-z0-9+/]{43}=", headers["adfin-webhook-signature"])
    stamp = headers["adfin-webhook-signature-timestamp"]
    assert TIMESTAMP.match(stamp), stamp
    sent = datetime.fromisoformat(stamp.replace("Z", "+00:00"))
    assert abs((datetime.now(UTC) - sent).total_seconds()) < 60  # wall time
    assert verify(secret, delivery)
    assert not verify(secret + "x", delivery)

    row = delivery_when(sandbox_admin, hook["id"], "SUCCEEDED")
    assert row["eventType"] == "CUSTOMER_CREATED" and row["clientId"] == who.client_id
    assert row["attempts"][0]["signed"] is True


def test_without_a_signing_secret_deliveries_carry_no_signature(
    sandbox_admin: SandboxAdmin, receiver: Receiver
) -> None:
    who, where = subscriber(sandbox_admin), path()
    subscribe(sandbox_admin, who, receiver.url(where), ["customer"])
    new_customer(sandbox_admin, who.tokens)
    [delivery] = receiver.wait(where)
    assert "adfin-webhook-signature" not in delivery.headers
    assert TIMESTAMP.match(delivery.headers["adfin-webhook-signature-timestamp"])


def test_target_credentials_are_presented(sandbox_admin: SandboxAdmin, receiver: Receiver) -> None:
    who, where = subscriber(sandbox_admin), path()
    subscribe(sandbox_admin, who, receiver.url(where), ["customer"])
    auth = {
        "basicAuthentication": {"username": "hooks", "password": "pa:ss wörd"},
        "apiKeyAuthentication": {"headerKey": "X-Api-Key", "headerValue": "k-123"},
    }
    ok(
        sandbox_admin.api.put(
            f"/apps/{who.client_id}/webhooks/auth", headers=who.platform, json=auth
        )
    )
    new_customer(sandbox_admin, who.tokens)
    [delivery] = receiver.wait(where)
    scheme, _, credentials = delivery.headers["authorization"].partition(" ")
    assert scheme == "Basic"
    assert base64.b64decode(credentials).decode("utf-8") == "hooks:pa:ss wörd"
    assert delivery.headers["x-api-key"] == "k-123"


# --- retries --------------------------------------------------------------------------------------


def test_a_failing_receiver_is_retried_with_growing_waits(
    sandbox_admin: SandboxAdmin, receiver: Receiver
) -> None:
    who, where = subscriber(sandbox_admin), path()
    receiver.plan[where] = [500, 500]
    hook = subscribe(sandbox_admin, who, receiver.url(where), ["customer"])
    secret = new_secret(sandbox_admin, who)
    new_customer(sandbox_admin, who.tokens)

    first, second, third = receiver.wait(where, 3)
    assert len({d.headers["adfin-webhook-id"] for d in (first, second, third)}) == 1
    assert len({d.headers["adfin-webhook-instance-id"] for d in (first, second, third)}) == 3
    assert first.body == second.body == third.body
    assert all(verify(secret, d) for d in (first, second, third))
    wait_1, wait_2 = second.at - first.at, third.at - second.at
    assert wait_1 + 0.02 >= RETRY_BASE and wait_1 < wait_2

    row = delivery_when(sandbox_admin, hook["id"], "SUCCEEDED")
    assert row["attemptCount"] == 3
    attempts = row["attempts"]
    assert [a["statusCode"] for a in attempts] == [500, 500, 200]
    assert [a["succeeded"] for a in attempts] == [False, False, True]
    assert [a["instanceId"] for a in attempts] == [
        d.headers["adfin-webhook-instance-id"] for d in (first, second, third)
    ]
    delays = [a["nextDelaySeconds"] for a in attempts]
    assert delays[2] is None and RETRY_BASE <= delays[0] < delays[1]
    failing = deliveries(sandbox_admin, clientId=who.client_id, status="RETRYING")
    assert failing == []


def test_a_subscription_disabled_while_failing_gets_no_more_attempts(
    sandbox_admin: SandboxAdmin, receiver: Receiver
) -> None:
    sandbox_admin.configure(webhookRetryBaseSeconds=0.5)
    try:
        who, where = subscriber(sandbox_admin), path()
        receiver.plan[where] = [503] * 10
        hook = subscribe(sandbox_admin, who, receiver.url(where), ["customer"])
        new_customer(sandbox_admin, who.tokens)
        receiver.wait(where)
        body = {"url": receiver.url(where), "events": ["customer"], "enabled": False}
        hook_path = f"/apps/{who.client_id}/webhooks/{hook['id']}"
        ok(sandbox_admin.api.put(hook_path, headers=who.platform, json=body))
        row = delivery_when(sandbox_admin, hook["id"], "CANCELLED")
        assert len(receiver.at(where)) == 1 and row["attemptCount"] == 1
    finally:
        sandbox_admin.configure(webhookRetryBaseSeconds=RETRY_BASE)


# --- who receives nothing -------------------------------------------------------------------------


def test_disabled_subscriptions_and_unlisted_kinds_receive_nothing(
    sandbox_admin: SandboxAdmin, receiver: Receiver
) -> None:
    who = subscriber(sandbox_admin)
    listed, unlisted, disabled = path(), path(), path()
    subscribe(sandbox_admin, who, receiver.url(listed), ["invoice", "customer"])
    subscribe(sandbox_admin, who, receiver.url(unlisted), ["invoice", "dd-mandate"])
    hook = subscribe(sandbox_admin, who, receiver.url(disabled), ["customer"])
    body = {"url": receiver.url(disabled), "events": ["customer"], "enabled": False}
    hook_path = f"/apps/{who.client_id}/webhooks/{hook['id']}"
    ok(sandbox_admin.api.put(hook_path, headers=who.platform, json=body))

    new_customer(sandbox_admin, who.tokens)
    receiver.wait(listed)
    time.sleep(QUIET)
    assert receiver.at(unlisted) == [] and receiver.at(disabled) == []


def test_an_app_the_biller_has_not_authorised_receives_nothing(
    sandbox_admin: SandboxAdmin, receiver: Receiver
) -> None:
    who, stranger = subscriber(sandbox_admin), subscriber(sandbox_admin)
    mine, theirs = path(), path()
    subscribe(sandbox_admin, who, receiver.url(mine), ["customer"])
    subscribe(sandbox_admin, stranger, receiver.url(theirs), ["customer"])

    new_customer(sandbox_admin, who.tokens)  # who's biller authorised who's app only
    receiver.wait(mine)
    time.sleep(QUIET)
    assert receiver.at(theirs) == []


# --- what is emitted ------------------------------------------------------------------------------


def test_a_failed_request_emits_nothing(sandbox_admin: SandboxAdmin) -> None:
    tokens = sandbox_admin.connect_biller()
    bad = sandbox_admin.api.post("/customers", headers=tokens.headers, json={"name": ""})
    assert bad.status_code == 422
    reader = sandbox_admin.connect_biller(read_only=True)
    patch = [{"op": "replace", "path": "/name", "value": "New name"}]
    assert sandbox_admin.api.patch("/biller", headers=reader.headers, json=patch).status_code == 403
    # Only the billers' own creation (by the admin API) is there.
    for biller_id in (tokens.biller_id, reader.biller_id):
        assert [e["type"] for e in events_of(sandbox_admin, biller_id)] == ["BILLER_CREATED"]


def test_an_event_exists_only_if_its_transaction_commits(tmp_path: Any) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'outbox.db'}")
    init_schema(engine)
    sessions = make_session_factory(engine)
    try:
        with pytest.raises(RuntimeError), session_scope(sessions) as session:
            events.emit(session, biller_id="b-1", kind="biller", type="BILLER_UPDATED", ids={})
            raise RuntimeError("the state change failed after the event was written")
        with session_scope(sessions) as session:
            ids = {"customerId": "c-1"}
            events.emit(session, biller_id="b-1", kind="customer", type="CUSTOMER_UPDATED", ids=ids)
        with session_scope(sessions) as session:
            rows = session.scalars(select(WebhookEvent)).all()
            assert [row.type for row in rows] == ["CUSTOMER_UPDATED"]
    finally:
        engine.dispose()


def test_emit_refuses_names_the_contract_does_not_list(tmp_path: Any) -> None:
    engine = make_engine(f"sqlite:///{tmp_path / 'names.db'}")
    init_schema(engine)
    try:
        with make_session_factory(engine)() as session:
            with pytest.raises(ValueError, match="not an event name"):
                events.emit(
                    session, biller_id="b", kind="invoice", type="PAID", ids={"invoiceId": "i"}
                )
            with pytest.raises(ValueError, match="unknown webhook event kind"):
                events.emit(session, biller_id="b", kind="refund", type="X", ids={})
    finally:
        engine.dispose()


def test_state_changes_emit_the_catalogues_events(sandbox_admin: SandboxAdmin) -> None:
    admin = sandbox_admin
    tokens = admin.connect_biller()
    h = tokens.headers
    customer = new_customer(admin, tokens)
    body = {"name": customer["name"] + " renamed", "people": customer["people"]}
    ok(admin.api.put(f"/customers/{customer['id']}", headers=h, json=body))
    patch = [{"op": "replace", "path": "/name", "value": "Renamed Ltd"}]
    ok(admin.api.patch("/biller", headers=h, json=patch))

    invoice = new_invoice(admin, tokens, customer["id"])
    activate_invoice(admin, tokens, invoice["id"])
    ok(admin.api.post("/payments:import", headers=h, json={
        "invoiceId": invoice["id"], "amount": 10, "reference": "bank transfer"
    }))  # fmt: skip
    ok(admin.api.put(f"/invoices/{invoice['id']}:mark-as-paid", headers=h))
    voided = new_invoice(admin, tokens, customer["id"])
    ok(admin.api.put(f"/invoices/{voided['id']}:void", headers=h, json={}))

    pr = new_payment_request(admin, tokens, customer["id"])
    ok(admin.api.put(f"/payment_requests/{pr['id']}:activate", headers=h, json={
        "collectionMethod": "ONE_TIME_PAYMENT"
    }))  # fmt: skip
    ok(admin.api.put(f"/payment_requests/{pr['id']}:void", headers=h, json={}))

    mandate = ok(admin.api.put(f"/customers/{customer['id']}/directdebitmandates", headers=h))
    set_mandate(admin, customer["id"], "ACTIVE")
    ok(admin.api.put(f"/customers/directdebitmandates/{mandate['id']}:cancel", headers=h))
    ok(admin.api.put(f"/customers/directdebitmandates/{mandate['id']}:reinstate", headers=h))

    emitted = [(e["kind"], e["type"]) for e in events_of(admin, tokens.biller_id)]
    expected = [
        ("biller", "BILLER_CREATED"),
        ("customer", "CUSTOMER_CREATED"),
        ("customer", "CUSTOMER_UPDATED"),
        ("biller", "BILLER_UPDATED"),
        ("invoice", "INVOICE_CREATED"),
        ("invoice", "INVOICE_ACTIVATED"),
        ("payment-request", "PAYMENT_REQUEST_CREATED"),
        ("payment", "PAYMENT_IMPORTED"),
        ("payment-request", "PAYMENT_REQUEST_PAID"),
        ("invoice", "INVOICE_PAID"),
        ("invoice", "INVOICE_CREATED"),
        ("invoice", "INVOICE_VOIDED"),
        ("payment-request", "PAYMENT_REQUEST_CREATED"),
        ("payment-request", "PAYMENT_REQUEST_ACTIVATED"),
        ("payment-request", "PAYMENT_REQUEST_VOIDED"),
        ("dd-mandate", "DIRECT_DEBIT_MANDATE_INITIATED"),
        ("dd-mandate", "DIRECT_DEBIT_MANDATE_ACTIVE"),
        ("dd-mandate", "DIRECT_DEBIT_MANDATE_CANCELLED"),
        ("dd-mandate", "DIRECT_DEBIT_MANDATE_REINSTATED"),
    ]
    assert emitted == expected
    payloads = {e["type"]: e["payload"] for e in events_of(admin, tokens.biller_id)}
    assert payloads["PAYMENT_REQUEST_VOIDED"]["paymentRequestId"] == pr["id"]
    assert payloads["INVOICE_VOIDED"]["customerId"] == customer["id"]
    assert payloads["DIRECT_DEBIT_MANDATE_REINSTATED"]["directDebitMandateId"] == mandate["id"]
    assert payloads["PAYMENT_IMPORTED"]["invoiceId"] == invoice["id"]
    assert payloads["BILLER_UPDATED"]["sourceEntityId"] == tokens.biller_id


def test_deliveries_are_listed_by_client_type_and_status(
    sandbox_admin: SandboxAdmin, receiver: Receiver
) -> None:
    who, where = subscriber(sandbox_admin), path()
    subscribe(sandbox_admin, who, receiver.url(where), ["customer", "invoice"])
    customer = new_customer(sandbox_admin, who.tokens)
    new_invoice(sandbox_admin, who.tokens, customer["id"])
    receiver.wait(where, 2)
    deadline = time.monotonic() + 5
    while len(deliveries(sandbox_admin, clientId=who.client_id, status="SUCCEEDED")) < 2:
        assert time.monotonic() < deadline
        time.sleep(0.05)
    [created] = deliveries(sandbox_admin, clientId=who.client_id, eventType="INVOICE_CREATED")
    assert created["kind"] == "invoice" and created["attemptCount"] == 1
    assert created["attempts"][0]["statusCode"] == 200 and created["attempts"][0]["signed"] is False
    assert deliveries(sandbox_admin, clientId=who.client_id, status="FAILED") == []
