"""The receiver against the sandbox's real deliveries: signed, retried, sometimes refused.

Each test subscribes a running receiver with ``set_up_webhooks`` (the code behind
``billops webhooks setup``), makes the service emit events, and checks what the ledger stored,
what the sandbox saw answered, and what reached the Prefect server.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
import pytest
from starlette.types import ASGIApp, Receive, Scope, Send

from blocks import PlatformCredentials
from blocks.webhook_settings import WebhookReceiverSettings
from ledger import Ledger
from tasks.webhooks.prefect_events import event_uuid
from tasks.webhooks.subscription import set_up_webhooks
from tests.support.billing import new_customer
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret
from tests.webhooks.conftest import Platform
from tests.webhooks.harness import (
    FirstAnswerLost,
    reserve_port,
    running_receiver,
    url_of,
)
from tests.webhooks.prefect_events import events_of, wait_for_events


def loader(name: str) -> Any:
    def load() -> WebhookReceiverSettings:
        settings = PlatformCredentials.load_named(name).webhooks
        assert settings is not None
        return settings

    return load


def stored_settings(platform: Platform) -> WebhookReceiverSettings:
    settings = PlatformCredentials.load_named(platform.name).webhooks
    assert settings is not None and settings.signing_secret is not None
    register_secret(settings.signing_secret.get_secret_value())
    if settings.api_key_value is not None:
        register_secret(settings.api_key_value.get_secret_value())
    return settings


def sandbox_deliveries(admin: SandboxAdmin, client_id: str) -> list[dict[str, Any]]:
    answer = admin.http.get("/_sandbox/webhooks/deliveries", params={"clientId": client_id})
    return list(answer.json()["deliveries"])


def settled(admin: SandboxAdmin, client_id: str, count: int) -> list[dict[str, Any]]:
    """The app's deliveries once ``count`` of them succeeded."""
    deadline = time.monotonic() + 20
    while True:
        rows = sandbox_deliveries(admin, client_id)
        if sum(row["status"] == "SUCCEEDED" for row in rows) >= count:
            return rows
        assert time.monotonic() < deadline, rows
        time.sleep(0.1)


