"""Platform (client-credentials) tokens: cached in their block, renewed under the block's lock.

There is no refresh token to lose here (the client secret is the credential), but every worker
minting its own token on every run would be wasteful and noisy, so the token is cached in the
block like the biller's, renewed by one worker at a time.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import AsyncGenerator, Callable, Generator
from datetime import UTC, datetime, timedelta
from typing import TYPE_CHECKING, Protocol

import anyio.to_thread
import httpx

from blocks._common import token_usable

if TYPE_CHECKING:
    import contextlib

    from billing_api.oauth import OAuthClient

_log = logging.getLogger(__name__)


def utc_now() -> datetime:
    """The current time, timezone-aware UTC."""
    return datetime.now(UTC)


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

    def _usable(self, token: str | None, expires_at: datetime | None, life: float | None) -> bool:
        return token_usable(expires_at, life, self._now(), has_token=token is not None)

    def access_token(self) -> str:
        """A token with more than min(60 s, 10% of its lifetime) left."""
        if self._token is not None and self._usable(self._token, self._expires_at, self._lifetime):
            return self._token
        with self._guard:
            token, expires_at, lifetime = self._store.read_cached()
            if token is not None and self._usable(token, expires_at, lifetime):
                return self._remember(token, expires_at, lifetime)
            return self._renew(rejected=None)

    def force_refresh(self, rejected: str) -> str:
        """After a 401: a new token, unless another worker already replaced ``rejected``."""
        with self._guard:
            return self._renew(rejected=rejected)

    def _renew(self, rejected: str | None) -> str:
        with self._store.lock():
            token, expires_at, lifetime = self._store.read_cached()
            if (
                token is not None
                and token != rejected
                and self._usable(token, expires_at, life=lifetime)
            ):
                return self._remember(token, expires_at, lifetime)
            response = self._oauth.client_credentials(self._scope)
            lifetime = response.expires_in
            expires_at = self._now() + timedelta(seconds=lifetime) if lifetime else None
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

    def _remember(self, token: str, expires_at: datetime | None, lifetime: float | None) -> str:
        self._token, self._expires_at, self._lifetime = token, expires_at, lifetime
        return token


class BearerAuth(httpx.Auth):
    """Attach ``Bearer <token>``; on a 401 ask for a new token once and retry once."""

    def __init__(self, provider: PlatformTokenProvider) -> None:
        self._provider = provider

    def sync_auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response]:
        token = self._provider.access_token()
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:
            response.read()
            request.headers["Authorization"] = f"Bearer {self._provider.force_refresh(token)}"
            yield request

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        # The provider blocks (Prefect API, lock): run it off the event loop.
        token = await anyio.to_thread.run_sync(self._provider.access_token)
        request.headers["Authorization"] = f"Bearer {token}"
        response = yield request
        if response.status_code == 401:
            await response.aread()
            fresh = await anyio.to_thread.run_sync(self._provider.force_refresh, token)
            request.headers["Authorization"] = f"Bearer {fresh}"
            yield request
