"""Receiving webhooks: signature verification and typed event parsing.

Signature (contract ``WebhookDelivery``, docs/service.md §11.2 Signature)::

    adfin-webhook-signature = base64(HMAC-SHA256(key, raw_body + timestamp))

where ``timestamp`` is the exact ``adfin-webhook-signature-timestamp`` header value. Whether the
real service uses the secret's UTF-8 bytes or its base64-decoded bytes as the key is not
documented, so both are accepted. Verify the raw bytes as received (never re-serialised JSON).
The service documents no replay window; :func:`verify_signature` enforces one (300 s by default,
configurable), comparing the signed timestamp with the receiver's clock.

Deliveries may repeat and arrive out of order: deduplicate on ``event_id`` and re-fetch the
resource named by ``entity_id`` (payloads carry ids only).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
import json
from collections.abc import Callable, Mapping
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import SecretStr, ValidationError

from billing_api._exceptions import BillingApiError
from billing_api.types import (
    BillerEvent,
    CustomerEvent,
    DdMandateEvent,
    InvoiceEvent,
    PaymentEvent,
    PaymentRequestEvent,
    PayoutEvent,
    UnknownEvent,
    WebhookEvent,
    parse_timestamp,
)

__all__ = [
    "DEFAULT_TOLERANCE",
    "EVENT_ID_HEADER",
    "SIGNATURE_HEADER",
    "TIMESTAMP_HEADER",
    "TYPE_HEADER",
    "WebhookPayloadError",
    "WebhookSignatureError",
    "parse_event",
    "verify_signature",
]

SIGNATURE_HEADER = "adfin-webhook-signature"
TIMESTAMP_HEADER = "adfin-webhook-signature-timestamp"
TYPE_HEADER = "adfin-webhook-type"
EVENT_ID_HEADER = "adfin-webhook-id"
DEFAULT_TOLERANCE = timedelta(seconds=300)

_MODELS: dict[str, type[WebhookEvent]] = {
    "payment": PaymentEvent,
    "dd-mandate": DdMandateEvent,
    "invoice": InvoiceEvent,
    "biller": BillerEvent,
    "customer": CustomerEvent,
    "payment-request": PaymentRequestEvent,
    "payout": PayoutEvent,
}
# Event-name prefixes -> kind, for payloads read without the delivery headers. Longest first:
# PAYMENT_REQUEST_ must win over PAYMENT_.
_PREFIXES = (
    ("PAYMENT_REQUEST_", "payment-request"),
    ("DIRECT_DEBIT_MANDATE_", "dd-mandate"),
    ("DD_PAYMENT_", "payment"),
    ("PAYMENT_", "payment"),
    ("INVOICE_", "invoice"),
    ("BILLER_", "biller"),
    ("CUSTOMER_", "customer"),
    ("PAYOUT_", "payout"),
)


class WebhookSignatureError(BillingApiError):
    """A delivery failed verification; the message says why (never the secret)."""


class WebhookPayloadError(BillingApiError, ValueError):
    """A delivery's body is not an event this client can read; the message says what is wrong."""


def _lower(headers: Mapping[str, str]) -> dict[str, str]:
    return {key.lower(): value for key, value in headers.items()}


def _keys(secret: str | bytes | SecretStr) -> list[bytes]:
    """The candidate HMAC keys: the secret's raw bytes, and its base64 decoding when it has one."""
    if isinstance(secret, SecretStr):
        secret = secret.get_secret_value()
    raw = secret.encode("utf-8") if isinstance(secret, str) else bytes(secret)
    if not raw:
        raise ValueError("secret: the webhook signing secret is empty")
    keys = [raw]
    text = raw.strip().decode("ascii", errors="replace")
    padded = text + "=" * (-len(text) % 4)
    for decode in (base64.b64decode, base64.urlsafe_b64decode):
        try:
            decoded = decode(padded.encode("ascii"))
        except (binascii.Error, ValueError):
            continue
        if decoded and decoded not in keys:
            keys.append(decoded)
    return keys


