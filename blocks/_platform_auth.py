"""Platform (client-credentials) tokens: cached in their block, renewed under the block's lock.

There is no refresh token to lose here (the client secret is the credential), but every worker
minting its own token on every run would be wasteful and noisy, so the token is cached in the
block like the biller's, renewed by one worker at a time. :class:`PlatformTokenProvider` is a
``billing_api.TokenProvider``: the client's own ``RefreshingAuth`` attaches its tokens.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Protocol

from billing_api import BillingApiError, TokenStoreError, access_token_usable, utc_now

if TYPE_CHECKING:
    import contextlib

    from billing_api import OAuthClient

__all__ = ["CachedToken", "PlatformTokenProvider"]

_log = logging.getLogger(__name__)


class CachedToken(Protocol):
    """What :class:`PlatformTokenProvider` needs of its block."""

    @property
    def name(self) -> str: ...

    def read_cached(self) -> tuple[str | None, datetime | None, float | None]: ...

    def write_cached(self, token: str, expires_at: datetime | None, lifetime: float | None) -> None:
        """Save the token into the stored block."""

    def lock(self) -> contextlib.AbstractContextManager[None]: ...


class PlatformTokenProvider:
    """Hands out a usable platform access token: memory, then the block, then the token endpoint."""

    def __init__(
        self,
        store: CachedToken,
        oauth: OAuthClient,
        *,
        scope: str | None = None,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        self._store = store
        self._oauth = oauth
        self._scope = scope
        self._now = now
        self._guard = threading.Lock()
        self._token: str | None = None
        self._expires_at: datetime | None = None
        self._lifetime: float | None = None

    def __repr__(self) -> str:
        return f"PlatformTokenProvider(block={self._store.name!r})"

    @property
    def name(self) -> str:
        """The block's name."""
        return self._store.name

    def _usable(self, token: str | None, expires_at: datetime | None, life: float | None) -> bool:
        return access_token_usable(token, expires_at, life, self._now())

    def access_token(self) -> str:
        """A token with more than the renewal margin left (``billing_api.renewal_margin``)."""
        if self._token is not None and self._usable(self._token, self._expires_at, self._lifetime):
            return self._token
        with self._guard:
            token, expires_at, lifetime = self._read()
            if token is not None and self._usable(token, expires_at, lifetime):
                return self._remember(token, expires_at, lifetime)
            return self._renew(rejected=None)

    def force_refresh(self, rejected: str) -> str:
        """After a 401: a new token, unless another worker already replaced ``rejected``."""
        with self._guard:
            return self._renew(rejected=rejected)

    def _renew(self, rejected: str | None) -> str:
        with self._store.lock():
            token, expires_at, lifetime = self._read()
            fresh = token is not None and token != rejected
            if fresh and self._usable(token, expires_at, lifetime):
                assert token is not None
                return self._remember(token, expires_at, lifetime)
            response = self._oauth.client_credentials(self._scope)
            lifetime = response.expires_in
            expires_at = response.expires_at
            try:
                self._store.write_cached(response.access_token, expires_at, lifetime)
            except Exception as exc:  # the token still works; only the cache was not updated
                _log.warning(
                    "platform token for block %s could not be cached in the block (%s); "
                    "using it for this run only",
                    self._store.name,
                    type(exc).__name__,
                )
            return self._remember(response.access_token, expires_at, lifetime)

    def _read(self) -> tuple[str | None, datetime | None, float | None]:
        """The cached token as the block holds it; a failure names the block, never the
        billing service (the client would take an httpx error for its own and retry it)."""
        try:
            return self._store.read_cached()
        except BillingApiError:
            raise
        except Exception as error:
            raise TokenStoreError(
                self._store.name,
                f"platform credential block {self._store.name!r} could not be read: "
                f"{type(error).__name__}: {error}",
            ) from None

    def _remember(self, token: str, expires_at: datetime | None, lifetime: float | None) -> str:
        self._token, self._expires_at, self._lifetime = token, expires_at, lifetime
        return token
