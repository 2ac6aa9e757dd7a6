"""The previous signing secret after a rotation: accepted during its grace period, refused from
the moment the grace period ends — by a running receiver, whose keys are cached between reloads
(``docs/service.md`` §11.2 Signature: the old secret is accepted only "for a short while")."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import UTC, datetime

import httpx
from pydantic import SecretStr

from billing_api import utc_now
from blocks.webhook_settings import WebhookReceiverSettings
from ledger import Ledger
from tests.webhooks.harness import running_receiver

OLD, NEW = "old-" + "o" * 40, "new-" + "n" * 40
GRACE_SECONDS = 2.0


def delivery(secret: str, event_id: str) -> tuple[bytes, dict[str, str]]:
    body = json.dumps(
        {"type": "CUSTOMER_CREATED", "eventId": event_id, "billerId": "b-g", "customerId": "c-1"}
    ).encode()
    stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%S.%f")[:-3] + "Z"
    digest = hmac.new(secret.encode(), body + stamp.encode(), hashlib.sha256).digest()
    return body, {
        "content-type": "application/json; charset=utf-8",
        "adfin-webhook-type": "customer",
        "adfin-webhook-id": event_id,
        "adfin-webhook-signature": base64.b64encode(digest).decode(),
        "adfin-webhook-signature-timestamp": stamp,
    }


def test_the_previous_secret_is_refused_once_its_grace_period_ends(
    prefect_api: str, ledger: Ledger
) -> None:
    rotated_at = utc_now()
    settings = WebhookReceiverSettings(
        signing_secret=SecretStr(NEW),
        previous_signing_secret=SecretStr(OLD),
        rotated_at=rotated_at,
        grace_seconds=GRACE_SECONDS,
        key_mode="utf8",
    )

    with running_receiver(ledger, lambda: settings) as rx:

        def post(secret: str, event_id: str) -> int:
            body, headers = delivery(secret, event_id)
            return httpx.post(rx.url, content=body, headers=headers, timeout=10).status_code

        during = post(OLD, "e-during-grace")
        time.sleep(max(0.0, GRACE_SECONDS + 0.5 - (utc_now() - rotated_at).total_seconds()))
        after = post(OLD, "e-after-grace")  # was 200: the keys loaded during the grace were kept
        current = post(NEW, "e-current")

    assert (during, after, current) == (200, 401, 200)
    stored = {e.event_id for e in ledger.webhook_events(biller_id="b-g")}
    assert stored == {"e-during-grace", "e-current"}
