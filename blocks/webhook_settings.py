"""What a platform's webhook receiver needs to know, kept in the platform credential block.

``billops webhooks setup`` fills it: the signing secret the service issued (the previous one is
kept for a short while, since deliveries already in flight were signed with it —
``docs/service.md`` §11.2 Signature), how the secret becomes the HMAC key (the service does not
say: its UTF-8 bytes, its base64 decoding, or either), and the credentials the service presents
to the receiver (§11.1 Registration and delivery authentication).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

from pydantic import BaseModel, Field, SecretStr

KeyMode = Literal["either", "utf8", "base64"]
DEFAULT_GRACE = timedelta(minutes=15)


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

    def secrets(self, now: datetime) -> list[SecretStr]:
        """The secrets a delivery may be signed with at ``now``: the current one, and the
        previous one while the grace period after a rotation lasts."""
        found = [self.signing_secret] if self.signing_secret else []
        grace = timedelta(seconds=self.grace_seconds)
        recent = self.rotated_at is not None and now - self.rotated_at <= grace
        if self.previous_signing_secret is not None and recent:
            found.append(self.previous_signing_secret)
        return found
