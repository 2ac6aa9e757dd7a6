"""Verification of a delivery, as the service signs it (no server needed)."""

from __future__ import annotations

import base64
import hashlib
import hmac
import secrets
from datetime import UTC, datetime, timedelta

import pytest
from pydantic import SecretStr

from blocks.webhook_settings import WebhookReceiverSettings
from tasks.webhooks.received import entity_ids, read_delivery
from tasks.webhooks.verify import DeliveryRefused, ReceiverKeys, check_delivery

NOW = datetime(2026, 6, 1, 9, 30, tzinfo=UTC)
STAMP = "2026-06-01T09:30:00Z"
BODY = b'{"type":"INVOICE_CREATED","eventId":"e-1","billerId":"b-1","invoiceId":"i-1"}'
SECRET = "whsec_" + secrets.token_urlsafe(24)


def sign(key: bytes, body: bytes = BODY, stamp: str = STAMP) -> str:
    digest = hmac.new(key, body + stamp.encode(), hashlib.sha256).digest()
    return base64.b64encode(digest).decode()


def headers(signature: str, stamp: str = STAMP, **extra: str) -> dict[str, str]:
    return {
        "adfin-webhook-signature": signature,
        "adfin-webhook-signature-timestamp": stamp,
        **extra,
    }


def keys(**changes: object) -> ReceiverKeys:
    settings = WebhookReceiverSettings(signing_secret=SecretStr(SECRET)).model_copy(update=changes)
    return ReceiverKeys.from_settings(settings, NOW)


def test_the_contracts_example_verifies() -> None:
    body = (
        b'{"type":"INVOICE_PAID","eventId":"7d9f3c2a-1b4e-4f6a-9c8d-2e5f7a1b3c4d",'
        b'"billerId":"b-123","invoiceId":"inv-1"}'
    )
    settings = WebhookReceiverSettings(
        signing_secret=SecretStr("whsec_3nP0mQ8dV2sX7kL1aZ9yT4bR6cF5hJ0g"), key_mode="utf8"
    )
    given = headers("na34aBVbmAOXMidx92UY93EsMr2jPEUFML5pWIzB9fk=", "2025-06-01T09:30:00Z")
    at = datetime(2025, 6, 1, 9, 31, tzinfo=UTC)
    check_delivery(body, given, ReceiverKeys.from_settings(settings, at), at)


@pytest.mark.parametrize(
    ("mode", "utf8_ok", "base64_ok"),
    [("either", True, True), ("utf8", True, False), ("base64", False, True)],
)
def test_each_key_mode_accepts_its_treatment_of_the_secret(
    mode: str, utf8_ok: bool, base64_ok: bool
) -> None:
    raw = secrets.token_bytes(32)
    secret = base64.urlsafe_b64encode(raw).decode().rstrip("=")
    ring = keys(signing_secret=SecretStr(secret), key_mode=mode)
    for key, expected in ((secret.encode(), utf8_ok), (raw, base64_ok)):
        if expected:
            check_delivery(BODY, headers(sign(key)), ring, NOW)
        else:
            with pytest.raises(DeliveryRefused, match="does not match"):
                check_delivery(BODY, headers(sign(key)), ring, NOW)


@pytest.mark.parametrize(
    ("given", "reason"),
    [
        (headers(sign(b"another secret")), "does not match"),
        (headers(sign(SECRET.encode(), body=BODY + b" ")), "does not match"),
        (headers("not base64!"), "not base64"),
        (headers(base64.b64encode(b"short").decode()), "not a SHA-256 digest"),
        ({"adfin-webhook-signature-timestamp": STAMP}, "not a signed delivery"),
        (headers(sign(SECRET.encode(), stamp="yesterday"), stamp="yesterday"), "not a timestamp"),
    ],
)
def test_a_bad_signature_is_refused_with_401(given: dict[str, str], reason: str) -> None:
    with pytest.raises(DeliveryRefused, match=reason) as refused:
        check_delivery(BODY, given, keys(), NOW)
    assert refused.value.status == 401
    assert SECRET not in str(refused.value)


@pytest.mark.parametrize("minutes", [-6, 6])
def test_a_timestamp_outside_the_window_is_refused(minutes: int) -> None:
    stamp = (NOW + timedelta(minutes=minutes)).strftime("%Y-%m-%dT%H:%M:%SZ")
    with pytest.raises(DeliveryRefused, match="outside the 300 s window"):
        check_delivery(BODY, headers(sign(SECRET.encode(), stamp=stamp), stamp), keys(), NOW)
    ring = keys(tolerance_seconds=600)
    check_delivery(BODY, headers(sign(SECRET.encode(), stamp=stamp), stamp), ring, NOW)


