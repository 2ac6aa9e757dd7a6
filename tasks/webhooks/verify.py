"""Is a delivery from the service? Its credentials, its signature and its age.

The signature is ``base64(HMAC-SHA256(key, raw body + the adfin-webhook-signature-timestamp
header))`` in ``adfin-webhook-signature`` (``docs/service.md`` §11.2 Signature). Whether the key
is the secret's UTF-8 bytes or its base64 decoding is not documented, so it is a setting
(``key_mode``: ``utf8``, ``base64`` or ``either``). Every candidate key and secret is tried and
every comparison is constant-time; the body is checked byte for byte as received. The replay
window (300 s by default) is billops' choice: the service documents none.

A refusal says why in words safe to log: never a secret, a signature or the body.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import hmac
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta

from pydantic import SecretStr

from billing_api.types import parse_timestamp
from blocks.webhook_settings import KeyMode, WebhookReceiverSettings

SIGNATURE_HEADER = "adfin-webhook-signature"
TIMESTAMP_HEADER = "adfin-webhook-signature-timestamp"
DIGEST_BYTES = 32


class DeliveryRefused(Exception):
    """The delivery is not accepted; ``status`` is the HTTP answer, the message the reason."""

    def __init__(self, status: int, reason: str) -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason


@dataclass(frozen=True)
class ReceiverKeys:
    """What verification needs, prepared once per settings (not per delivery)."""

    keys: tuple[bytes, ...]
    tolerance: timedelta
    basic: bytes | None  # the expected "user:password", UTF-8
    api_key: tuple[str, bytes] | None  # header name (lower case), expected value

    @classmethod
    def from_settings(cls, settings: WebhookReceiverSettings, now: datetime) -> ReceiverKeys:
        """Keys for every secret valid at ``now`` (the previous one during its grace period)."""
        secrets = settings.secrets(now)
        if not secrets:
            raise ValueError(
                "no webhook signing secret is configured: run `billops webhooks setup` first"
            )
        basic = None
        if settings.basic_username is not None:
            password = settings.basic_password.get_secret_value() if settings.basic_password else ""
            basic = f"{settings.basic_username}:{password}".encode()
        api_key = None
        if settings.api_key_header and settings.api_key_value is not None:
            value = settings.api_key_value.get_secret_value().encode("utf-8")
            api_key = (settings.api_key_header.lower(), value)
        return cls(
            keys=hmac_keys(secrets, settings.key_mode),
            tolerance=timedelta(seconds=settings.tolerance_seconds),
            basic=basic,
            api_key=api_key,
        )


def hmac_keys(secrets: Sequence[SecretStr], mode: KeyMode) -> tuple[bytes, ...]:
    """The HMAC keys the secrets stand for under ``mode`` (a secret that is not base64 gives
    no key under ``base64``)."""
    keys: list[bytes] = []
    for secret in secrets:
        text = secret.get_secret_value().strip()
        if mode in ("utf8", "either"):
            keys.append(text.encode("utf-8"))
        if mode in ("base64", "either"):
            decoded = _b64_key(text)
            if decoded:
                keys.append(decoded)
    unique = tuple(dict.fromkeys(keys))
    if not unique:
        raise ValueError(f"no usable HMAC key: the signing secret is not base64 ({mode=})")
    return unique


def _b64_key(text: str) -> bytes | None:
    padded = (text + "=" * (-len(text) % 4)).encode("ascii", errors="replace")
    try:
        # The service's secrets look URL-safe; '-' and '_' map to '+' and '/' first.
        return base64.b64decode(padded.replace(b"-", b"+").replace(b"_", b"/"), validate=True)
    except (binascii.Error, ValueError):
        return None


def check_credentials(headers: Mapping[str, str], keys: ReceiverKeys) -> None:
    """The credentials the service presents (``headers`` with lower-case names)."""
    if keys.basic is not None:
        scheme, _, given = headers.get("authorization", "").partition(" ")
        try:
            presented = base64.b64decode(given.strip(), validate=True)
        except (binascii.Error, ValueError):
            presented = b""
        ok = hmac.compare_digest(presented, keys.basic)
        if scheme.lower() != "basic" or not ok:
            raise DeliveryRefused(401, "HTTP Basic credentials missing or wrong")
    if keys.api_key is not None:
        name, expected = keys.api_key
        presented = headers.get(name, "").encode("utf-8")
        if not hmac.compare_digest(presented, expected):
            raise DeliveryRefused(401, f"API key header {name} missing or wrong")


def check_signature(
    body: bytes, headers: Mapping[str, str], keys: ReceiverKeys, now: datetime
) -> None:
    """The signature over the raw body and timestamp, then the timestamp's age."""
    given_text = headers.get(SIGNATURE_HEADER, "")
    stamp = headers.get(TIMESTAMP_HEADER, "")
    if not given_text or not stamp:
        raise DeliveryRefused(401, "not a signed delivery: signature or timestamp header missing")
    try:
        given = base64.b64decode(given_text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise DeliveryRefused(401, f"{SIGNATURE_HEADER} is not base64") from None
    if len(given) != DIGEST_BYTES:
        raise DeliveryRefused(401, f"{SIGNATURE_HEADER} is not a SHA-256 digest")
    message = body + stamp.encode("utf-8")
    matched = False
    for key in keys.keys:  # every key is tried: the time taken says nothing about which matched
        expected = hmac.new(key, message, hashlib.sha256).digest()
        matched = hmac.compare_digest(expected, given) | matched
    if not matched:
        raise DeliveryRefused(401, "signature does not match the body, timestamp and secret")
    try:
        signed_at = parse_timestamp(stamp)
    except ValueError:
        raise DeliveryRefused(401, f"{TIMESTAMP_HEADER} is not a timestamp") from None
    skew = abs((now - signed_at).total_seconds())
    if skew > keys.tolerance.total_seconds():
        raise DeliveryRefused(
            401,
            f"signed {skew:.0f} s away from now, outside the "
            f"{keys.tolerance.total_seconds():.0f} s window: stale or replayed",
        )


def check_delivery(
    body: bytes, headers: Mapping[str, str], keys: ReceiverKeys, now: datetime
) -> None:
    """Credentials first (cheapest), then signature and age; raise :class:`DeliveryRefused`."""
    check_credentials(headers, keys)
    check_signature(body, headers, keys, now)
