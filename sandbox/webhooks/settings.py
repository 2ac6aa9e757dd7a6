"""Webhook subscriptions of an app, its signing secret and the credentials it presents to targets.

What delivery needs is here too: :func:`signing_secret` (None until ``digest`` was called: such
deliveries carry no signature) and :func:`target_auth_headers`.
"""

from __future__ import annotations

import base64
import ipaddress
import re
import secrets
from typing import Any
from urllib.parse import urlsplit

from pydantic import BaseModel, ConfigDict, Field, StrictBool, StrictStr
from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.core import ids, state
from sandbox.core.errors import VALIDATION_ERROR, ApiError, not_found
from sandbox.core.timefmt import iso
from sandbox.core.validation import is_uri
from sandbox.models import AppWebhookSettings, Webhook

EVENT_KINDS = (
    "payment",
    "dd-mandate",
    "invoice",
    "biller",
    "customer",
    "payment-request",
    "payout",
)
MAX_URL = 2048
_TOKEN = re.compile(r"^[!#$%&'*+.^_`|~0-9A-Za-z-]+$")
# Headers a target credential may not set: the contract's reserved names, plus those that would
# break the HTTP request itself.
_RESERVED_HEADERS = frozenset(
    {"authorization", "content-type", "content-length", "host", "transfer-encoding", "connection"}
)
_LOOPBACK_NAMES = frozenset({"localhost"})


class WebhookIn(BaseModel):
    """``WebhookCreate`` / ``WebhookUpdate`` (``enabled`` left out or null: unchanged)."""

    model_config = ConfigDict(extra="ignore")
    url: StrictStr
    events: list[StrictStr]
    name: StrictStr | None = Field(None, max_length=255)
    description: StrictStr | None = Field(None, max_length=1024)
    enabled: StrictBool | None = None


class BasicIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    username: StrictStr = Field(max_length=255)
    password: StrictStr = Field(max_length=1024)


class ApiKeyIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    header_key: StrictStr = Field(alias="headerKey", max_length=255)
    header_value: StrictStr = Field(alias="headerValue", max_length=4096)


class TargetAuthIn(BaseModel):
    """``WebhookAuthRequest``: either, both or neither (neither clears both)."""

    model_config = ConfigDict(extra="ignore")
    basic: BasicIn | None = Field(None, alias="basicAuthentication")
    api_key: ApiKeyIn | None = Field(None, alias="apiKeyAuthentication")


def _invalid(field: str, detail: str) -> ApiError:
    return ApiError(422, VALIDATION_ERROR, detail, field=field)


def _is_loopback(host: str) -> bool:
    if host.lower() in _LOOPBACK_NAMES:
        return True
    try:
        return ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


def check_url(url: str) -> str:
    """An absolute https URL; http only for loopback hosts (local testing) [I]."""
    if len(url) > MAX_URL or not is_uri(url):
        raise _invalid("url", f"must be an absolute URL of at most {MAX_URL} characters")
    parts = urlsplit(url)
    try:
        host, _port = parts.hostname, parts.port
    except ValueError as exc:
        raise _invalid("url", "has an invalid port") from exc
    if parts.scheme not in ("https", "http") or not host:
        raise _invalid("url", "must be an absolute https URL")
    if parts.scheme == "http" and not _is_loopback(host):
        raise _invalid("url", "must use https (http is allowed for loopback hosts only)")
    return url


def check_events(events: list[str]) -> list[str]:
    """At least one kind, each known, none twice."""
    if not events:
        raise _invalid("events", "subscribe to at least one event kind")
    for index, kind in enumerate(events):
        if kind not in EVENT_KINDS:
            raise _invalid(f"events[{index}]", f"unknown event kind; use {', '.join(EVENT_KINDS)}")
        if kind in events[:index]:
            raise _invalid(f"events[{index}]", "this event kind is listed twice")
    return list(events)


def public(webhook: Webhook) -> dict[str, Any]:
    return {
        "id": webhook.id,
        "clientId": webhook.client_id,
        "url": webhook.url,
        "name": webhook.name,
        "description": webhook.description,
        "events": list(webhook.events),
        "enabled": webhook.enabled,
        "creationTime": iso(webhook.created_at),
        "lastUpdatedTime": iso(webhook.updated_at),
    }


