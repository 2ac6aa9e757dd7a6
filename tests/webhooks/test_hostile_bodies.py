"""The hostile-input sweep's webhook part: every bad delivery the receiver's own tests refuse
(``test_verify.MALFORMED``, ``test_receiver``'s tampered, stale, unsigned and unauthenticated
deliveries) and a few more a hostile sender would try, sent in one go to a running receiver
beside the sandbox's real deliveries. Each gets a 4xx (never a 5xx, which would make the service
retry it forever), nothing of them is stored, and the receiver still stores the next real event.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from typing import Any

import httpx
from starlette.types import ASGIApp

from ledger import Ledger
from tests.support.billing import new_customer
from tests.support.sandbox_admin import SandboxAdmin
from tests.webhooks.conftest import Platform
from tests.webhooks.harness import running_receiver
from tests.webhooks.test_receiver import (  # noqa: F401 - subscribed is a fixture
    Recorder,
    _resign,
    _stamp,
    loader,
    settled,
    stored_settings,
    subscribed,
)
from tests.webhooks.test_verify import MALFORMED

SIG, TS = "adfin-webhook-signature", "adfin-webhook-signature-timestamp"
# Signed correctly, each wrong in a way no test above covers.
MORE_BODIES = [
    (b"\xff\xfe{\x00}", "not UTF-8"),
    (b"", "empty"),
    (b'{"type":123,"eventId":"e","billerId":"b"}', "a number for the type"),
    (b'{"type":"CUSTOMER_CREATED","eventId":{"a":1},"billerId":["x"]}', "objects for ids"),
    (b'"just a string"', "a JSON string"),
    (b"null", "JSON null"),
]


def test_every_hostile_delivery_gets_a_4xx_and_the_receiver_goes_on(
    subscribed: tuple[Platform, Any],  # noqa: F811 - the fixture imported above
    ledger: Ledger,
    hooks_sandbox: SandboxAdmin,
) -> None:
    platform, listener = subscribed
    settings = stored_settings(platform)
    assert settings.signing_secret and settings.api_key_value and settings.api_key_header
    secret = settings.signing_secret.get_secret_value()
    key_header = settings.api_key_header.lower()
    recorders: list[Recorder] = []

    def wrap(app: ASGIApp) -> ASGIApp:
        recorders.append(Recorder(app))
        return recorders[0]

    with running_receiver(ledger, loader(platform.name), wrap=wrap, listener=listener) as rx:
        new_customer(hooks_sandbox, platform.tokens)
        settled(hooks_sandbox, platform.tokens.app.client_id, 1)
        [(real, headers)] = recorders[0].requests

        def post(data: bytes, **changes: str | None) -> int:
            sent = {k: v for k, v in {**headers, **changes}.items() if v is not None}
            sent.pop("content-length", None)
            sent.pop("adfin-webhook-id", None)  # each hostile body is a delivery of its own
            return httpx.post(rx.url, content=data, headers=sent, timeout=30).status_code

        def signed(data: bytes) -> int:
            now = _stamp(datetime.now(UTC))
            return post(data, **{TS: now, SIG: _resign(data, secret, now)})

        old = _stamp(datetime.now(UTC) - timedelta(minutes=10))
        answers = {f"malformed {n}": signed(body) for n, (body, _s, _r) in enumerate(MALFORMED)}
        answers |= {name: signed(body) for body, name in MORE_BODIES}
        answers |= {
            "tampered": post(real.replace(b"CUSTOMER_CREATED", b"CUSTOMER_DELETED")),
            "stale": post(real, **{TS: old, SIG: _resign(real, secret, old)}),
            "unsigned": post(real, **{SIG: None}),
            "signed with a guess": post(real, **{SIG: _resign(real, "guess" * 8, headers[TS])}),
            "wrong api key": post(real, **{key_header: "guess"}),
            "no api key": post(real, **{key_header: None}),
            "too large unsigned": post(b"{" + b" " * 300_000 + b"}"),
        }
        # Signed correctly with a timestamp no datetime holds: parsing it raised OverflowError
        # or OSError past the receiver's ValueError, a 500 the service retries for ever.
        for far in ("99999999999999999999", "0001-01-01T00:30:00+01:00"):
            answers[f"timestamp {far}"] = post(real, **{TS: far, SIG: _resign(real, secret, far)})
        alive = rx.health()
        new_customer(hooks_sandbox, platform.tokens)
        deliveries = settled(hooks_sandbox, platform.tokens.app.client_id, 2)

    expected = {f"malformed {n}": status for n, (_b, status, _r) in enumerate(MALFORMED)}
    wrong = {
        name: code
        for name, code in answers.items()
        if not 400 <= code < 500 or (name in expected and code != expected[name])
    }
    assert wrong == {}, json.dumps(wrong)
    assert alive["refused"] and sum(alive["refused"].values()) == len(answers), alive
    assert [d["status"] for d in deliveries] == ["SUCCEEDED", "SUCCEEDED"]
    stored = ledger.webhook_events(biller_id=platform.tokens.biller_id)
    assert [e.type for e in stored] == ["CUSTOMER_CREATED", "CUSTOMER_CREATED"]
    everything = ledger.webhook_events()
    assert len(everything) == 2, [(e.biller_id, e.type) for e in everything]
