"""What a platform's webhook receiver needs to know, kept in the platform credential block.

``billops webhooks setup`` fills it: the signing secret the service issued (every secret it
replaced is kept until its own grace period ends, since deliveries already in flight — and the
service's retries of them — were signed with it: ``docs/service.md`` §11.2 Signature), how the
secret becomes the HMAC key (the service does not say: its UTF-8 bytes, its base64 decoding, or
either), and the credentials the service presents to the receiver (§11.1 Registration and
delivery authentication).
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field, SecretStr

KeyMode = Literal["either", "utf8", "base64"]
DEFAULT_GRACE = timedelta(minutes=15)


@dataclass(frozen=True)
class PreviousSecret:
    """A signing secret that was replaced, and the end of its grace period (UTC)."""

    secret: SecretStr
    valid_until: datetime


class WebhookReceiverSettings(BaseModel):
    """The receiver's secrets and options (a plain model inside the platform block)."""

    url: str | None = Field(default=None, description="The receiver's public URL, as subscribed.")
    webhook_id: str | None = Field(default=None, description="The subscription's id.")
    signing_secret: SecretStr | None = Field(
        default=None, description="The current signing secret (the digest key)."
    )
    previous_signing_secret: SecretStr | None = Field(
        default=None, description="The secret it replaced, accepted during the grace period."
    )
    rotated_at: datetime | None = Field(
        default=None, description="When the signing secret was last replaced (UTC)."
    )
    # One secret field holding a JSON list: Prefect hides a block's secret fields in its UI and
    # API only where the field itself is secret, and showed the secrets of a list of models.
    previous_signing_secrets: SecretStr | None = Field(
        default=None,
        description=(
            "Every replaced secret still in its grace period, each with its own end (setup run "
            "twice within a grace period keeps both earlier secrets), as JSON."
        ),
    )
    grace_seconds: float = Field(
        default=DEFAULT_GRACE.total_seconds(),
        ge=0,
        description="How long after a rotation the previous secret is still accepted.",
    )
    key_mode: KeyMode = Field(
        default="either",
        description=(
            "How the secret becomes the HMAC key: its UTF-8 bytes, its base64 decoding, "
            "or either (the service does not say which)."
        ),
    )
    tolerance_seconds: float = Field(
        default=300,
        gt=0,
        description="Replay window: how far a signed timestamp may be from the receiver's clock.",
    )
    basic_username: str | None = Field(
        default=None, description="User name the service presents with HTTP Basic."
    )
    basic_password: SecretStr | None = Field(
        default=None, description="Password the service presents with HTTP Basic."
    )
    api_key_header: str | None = Field(
        default=None, description="Header the service presents an API key in."
    )
    api_key_value: SecretStr | None = Field(
        default=None, description="The API key the service presents."
    )

    def previous(self) -> list[PreviousSecret]:
        """Every replaced secret with the end of its grace period, the earliest end first.

        Settings saved before the list existed hold one previous secret and ``rotated_at``
        (whose grace ends ``grace_seconds`` later); it counts as one more entry."""
        found = {p.secret.get_secret_value(): p for p in _decoded(self.previous_signing_secrets)}
        if self.previous_signing_secret is not None and self.rotated_at is not None:
            legacy = self.previous_signing_secret.get_secret_value()
            ends = self.rotated_at + timedelta(seconds=self.grace_seconds)
            if legacy not in found or found[legacy].valid_until < ends:
                found[legacy] = PreviousSecret(
                    secret=self.previous_signing_secret, valid_until=ends
                )
        current = self.signing_secret.get_secret_value() if self.signing_secret else None
        return sorted(
            (p for value, p in found.items() if value != current), key=lambda p: p.valid_until
        )

    def secrets(self, now: datetime) -> list[SecretStr]:
        """The secrets a delivery may be signed with at ``now``: the current one, and each
        replaced one until its grace period ends."""
        found = [self.signing_secret] if self.signing_secret else []
        found += [p.secret for p in self.previous() if now <= p.valid_until]
        return found

    def grace_ends(self, now: datetime) -> datetime | None:
        """The earliest end of a grace period still running at ``now`` (when the secrets
        accepted at ``now`` change next), or None when no replaced secret is accepted."""
        return next((p.valid_until for p in self.previous() if now <= p.valid_until), None)

    def rotated(self, secret: SecretStr | str, now: datetime) -> WebhookReceiverSettings:
        """These settings with ``secret`` as the signing secret: the one it replaces is kept for
        the grace period from ``now``, and every earlier one still in its own grace period too.

        ``previous_signing_secret`` and ``rotated_at`` are still written (the secret just
        replaced), so a receiver of an earlier version reading these settings keeps accepting it.
        """
        new = secret if isinstance(secret, SecretStr) else SecretStr(secret)
        kept = [p for p in self.previous() if now <= p.valid_until]
        if self.signing_secret is not None:
            grace = timedelta(seconds=self.grace_seconds)
            kept.append(PreviousSecret(secret=self.signing_secret, valid_until=now + grace))
        kept = [p for p in kept if p.secret.get_secret_value() != new.get_secret_value()]
        return self.model_copy(
            update={
                "signing_secret": new,
                "previous_signing_secret": self.signing_secret,
                "rotated_at": now,
                "previous_signing_secrets": _encoded(kept),
            }
        )


def _encoded(kept: list[PreviousSecret]) -> SecretStr | None:
    if not kept:
        return None
    items = [
        {"secret": p.secret.get_secret_value(), "until": p.valid_until.isoformat()} for p in kept
    ]
    return SecretStr(json.dumps(items))


def _decoded(stored: SecretStr | None) -> list[PreviousSecret]:
    if stored is None:
        return []
    try:
        items = json.loads(stored.get_secret_value())
        return [
            PreviousSecret(SecretStr(str(i["secret"])), datetime.fromisoformat(str(i["until"])))
            for i in items
        ]
    except (ValueError, TypeError, KeyError):  # never echo the value: it holds secrets
        raise ValueError(
            "webhooks.previous_signing_secrets is not the JSON list billops writes: run "
            "`billops webhooks setup` again"
        ) from None