def create_webhook(session: Session, client_id: str, body: WebhookIn) -> Webhook:
    now = state.now(session)
    webhook = Webhook(
        id=ids.new_uuid(),
        client_id=client_id,
        url=check_url(body.url),
        name=body.name,
        description=body.description,
        events=check_events(body.events),
        enabled=True,
        created_at=now,
        updated_at=now,
    )
    session.add(webhook)
    session.flush()
    return webhook


def get_webhook(session: Session, client_id: str, webhook_id: str) -> Webhook:
    """The app's webhook, or 404."""
    webhook = session.get(Webhook, webhook_id)
    if webhook is None or webhook.client_id != client_id:
        raise not_found("webhook")
    return webhook


def list_webhooks(session: Session, client_id: str) -> list[Webhook]:
    """The app's subscriptions, oldest first."""
    query = select(Webhook).where(Webhook.client_id == client_id)
    return list(session.scalars(query.order_by(Webhook.created_at, Webhook.id)))


def delete_webhook(session: Session, webhook: Webhook) -> None:
    session.delete(webhook)


def update_webhook(session: Session, webhook: Webhook, body: WebhookIn) -> Webhook:
    """Replace url, events, name and description; ``enabled`` only when given."""
    webhook.url = check_url(body.url)
    webhook.events = check_events(body.events)
    webhook.name, webhook.description = body.name, body.description
    if body.enabled is not None:
        webhook.enabled = body.enabled
    webhook.updated_at = state.now(session)
    return webhook


def _settings(session: Session, client_id: str) -> AppWebhookSettings:
    settings = session.get(AppWebhookSettings, client_id)
    if settings is None:
        settings = AppWebhookSettings(client_id=client_id, updated_at=state.now(session))
        session.add(settings)
    return settings


def new_signing_secret(session: Session, client_id: str) -> str:
    """A new app-wide signing secret, replacing the old one at once."""
    settings = _settings(session, client_id)
    settings.signing_secret = secrets.token_urlsafe(32)
    settings.updated_at = state.now(session)
    return settings.signing_secret


def _check_target_auth(body: TargetAuthIn) -> None:
    if body.basic is not None:
        username = body.basic.username
        if not username.strip():
            raise _invalid("basicAuthentication.username", "must not be blank")
        if ":" in username:  # RFC 7617: the user-id cannot contain a colon
            raise _invalid("basicAuthentication.username", "must not contain ':'")
    if body.api_key is not None:
        key, value = body.api_key.header_key, body.api_key.header_value
        if not _TOKEN.match(key):
            raise _invalid("apiKeyAuthentication.headerKey", "must be an HTTP header name")
        if key.lower() in _RESERVED_HEADERS or key.lower().startswith("adfin-webhook-"):
            raise _invalid("apiKeyAuthentication.headerKey", f"{key} is reserved")
        if not value.strip() or any(ord(ch) < 0x20 or ord(ch) == 0x7F for ch in value):
            raise _invalid(
                "apiKeyAuthentication.headerValue", "must be non-blank visible header text"
            )


def set_target_auth(session: Session, client_id: str, body: TargetAuthIn) -> None:
    """Store the credentials; a method left out (or both) is removed."""
    _check_target_auth(body)
    settings = _settings(session, client_id)
    basic, api_key = body.basic, body.api_key
    settings.basic_username = basic.username if basic else None
    settings.basic_password = basic.password if basic else None
    settings.api_key_header = api_key.header_key if api_key else None
    settings.api_key_value = api_key.header_value if api_key else None
    settings.updated_at = state.now(session)


# --- for delivery -----------------------------------------------------------------------------


def signing_secret(session: Session, client_id: str) -> str | None:
    """The app's current signing secret (the HMAC key, as its UTF-8 bytes), or None."""
    settings = session.get(AppWebhookSettings, client_id)
    return settings.signing_secret if settings else None


def target_auth_headers(session: Session, client_id: str) -> dict[str, str]:
    """The headers a delivery to the app's targets carries for authentication."""
    settings = session.get(AppWebhookSettings, client_id)
    headers: dict[str, str] = {}
    if settings is None:
        return headers
    if settings.basic_username is not None:
        pair = f"{settings.basic_username}:{settings.basic_password or ''}".encode()
        headers["Authorization"] = "Basic " + base64.b64encode(pair).decode("ascii")
    if settings.api_key_header is not None and settings.api_key_value is not None:
        headers[settings.api_key_header] = settings.api_key_value
    return headers
