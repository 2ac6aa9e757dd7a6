"""httpx ``Auth`` flows: a refreshing bearer token over any :class:`TokenProvider`, and a static
token.

:class:`RefreshingAuth` asks its provider for a usable access token (the biller's
:class:`~billing_api._tokens.TokenManager`, or the platform token of the credential blocks) and,
when the service answers 401 anyway (revoked, clock skew), asks for a new one once and retries the
request once. Replaying the request after a 401 is safe for every operation, even non-idempotent
ones: a 401 is a refusal before the service did anything.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator
from typing import Protocol, runtime_checkable

import httpx

__all__ = ["RefreshingAuth", "StaticTokenAuth", "TokenProvider"]


@runtime_checkable
class TokenProvider(Protocol):
    """Hands out bearer tokens for one credential (no secrets in ``name``)."""

    @property
    def name(self) -> str:
        """The credential's name, for log lines and reprs."""
        ...

    def access_token(self) -> str:
        """A token with more than the renewal margin left."""
        ...

    def force_refresh(self, rejected: str) -> str:
        """After a 401: a new token, unless another worker already replaced ``rejected``."""
        ...


def _bearer(request: httpx.Request, token: str) -> None:
    request.headers["Authorization"] = f"Bearer {token}"


class RefreshingAuth(httpx.Auth):
    """Bearer auth over a :class:`TokenProvider`; on a 401, one new token and one retry."""

    # The body is read up front so that the retry after a 401 can send it again.
    requires_request_body = True

    def __init__(self, provider: TokenProvider) -> None:
        self.provider = provider

    def __repr__(self) -> str:
        return f"RefreshingAuth(credential={self.provider.name!r})"

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.provider.access_token()
        _bearer(request, token)
        response = yield request
        if response.status_code == 401:
            _bearer(request, self.provider.force_refresh(token))
            yield request

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        # Without this, httpx would send the request with no token at all (a silent 401).
        raise TypeError(
            "RefreshingAuth is synchronous (token stores and locks block): use it with "
            "billing_api.BillingClient or httpx.Client, not an async client"
        )
        yield request  # pragma: no cover - makes this an async generator


class StaticTokenAuth(httpx.Auth):
    """A fixed bearer token (a platform token obtained elsewhere, or tests)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:
        return "StaticTokenAuth(token='***')"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        _bearer(request, self._token)
        yield request