def _signature_bytes(value: str) -> bytes:
    try:
        return base64.b64decode(value.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise WebhookSignatureError(
            f"header {SIGNATURE_HEADER} is not base64 (expected 44 characters)"
        ) from None


def _required(headers: dict[str, str], name: str) -> str:
    value = headers.get(name)
    if not value:
        raise WebhookSignatureError(f"header {name} is missing: not a signed delivery")
    return value


def verify_signature(
    body: bytes,
    headers: Mapping[str, str],
    secret: str | bytes | SecretStr,
    tolerance: timedelta = DEFAULT_TOLERANCE,
    now: Callable[[], datetime] | None = None,
) -> None:
    """Raise :class:`WebhookSignatureError` unless ``body`` was signed with ``secret`` at a time
    within ``tolerance`` of ``now()`` (default: the current UTC time). ``headers`` is the
    delivery's headers, any letter case."""
    if not isinstance(body, bytes | bytearray):
        raise TypeError("body: pass the raw request body as bytes, exactly as received")
    lowered = _lower(headers)
    given = _signature_bytes(_required(lowered, SIGNATURE_HEADER))
    stamp_text = _required(lowered, TIMESTAMP_HEADER)
    message = bytes(body) + stamp_text.encode("utf-8")
    matched = False
    for key in _keys(secret):
        expected = hmac.new(key, message, hashlib.sha256).digest()
        # Constant-time: the comparison leaks nothing about how much of the signature matched.
        matched = hmac.compare_digest(expected, given) or matched
    if not matched:
        raise WebhookSignatureError(
            "signature does not match: the body or timestamp was altered, or the secret is "
            "not the app's current signing secret"
        )
    try:
        signed_at = parse_timestamp(stamp_text)
    except ValueError:
        raise WebhookSignatureError(
            f"header {TIMESTAMP_HEADER} is not a timestamp: {stamp_text!r}"
        ) from None
    current = (now or (lambda: datetime.now(UTC)))()
    skew = abs((current - signed_at).total_seconds())
    if skew > tolerance.total_seconds():
        raise WebhookSignatureError(
            f"timestamp {stamp_text} is {skew:.0f} s from now, outside the "
            f"{tolerance.total_seconds():.0f} s window: a stale or replayed delivery"
        )


def _kind_of(payload: Mapping[str, Any], headers: dict[str, str]) -> str | None:
    kind = headers.get(TYPE_HEADER)
    if kind:
        return kind.strip().lower()
    name = payload.get("type")
    if isinstance(name, str):
        for prefix, found in _PREFIXES:
            if name.upper().startswith(prefix):
                return found
    return None


def _payload(body: bytes | str | Mapping[str, Any]) -> dict[str, Any]:
    if isinstance(body, Mapping):
        return dict(body)
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError) as exc:
        raise WebhookPayloadError(f"webhook body is not JSON: {exc}") from None
    if not isinstance(value, dict):
        raise WebhookPayloadError(f"webhook body is not a JSON object: {type(value).__name__}")
    return value


def parse_event(
    body: bytes | str | Mapping[str, Any], headers: Mapping[str, str] | None = None
) -> WebhookEvent:
    """The typed event of a delivery (verify it first). Accepts both payload shapes; the kind
    comes from the ``adfin-webhook-type`` header, or from the event name when no headers are
    given; a missing ``eventId`` is taken from ``adfin-webhook-id``. An unknown kind gives an
    :class:`UnknownEvent` holding every field."""
    lowered = _lower(headers or {})
    payload = _payload(body)
    if not payload.get("eventId") and lowered.get(EVENT_ID_HEADER):
        payload["eventId"] = lowered[EVENT_ID_HEADER]
    kind = _kind_of(payload, lowered)
    model = _MODELS.get(kind or "", UnknownEvent)
    try:
        return model.model_validate(payload)
    except ValidationError as error:
        problems = "; ".join(
            f"{'.'.join(str(p) for p in entry['loc']) or '(body)'}: {entry['msg']}"
            for entry in error.errors(include_input=False, include_url=False)
        )
        raise WebhookPayloadError(
            f"webhook event of kind {kind or 'unknown'!r} is not readable as "
            f"{model.__name__}: {problems}"
        ) from None