class Recorder:
    """ASGI middleware keeping each request's raw body and headers (to replay or alter them)."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.requests: list[tuple[bytes, dict[str, str]]] = []

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] != "/webhooks":
            await self.app(scope, receive, send)
            return
        chunks: list[bytes] = []
        while True:
            message = await receive()
            chunks.append(message.get("body", b""))
            if not message.get("more_body"):
                break
        body = b"".join(chunks)
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        self.requests.append((body, headers))
        sent = False

        async def replay() -> Any:
            nonlocal sent
            if sent:
                return {"type": "http.disconnect"}
            sent = True
            return {"type": "http.request", "body": body, "more_body": False}

        await self.app(scope, replay, send)


@pytest.fixture
def subscribed(platform: Platform, ledger: Ledger) -> Iterator[tuple[Platform, Any]]:
    listener = reserve_port()
    set_up_webhooks(platform.block, url=url_of(listener), events=["customer", "invoice"])
    ledger.set_biller_block(platform.tokens.biller_id, "acme-block")
    yield platform, listener


def test_deliveries_are_stored_once_and_emitted_once_even_when_an_answer_is_lost(
    subscribed: tuple[Platform, Any], ledger: Ledger, hooks_sandbox: SandboxAdmin
) -> None:
    platform, listener = subscribed
    stored_settings(platform)
    lossy: list[FirstAnswerLost] = []

    def wrap(app: ASGIApp) -> ASGIApp:
        lossy.append(FirstAnswerLost(app))
        return lossy[0]

    with running_receiver(ledger, loader(platform.name), wrap=wrap, listener=listener) as rx:
        customers = [new_customer(hooks_sandbox, platform.tokens) for _ in range(3)]
        rows = settled(hooks_sandbox, platform.tokens.app.client_id, 3)
        resource = f"billops.biller.{platform.tokens.biller_id}"
        events = wait_for_events(resource, 3)
        time.sleep(1.5)  # anything emitted twice would have arrived by now
        health = rx.health()

    # The service saw each event's first answer lost (502) and its retry acknowledged.
    assert (
        sorted(
            [a["statusCode"] for a in row["attempts"]] for row in rows if row["kind"] == "customer"
        )
        == [[502, 200]] * 3
    )
    assert lossy[0].replaced == 3
    stored = ledger.webhook_events(biller_id=platform.tokens.biller_id)
    assert [(e.type, e.deliveries, e.emissions) for e in stored] == [("CUSTOMER_CREATED", 2, 1)] * 3
    assert health["stored"] == 3 and health["duplicates"] == 3 and health["emitted"] == 3
    # Prefect has each event once, named, labelled and related to the customer.
    assert len(events_of(resource)) == 3
    by_id = {e["id"]: e for e in events}
    for record in stored:
        event = by_id[str(event_uuid(record.dedup_key))]
        assert event["event"] == "billops.service.customer.customer_created"
        assert event["resource"]["billops.biller.block"] == "acme-block"
        assert event["resource"]["billops.biller.id"] == platform.tokens.biller_id
        [related] = event["related"]
        assert related["prefect.resource.role"] == "customer"
    related_ids = {e["related"][0]["prefect.resource.id"] for e in events}
    assert related_ids == {f"billops.service.customer.{c['id']}" for c in customers}


def _resign(body: bytes, secret: str, stamp: str) -> str:
    digest = hmac.new(secret.encode(), body + stamp.encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def _stamp(at: datetime) -> str:
    return at.strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"


def test_bad_deliveries_are_refused_and_replays_deduplicated(
    subscribed: tuple[Platform, Any],
    ledger: Ledger,
    hooks_sandbox: SandboxAdmin,
    caplog: pytest.LogCaptureFixture,
) -> None:
    platform, listener = subscribed
    settings = stored_settings(platform)
    assert settings.signing_secret and settings.api_key_value and settings.api_key_header
    secret = settings.signing_secret.get_secret_value()
    recorders: list[Recorder] = []

    def wrap(app: ASGIApp) -> ASGIApp:
        recorders.append(Recorder(app))
        return recorders[0]

    with running_receiver(ledger, loader(platform.name), wrap=wrap, listener=listener) as rx:
        new_customer(hooks_sandbox, platform.tokens)
        settled(hooks_sandbox, platform.tokens.app.client_id, 1)
        [(body, headers)] = recorders[0].requests
        key_header = settings.api_key_header.lower()
        assert headers[key_header] == settings.api_key_value.get_secret_value()

        def post(data: bytes, **changes: str | None) -> httpx.Response:
            sent = {k: v for k, v in {**headers, **changes}.items() if v is not None}
            sent.pop("content-length", None)
            return httpx.post(rx.url, content=data, headers=sent, timeout=10)

        now = _stamp(datetime.now(UTC))
        old = _stamp(datetime.now(UTC) - timedelta(minutes=10))
        tampered = body.replace(b"CUSTOMER_CREATED", b"CUSTOMER_DELETED")
        malformed = b'{"type":"CUSTOMER_CREATED","eventId":"x"}'
        no_id = json.dumps(
            {"type": "CUSTOMER_UPDATED", "billerId": platform.tokens.biller_id, "customerId": "c"}
        ).encode()
        sig = "adfin-webhook-signature"
        ts = "adfin-webhook-signature-timestamp"
        answers = {
            "replayed": post(body).status_code,
            "bad signature": post(tampered).status_code,
            "old timestamp": post(body, **{ts: old, sig: _resign(body, secret, old)}).status_code,
            "wrong api key": post(body, **{key_header: "guess"}).status_code,
            "no api key": post(body, **{key_header: None}).status_code,
            "unsigned": post(body, **{sig: None}).status_code,
            "malformed": post(malformed, **{ts: now, sig: _resign(malformed, secret, now)}),
            "too large": post(b"{" + b" " * 300_000 + b"}").status_code,
        }
        answers["malformed"] = answers["malformed"].status_code  # type: ignore[assignment]
        no_id_headers = {ts: now, sig: _resign(no_id, secret, now), "adfin-webhook-id": None}
        first_no_id = post(no_id, **no_id_headers)
        again_no_id = post(no_id, **no_id_headers)
        health = rx.health()

    assert answers == {
        "replayed": 200,
        "bad signature": 401,
        "old timestamp": 401,
        "wrong api key": 401,
        "no api key": 401,
        "unsigned": 401,
        "malformed": 400,
        "too large": 413,
    }
    assert first_no_id.json() == {"stored": True, "duplicate": False}
    assert again_no_id.json() == {"stored": True, "duplicate": True}
    stored = ledger.webhook_events(biller_id=platform.tokens.biller_id)
    assert [(e.type, e.deliveries) for e in stored] == [
        ("CUSTOMER_CREATED", 2),
        ("CUSTOMER_UPDATED", 2),
    ]
    assert stored[1].dedup_key == "body:" + hashlib.sha256(no_id).hexdigest()
    assert health["refused"] == {"400": 1, "401": 5, "413": 1}
    assert all(e.emissions == 1 for e in stored)
    logged = caplog.text
    assert "refused (401)" in logged and "outside the 300 s window" in logged
    assert secret not in logged and settings.api_key_value.get_secret_value() not in logged
    assert body.decode() not in logged


def test_a_rotated_secret_is_picked_up_without_a_restart(
    subscribed: tuple[Platform, Any], ledger: Ledger, hooks_sandbox: SandboxAdmin
) -> None:
    platform, listener = subscribed
    before = stored_settings(platform)
    with running_receiver(ledger, loader(platform.name), listener=listener) as rx:
        new_customer(hooks_sandbox, platform.tokens)
        settled(hooks_sandbox, platform.tokens.app.client_id, 1)
        set_up_webhooks(platform.block, url=rx.url, events=["customer"])  # rotates the secret
        after = stored_settings(platform)
        assert after.signing_secret != before.signing_secret
        assert after.previous_signing_secret == before.signing_secret
        new_customer(hooks_sandbox, platform.tokens)
        rows = settled(hooks_sandbox, platform.tokens.app.client_id, 2)
    assert len(ledger.webhook_events(biller_id=platform.tokens.biller_id)) == 2
    hooks = {row["webhookId"] for row in rows}
    assert len(hooks) == 1  # setup updated the subscription, it did not add a second
