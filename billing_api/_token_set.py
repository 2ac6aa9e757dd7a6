"""What tokens look like: the token endpoint's answer, the stored token set, and the one rule for
"is this access token still usable".

A :class:`TokenSet` is one credential's tokens plus the rotation counter that the store's
compare-and-swap checks. :class:`TokenResponse` is a successful answer of the token endpoint.
Their ``repr`` masks every secret.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

from billing_api._exceptions import BillingApiError

__all__ = [
    "MARGIN_FRACTION",
    "MAX_MARGIN_SECONDS",
    "StaleTokenSet",
    "TokenResponse",
    "TokenSet",
    "access_token_usable",
    "renewal_margin",
    "scrub",
    "token_set_from_dict",
    "token_set_to_dict",
    "utc_now",
]

# An access token is renewed when less than min(60 s, 10% of its lifetime) remains.
MAX_MARGIN_SECONDS = 60.0
MARGIN_FRACTION = 0.10


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


def _mask(secret: str | None) -> str:
    return "None" if secret is None else "'***'"


def renewal_margin(lifetime: float | None) -> float:
    """Seconds before expiry at which an access token counts as spent: min(60 s, 10% of the
    lifetime granted), 60 s when the lifetime is unknown."""
    if lifetime is None:
        return MAX_MARGIN_SECONDS
    return min(MAX_MARGIN_SECONDS, MARGIN_FRACTION * lifetime)


def access_token_usable(
    access_token: str | None,
    expires_at: datetime | None,
    lifetime: float | None,
    now: datetime,
) -> bool:
    """The one rule: there is an access token with more than :func:`renewal_margin` left.

    A token without a known expiry counts as usable: the service always sends ``expires_in``,
    and if it ever did not, a 401 still triggers one refresh (rather than a new token on every
    request).
    """
    if access_token is None:
        return False
    if expires_at is None:
        return True
    return (expires_at - now).total_seconds() > renewal_margin(lifetime)


@dataclass(frozen=True)
class TokenSet:
    """One credential's tokens as stored, with the rotation counter the CAS compares."""

    refresh_token: str
    access_token: str | None = None
    access_token_expires_at: datetime | None = None  # aware UTC
    access_token_lifetime: float | None = None  # seconds, as granted (``expires_in``)
    rotation: int = 0  # +1 on every successful refresh
    last_refreshed_at: datetime | None = None

    def __post_init__(self) -> None:
        for name in ("access_token_expires_at", "last_refreshed_at"):
            value = getattr(self, name)
            if value is not None and value.utcoffset() is None:
                raise ValueError(f"TokenSet.{name} must be timezone-aware, got {value!r}")

    def __repr__(self) -> str:
        return (
            f"TokenSet(refresh_token={_mask(self.refresh_token)}, "
            f"access_token={_mask(self.access_token)}, "
            f"access_token_expires_at={self.access_token_expires_at!r}, "
            f"access_token_lifetime={self.access_token_lifetime!r}, "
            f"rotation={self.rotation!r}, last_refreshed_at={self.last_refreshed_at!r})"
        )

    __str__ = __repr__

    def renewal_margin(self) -> float:
        """Seconds before expiry at which the access token counts as spent."""
        return renewal_margin(self.access_token_lifetime)

    def access_token_usable(self, now: datetime) -> bool:
        """:func:`access_token_usable` of this set's access token."""
        return access_token_usable(
            self.access_token, self.access_token_expires_at, self.access_token_lifetime, now
        )


