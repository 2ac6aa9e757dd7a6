"""``billops webhooks setup``: subscribe the receiver, set the credentials the service presents to
it, and rotate the signing secret into the platform credential block
(``docs/service.md`` §11.1 Registration and delivery authentication).

Order matters. The subscription and the target credentials are set first; the signing secret is
replaced last and saved to the block at once, keeping the previous secret for a grace period
(deliveries already in flight were signed with it, §11.2 Signature). The receiver reloads the
block when a delivery does not verify, so it follows a rotation without a restart. Re-running
setup updates the subscription with the same URL instead of adding a second one.
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Literal

from pydantic import SecretStr

from billing_api import BillingClient, utc_now
from billing_api.types import Webhook
from blocks import PlatformCredentials
from blocks.webhook_settings import KeyMode, WebhookReceiverSettings

TargetAuth = Literal["api-key", "basic", "none"]
ALL_KINDS = ("payment", "dd-mandate", "invoice", "biller", "customer", "payment-request", "payout")
API_KEY_HEADER = "X-Billops-Webhook-Key"
BASIC_USER = "billops"
SUBSCRIPTION_NAME = "billops"


@dataclass(frozen=True)
class SetupResult:
    """What setup did (no secrets)."""

    webhook_id: str
    created: bool
    url: str
    events: list[str]
    target_auth: TargetAuth


def set_up_webhooks(
    platform: PlatformCredentials,
    *,
    url: str,
    events: Sequence[str] = ALL_KINDS,
    target_auth: TargetAuth = "api-key",
    key_mode: KeyMode = "either",
    tolerance_seconds: float | None = None,
) -> SetupResult:
    """Create or update the subscription for ``url``, set the target credentials, rotate the
    signing secret; everything the receiver needs ends up in ``platform``'s block."""
    unknown = sorted(set(events) - set(ALL_KINDS))
    if unknown or not events:
        raise ValueError(
            f"events: unknown kind(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(ALL_KINDS)}"
        )
    settings = platform.webhooks or WebhookReceiverSettings()
    client = platform.get_client()
    try:
        hook, created = _subscribe(client, platform.client_id, url, events)
        settings = _with_target_auth(settings, target_auth)
        _send_target_auth(client, platform.client_id, settings, target_auth)
        update: dict[str, object] = {"url": url, "webhook_id": hook.id, "key_mode": key_mode}
        if tolerance_seconds:
            update["tolerance_seconds"] = tolerance_seconds
        platform.save_webhook_settings(settings.model_copy(update=update))
        _rotate_secret(client, platform)
    finally:
        client.close()
    return SetupResult(hook.id, created, url, list(events), target_auth)


def _subscribe(
    client: BillingClient, app: str, url: str, events: Sequence[str]
) -> tuple[Webhook, bool]:
    """The subscription for ``url``: updated when the app has one, else created."""
    existing = [hook for hook in client.webhooks.list(app) if hook.url == url]
    description = "billops webhook receiver (billops webhooks serve)"
    if existing:
        hook = client.webhooks.update(
            app,
            existing[0].id,
            url=url,
            events=list(events),
            name=SUBSCRIPTION_NAME,
            description=description,
            enabled=True,
        )
        return hook, False
    created = client.webhooks.create(
        app, url=url, events=list(events), name=SUBSCRIPTION_NAME, description=description
    )
    return created, True


def _rotate_secret(client: BillingClient, platform: PlatformCredentials) -> None:
    """A new signing secret, saved at once; the one it replaces, and every earlier one still in
    its grace period, stay accepted until their own grace periods end (deliveries signed with
    them may still be in flight or retried: ``docs/service.md`` §11.2 Signature)."""
    settings = platform.webhooks or WebhookReceiverSettings()
    secret = client.webhooks.generate_signing_secret(platform.client_id).secret_key
    platform.save_webhook_settings(settings.rotated(secret, utc_now()))


def _with_target_auth(
    settings: WebhookReceiverSettings, target_auth: TargetAuth
) -> WebhookReceiverSettings:
    """Credentials for the chosen method: the block's own when it has them, new ones otherwise."""
    if target_auth == "api-key":
        value = settings.api_key_value or SecretStr(secrets.token_urlsafe(32))
        return settings.model_copy(
            update={
                "api_key_header": settings.api_key_header or API_KEY_HEADER,
                "api_key_value": value,
                "basic_username": None,
                "basic_password": None,
            }
        )
    if target_auth == "basic":
        password = settings.basic_password or SecretStr(secrets.token_urlsafe(32))
        return settings.model_copy(
            update={
                "basic_username": settings.basic_username or BASIC_USER,
                "basic_password": password,
                "api_key_header": None,
                "api_key_value": None,
            }
        )
    return settings.model_copy(
        update={
            "basic_username": None,
            "basic_password": None,
            "api_key_header": None,
            "api_key_value": None,
        }
    )


def _send_target_auth(
    client: BillingClient, app: str, settings: WebhookReceiverSettings, target_auth: TargetAuth
) -> None:
    """Tell the service what to present (``none`` leaves the service's setting as it is: the
    client has no call that clears it, and the signature still guards the receiver)."""
    if target_auth == "api-key":
        assert settings.api_key_header and settings.api_key_value
        client.webhooks.set_target_auth(
            app,
            api_key_authentication={
                "headerKey": settings.api_key_header,
                "headerValue": settings.api_key_value,
            },
        )
    elif target_auth == "basic":
        assert settings.basic_username and settings.basic_password
        client.webhooks.set_target_auth(
            app,
            basic_authentication={
                "username": settings.basic_username,
                "password": settings.basic_password,
            },
        )
