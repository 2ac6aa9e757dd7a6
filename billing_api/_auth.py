"""httpx ``Auth`` flows: a refreshing biller bearer token, and a static token.

:class:`RefreshingAuth` asks its :class:`~billing_api._tokens.TokenManager` for a usable access
token (refreshed ahead of expiry by the min(60 s, 10%) rule) and, when the service answers 401
anyway (revoked, clock skew), refreshes once and retries the request once. Replaying the request
after a 401 is safe for every operation, even non-idempotent ones: a 401 is a refusal before the
service did anything.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Generator

import anyio.to_thread
import httpx

from billing_api._tokens import TokenManager

__all__ = ["RefreshingAuth", "StaticTokenAuth"]


def _bearer(request: httpx.Request, token: str) -> None:
    request.headers["Authorization"] = f"Bearer {token}"


class RefreshingAuth(httpx.Auth):
    """Bearer auth over a :class:`TokenManager`; on a 401, one refresh and one retry."""

    # The body is read up front so that the retry after a 401 can send it again.
    requires_request_body = True

    def __init__(self, manager: TokenManager) -> None:
        self.manager = manager

    def __repr__(self) -> str:
        return f"RefreshingAuth(store={self.manager.store.name!r})"

    def sync_auth_flow(
        self, request: httpx.Request
    ) -> Generator[httpx.Request, httpx.Response, None]:
        token = self.manager.access_token()
        _bearer(request, token)
        response = yield request
        if response.status_code == 401:
            _bearer(request, self.manager.force_refresh(token))
            yield request

    async def async_auth_flow(
        self, request: httpx.Request
    ) -> AsyncGenerator[httpx.Request, httpx.Response]:
        # The manager blocks (file locks, Prefect API calls, the token endpoint): keep it off
        # the event loop.
        token = await anyio.to_thread.run_sync(self.manager.access_token)
        _bearer(request, token)
        response = yield request
        if response.status_code == 401:
            fresh = await anyio.to_thread.run_sync(self.manager.force_refresh, token)
            _bearer(request, fresh)
            yield request


class StaticTokenAuth(httpx.Auth):
    """A fixed bearer token (a platform token obtained elsewhere, or tests)."""

    def __init__(self, token: str) -> None:
        self._token = token

    def __repr__(self) -> str:
        return "StaticTokenAuth(token='***')"

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        _bearer(request, self._token)
        yield request