def test_the_previous_secret_is_accepted_only_during_its_grace_period() -> None:
    old = "old-" + secrets.token_urlsafe(16)
    rotated = keys(previous_signing_secret=SecretStr(old), rotated_at=NOW - timedelta(minutes=5))
    check_delivery(BODY, headers(sign(old.encode())), rotated, NOW)
    expired = keys(previous_signing_secret=SecretStr(old), rotated_at=NOW - timedelta(hours=1))
    with pytest.raises(DeliveryRefused):
        check_delivery(BODY, headers(sign(old.encode())), expired, NOW)


def test_target_credentials_are_checked() -> None:
    api = keys(api_key_header="X-Hook-Key", api_key_value=SecretStr("k-123"))
    good = headers(sign(SECRET.encode()))
    check_delivery(BODY, {**good, "x-hook-key": "k-123"}, api, NOW)
    for wrong in ({**good, "x-hook-key": "k-124"}, good):
        with pytest.raises(DeliveryRefused, match="API key header x-hook-key"):
            check_delivery(BODY, wrong, api, NOW)
    basic = keys(basic_username="hooks", basic_password=SecretStr("pa:ss wörd"))
    token = base64.b64encode("hooks:pa:ss wörd".encode()).decode()
    check_delivery(BODY, {**good, "authorization": f"Basic {token}"}, basic, NOW)
    bad = base64.b64encode(b"hooks:nope").decode()
    for wrong in ({**good, "authorization": f"Basic {bad}"}, good, {"authorization": "Basic ##"}):
        with pytest.raises(DeliveryRefused, match="Basic credentials"):
            check_delivery(BODY, {**good, **wrong}, basic, NOW)


def test_no_secret_configured_is_an_error_naming_the_command() -> None:
    with pytest.raises(ValueError, match="billops webhooks setup"):
        ReceiverKeys.from_settings(WebhookReceiverSettings(), NOW)


def test_both_payload_shapes_are_read_and_keyed() -> None:
    named = read_delivery(BODY, {"adfin-webhook-type": "invoice"})
    assert (named.dedup_key, named.kind, named.biller_id) == ("event:e-1", "invoice", "b-1")
    newer = read_delivery(
        b'{"eventId":"e-2","type":"DD_PAYMENT_FAILED","sourceEntityId":"p-9","billerId":"b-1"}',
        {"adfin-webhook-type": "payment"},
    )
    assert newer.dedup_key == "event:e-2"
    assert entity_ids(newer.kind, newer.payload) == {"payment": "p-9"}
    header_id = read_delivery(
        b'{"type":"CUSTOMER_CREATED","billerId":"b-1","customerId":"c-1"}',
        {"adfin-webhook-id": "e-3"},
    )
    assert header_id.dedup_key == "event:e-3" and header_id.kind == "customer"
    no_id = b'{"type":"CUSTOMER_CREATED","billerId":"b-1","customerId":"c-1"}'
    first, again = read_delivery(no_id, {}), read_delivery(no_id, {})
    assert first.dedup_key == again.dedup_key == "body:" + hashlib.sha256(no_id).hexdigest()
    assert first.event_id is None and "eventId" not in first.payload


# Also swept through a running receiver by tests/webhooks/test_hostile_bodies.py.
MALFORMED = [
    (b"not json", 400, "not JSON"),
    (b"[1, 2]", 400, "not a JSON object"),
    (b'{"type":"INVOICE_CREATED","eventId":"e"}', 400, "billerId"),
    (b'{"type":"INVOICE_CREATED","eventId":"e","billerId":"b"}', 400, "invoiceId"),
    (b'{"pad":"' + b"x" * 300_000 + b'"}', 413, "over"),
    (b"[" * 50_000 + b"]" * 50_000, 400, "nested too deeply"),  # was a 500 (RecursionError)
]


@pytest.mark.parametrize(("body", "status", "reason"), MALFORMED)
def test_a_malformed_body_is_refused(body: bytes, status: int, reason: str) -> None:
    with pytest.raises(DeliveryRefused, match=reason) as refused:
        read_delivery(body, {"adfin-webhook-type": "invoice"})
    assert refused.value.status == status
