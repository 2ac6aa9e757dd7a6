"""The previous signing secret after a rotation: accepted during its grace period, refused from
the moment the grace period ends — by a running receiver, whose keys are cached between reloads
(``docs/service.md`` §11.2 Signature: the old secret is accepted only "for a short while")."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time
from datetime import UTC, datetime, timedelta

import httpx
from pydantic import SecretStr

from billing_api import utc_now
from blocks import PlatformCredentials
from blocks.webhook_settings import WebhookReceiverSettings
from ledger import Ledger
from tasks.webhooks.subscription import set_up_webhooks
from tests.support.secret_scan import register_secret
from tests.webhooks.conftest import Platform
from tests.webhooks.harness import reserve_port, running_receiver, url_of

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


def test_setup_twice_within_the_grace_period_keeps_the_first_secret_until_its_own_end(
    platform: Platform, ledger: Ledger
) -> None:
    """``billops webhooks setup`` run again within the grace period: every replaced secret is
    accepted until its own grace period ends (deliveries signed with the first one may still be
    retried by the service), then refused; the receiver reloads at each end, earliest first."""
    grace = 20.0  # a setup takes seconds (service, block lock, block saves)
    listener = reserve_port()
    url = url_of(listener)
    # A short grace period, so the test sees its end (the setting survives every setup).
    platform.block.save_webhook_settings(WebhookReceiverSettings(grace_seconds=grace))
    signed_with, started, done = [], [], []
    for pause in (0.0, 0.0, 5.0):  # the third setup well after the second: two distinct ends
        time.sleep(pause)
        started.append(utc_now())
        set_up_webhooks(platform.block, url=url, events=["customer"])
        done.append(utc_now())
        settings = PlatformCredentials.load_named(platform.name).webhooks
        assert settings is not None and settings.signing_secret is not None
        signed_with.append(settings.signing_secret.get_secret_value())
        register_secret(signed_with[-1])
    first, second, current = signed_with
    assert settings.api_key_header and settings.api_key_value is not None
    api_key = settings.api_key_value.get_secret_value()
    register_secret(api_key)
    # Each replaced secret's grace period runs from the setup that replaced it.
    first_ends_by = done[1] + timedelta(seconds=grace)
    second_ends_after = started[2] + timedelta(seconds=grace)

    def load() -> WebhookReceiverSettings:
        stored = PlatformCredentials.load_named(platform.name).webhooks
        assert stored is not None
        return stored

    with running_receiver(ledger, load, listener=listener) as rx:

        def post(secret: str, event_id: str) -> int:
            body, headers = delivery(secret, event_id)
            headers[settings.api_key_header or ""] = api_key
            return httpx.post(rx.url, content=body, headers=headers, timeout=10).status_code

        def wait_past(end: datetime) -> None:
            time.sleep(max(0.0, (end - utc_now()).total_seconds() + 0.3))

        during = (post(first, "e-first"), post(second, "e-second"), post(current, "e-current"))
        wait_past(first_ends_by)
        assert utc_now() < second_ends_after, "the second secret's grace period lasts longer"
        after_first = (post(first, "e-first-late"), post(second, "e-second-late"))
        wait_past(done[2] + timedelta(seconds=grace))
        after_second = (post(second, "e-second-too-late"), post(current, "e-current-late"))

    assert during == (200, 200, 200)
    assert after_first == (401, 200)
    assert after_second == (401, 200)


def test_settings_saved_by_the_previous_version_still_load_and_verify() -> None:
    """Blocks written before the list of replaced secrets existed hold one previous secret and
    ``rotated_at``: that secret is accepted until its grace period ends, and a rotation keeps it
    beside the one it replaces."""
    rotated_at = datetime(2027, 3, 1, 12, 0, tzinfo=UTC)
    old_block = {
        "signing_secret": NEW,
        "previous_signing_secret": OLD,
        "rotated_at": rotated_at.isoformat(),
        "grace_seconds": 900,
        "key_mode": "utf8",
    }
    settings = WebhookReceiverSettings.model_validate(old_block)
    during, after = rotated_at + timedelta(minutes=10), rotated_at + timedelta(minutes=16)
    assert [s.get_secret_value() for s in settings.secrets(during)] == [NEW, OLD]
    assert [s.get_secret_value() for s in settings.secrets(after)] == [NEW]
    assert settings.grace_ends(during) == rotated_at + timedelta(minutes=15)
    newest = "newest-" + "x" * 40
    rotated = settings.rotated(newest, during)
    assert [s.get_secret_value() for s in rotated.secrets(during)] == [newest, OLD, NEW]
    assert rotated.grace_ends(during) == rotated_at + timedelta(minutes=15)
    later = during + timedelta(minutes=10)  # OLD's grace is over, NEW's (from `during`) is not
    assert [s.get_secret_value() for s in rotated.secrets(later)] == [newest, NEW]
    # What an earlier version of billops reads from the rotated settings: the secret just
    # replaced and when, as before.
    assert rotated.previous_signing_secret is not None
    assert (rotated.previous_signing_secret.get_secret_value(), rotated.rotated_at) == (
        NEW,
        during,
    )


def test_replaced_secrets_are_hidden_where_prefect_shows_the_block(platform: Platform) -> None:
    """The Prefect UI and API show a block without its secret fields; a list of replaced secrets
    inside the settings was shown in clear (Prefect hides only fields that are secrets
    themselves), so the list is kept as one secret field."""
    from prefect.client.orchestration import get_client

    now = utc_now()
    secrets = ["first-" + "a" * 40, "second-" + "b" * 40, "current-" + "c" * 40]
    for secret in secrets:
        register_secret(secret)
    settings = WebhookReceiverSettings(signing_secret=SecretStr(secrets[0]))
    settings = settings.rotated(secrets[1], now).rotated(secrets[2], now)
    platform.block.save_webhook_settings(settings)

    with get_client(sync_client=True) as client:
        shown = client.read_block_document_by_name(
            platform.name, PlatformCredentials.get_block_type_slug(), include_secrets=False
        )
    text = json.dumps(shown.data, default=str)
    assert not [s for s in secrets if s in text], text
    stored = PlatformCredentials.load_named(platform.name).webhooks
    assert stored is not None
    assert [s.get_secret_value() for s in stored.secrets(now)] == [secrets[2], *secrets[:2]]
