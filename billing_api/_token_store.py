"""What the refresh procedure (``billing_api/_tokens.py``) talks to: the store that keeps one
credential's token set, and the token endpoint's refresh grant and how its errors are read
(``docs/credentials.md`` §1)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Protocol, runtime_checkable

from billing_api._exceptions import BillingApiError, OAuthError, OutcomeUnknown
from billing_api._refresh_lock import RefreshLock
from billing_api._token_set import TokenResponse, TokenSet

__all__ = ["TokenEndpoint", "TokenStore", "describe", "maybe_processed"]


@runtime_checkable
class TokenStore(Protocol):
    """Where one credential's token set lives (a Prefect block, a file, ...)."""

    def read(self) -> TokenSet:
        """The token set as stored now (never a cached copy)."""
        ...

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        """Store ``tokens`` if the stored rotation is still ``expected_rotation``.

        Raises :class:`StaleTokenSet` otherwise.
        """
        ...

    def refresh_lock(self) -> RefreshLock:
        """A handle on the per-credential refresh lock; it spans every process (and machine)
        that refreshes this credential."""
        ...

    @property
    def name(self) -> str:
        """A short name for log lines and the journal (no secrets)."""
        ...

    @property
    def reauthorize_command(self) -> str | None:
        """The command a person runs to log in again, e.g. ``billops auth login --block acme``."""
        ...

    @property
    def recover_command(self) -> str | None:
        """The command that puts a journal's token set into the store when no worker runs."""
        ...

    @property
    def unlock_command(self) -> str | None:
        """The command that frees the refresh lock of a holder that is gone."""
        ...


class TokenEndpoint(Protocol):
    """The refresh grant of a token endpoint (:class:`~billing_api.oauth.OAuthClient` is one)."""

    def refresh(
        self, refresh_token: str, *, on_answer: Callable[[bytes], None] | None = None
    ) -> TokenResponse:
        """Exchange ``refresh_token`` (single use) for a new token set; ``on_answer`` gets a
        successful answer's raw body the instant it arrives, before it is parsed."""
        ...


def maybe_processed(error: BillingApiError) -> bool:
    """Whether the token endpoint may have consumed the refresh token despite the error."""
    if isinstance(error, OutcomeUnknown):
        return True
    if isinstance(error, OAuthError):
        return error.is_invalid_grant or error.status_code >= 500 or error.status_code == 200
    return False


def describe(error: BillingApiError) -> str:
    """A refresh error in a few words (no secret: the status and the RFC 6749 code)."""
    if isinstance(error, OAuthError):
        return f"HTTP {error.status_code} {error.error}"
    return type(error).__name__