@dataclass(frozen=True)
class TokenResponse:
    """A successful answer of the token endpoint; ``obtained_at`` is when it was asked for (UTC)."""

    access_token: str
    refresh_token: str | None
    expires_in: float | None
    scope: str | None
    token_type: str
    obtained_at: datetime

    def __repr__(self) -> str:
        return (
            f"TokenResponse(access_token='***', refresh_token={_mask(self.refresh_token)}, "
            f"expires_in={self.expires_in!r}, scope={self.scope!r}, "
            f"token_type={self.token_type!r}, obtained_at={self.obtained_at!r})"
        )

    __str__ = __repr__

    @property
    def expires_at(self) -> datetime | None:
        """When the access token runs out, by ``expires_in`` from ``obtained_at``."""
        if self.expires_in is None:
            return None
        return self.obtained_at + timedelta(seconds=self.expires_in)

    def to_token_set(self, rotation: int, *, fallback_refresh_token: str | None = None) -> TokenSet:
        """The token set to store, at ``rotation``.

        ``fallback_refresh_token`` is kept when the answer carries no new refresh token (RFC 6749
        §6 allows that; the service always rotates). Without either, ``ValueError``.
        """
        refresh = self.refresh_token or fallback_refresh_token
        if not refresh:
            raise ValueError(
                "the token response has no refresh_token (a client_credentials token cannot be "
                "stored as a biller credential)"
            )
        return TokenSet(
            refresh_token=refresh,
            access_token=self.access_token,
            access_token_expires_at=self.expires_at,
            access_token_lifetime=self.expires_in,
            rotation=rotation,
            last_refreshed_at=self.obtained_at,
        )


class StaleTokenSet(BillingApiError):
    """``TokenStore.write`` refused: the stored rotation counter moved since it was read."""


# --- serialisation ----------------------------------------------------------------------------


def _iso(value: datetime | None) -> str | None:
    return value.astimezone(UTC).isoformat() if value is not None else None


def _parse_time(value: Any, field_name: str) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"token set field {field_name!r} must be an ISO 8601 string or null")
    parsed = datetime.fromisoformat(value)
    if parsed.utcoffset() is None:
        raise ValueError(f"token set field {field_name!r} has no timezone: {value!r}")
    return parsed.astimezone(UTC)


def token_set_to_dict(tokens: TokenSet) -> dict[str, Any]:
    """A JSON-ready dict of ``tokens`` (it holds the secrets: write it only where owners read)."""
    return {
        "refresh_token": tokens.refresh_token,
        "access_token": tokens.access_token,
        "access_token_expires_at": _iso(tokens.access_token_expires_at),
        "access_token_lifetime": tokens.access_token_lifetime,
        "rotation": tokens.rotation,
        "last_refreshed_at": _iso(tokens.last_refreshed_at),
    }


def token_set_from_dict(data: Any, *, source: str = "token set") -> TokenSet:
    """The inverse of :func:`token_set_to_dict`; errors name ``source`` and the field."""
    if not isinstance(data, dict):
        raise ValueError(f"{source}: expected a JSON object, got {type(data).__name__}")
    refresh = data.get("refresh_token")
    if not isinstance(refresh, str) or not refresh:
        raise ValueError(f"{source}: field 'refresh_token' is missing or not a string")
    access = data.get("access_token")
    if access is not None and not isinstance(access, str):
        raise ValueError(f"{source}: field 'access_token' must be a string or null")
    lifetime = data.get("access_token_lifetime")
    if lifetime is not None and (
        isinstance(lifetime, bool) or not isinstance(lifetime, int | float)
    ):
        raise ValueError(f"{source}: field 'access_token_lifetime' must be a number or null")
    rotation = data.get("rotation", 0)
    if isinstance(rotation, bool) or not isinstance(rotation, int) or rotation < 0:
        raise ValueError(f"{source}: field 'rotation' must be a non-negative integer")
    try:
        expires_at = _parse_time(data.get("access_token_expires_at"), "access_token_expires_at")
        refreshed_at = _parse_time(data.get("last_refreshed_at"), "last_refreshed_at")
    except ValueError as error:
        raise ValueError(f"{source}: {error}") from None
    return TokenSet(
        refresh_token=refresh,
        access_token=access,
        access_token_expires_at=expires_at,
        access_token_lifetime=float(lifetime) if lifetime is not None else None,
        rotation=rotation,
        last_refreshed_at=refreshed_at,
    )


def scrub(text: str, secrets: Iterable[str | None]) -> str:
    """``text`` with every given secret replaced by ``***`` (for messages of foreign errors)."""
    for secret in secrets:
        if secret:
            text = text.replace(secret, "***")
    return text
