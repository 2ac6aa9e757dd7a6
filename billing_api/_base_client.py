"""The transport core: send a contract operation, retry it per policy, raise typed errors.

:class:`SyncAPIClient` builds requests with :mod:`billing_api._base_request` and follows the retry
decision of :mod:`billing_api._retries` (a pure function); it only sends and sleeps. Resource
namespaces call ``request`` / ``request_json`` / ``paginate`` with an operation id of the contract
(``<tag>.<x-method>``), never a raw URL.

Sleep and randomness are injected so tests can assert the delays asked for without waiting.
"""

from __future__ import annotations

import random as _random
import time
from collections.abc import Callable, Mapping
from types import TracebackType
from typing import Any, TypeVar

import httpx

from billing_api._base_request import (
    DEFAULT_MAX_RETRIES,
    DEFAULT_TIMEOUT,
    PreparedRequest,
    RequestBuilder,
    log_retry,
    operation_for,
    parse_json_body,
)
from billing_api._pagination import Page, SyncPager, parse_page
from billing_api._retries import Fail, Retry, decide
from billing_api._tls import shared_ssl_context

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "Page",
    "SyncAPIClient",
    "SyncPager",
]

T = TypeVar("T")


def _page_params(
    params: Mapping[str, Any] | None, number: int, page_size: int | None
) -> dict[str, Any]:
    merged = dict(params or {})
    merged["page"] = number
    if page_size is not None:
        merged["size"] = page_size
    return merged


def _check_retries(max_retries: int) -> int:
    if max_retries < 0:
        raise ValueError(f"max_retries must be 0 or more, got {max_retries}")
    return max_retries


def _raise(decision: Fail) -> None:
    raise decision.error from decision.cause


class SyncAPIClient:
    """Blocking client of the service API rooted at ``base_url`` (ending in ``/api``).

    ``auth`` attaches credentials (an ``httpx.Auth``; the refreshing OAuth flow in production).
    ``http_client``, when given, is used as is and not closed by :meth:`close`; its base URL is
    ignored (URLs are built from ``base_url``), its own auth applies only when ``auth`` is None,
    and ``timeout`` applies to every request.
    """

    def __init__(
        self,
        base_url: str,
        auth: httpx.Auth | None = None,
        *,
        timeout: httpx.Timeout | float = DEFAULT_TIMEOUT,
        max_retries: int = DEFAULT_MAX_RETRIES,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
        headers: Mapping[str, str] | None = None,
        http_client: httpx.Client | None = None,
    ) -> None:
        self._builder = RequestBuilder(base_url, timeout=timeout, headers=headers)
        self.base_url = self._builder.base_url
        self.max_retries = _check_retries(max_retries)
        self._auth = auth
        self._sleep = sleep
        self._random = random
        self._owns_http = http_client is None
        self._http = (
            http_client if http_client is not None else httpx.Client(verify=shared_ssl_context())
        )

    def request(
        self,
        operation_id: str,
        *,
        path_params: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        data: Mapping[str, Any] | None = None,
        files: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> httpx.Response:
        """Send the operation, retrying per policy; the 2xx response, or a typed error."""
        prepared = self._builder.prepare(
            operation_id,
            path_params=path_params,
            params=params,
            json=json,
            data=data,
            files=files,
            headers=headers,
        )
        return self._send_with_retries(prepared)

    def _send_with_retries(self, prepared: PreparedRequest) -> httpx.Response:
        # Without an auth of our own, the http_client's own auth (if any) applies.
        send_kwargs: dict[str, Any] = {"auth": self._auth} if self._auth is not None else {}
        attempt = 0
        while True:
            request = self._http.build_request(**prepared.build_kwargs())
            outcome: httpx.Response | httpx.TransportError
            try:
                outcome = self._http.send(request, **send_kwargs)
            except httpx.TransportError as exc:
                outcome = exc
            decision = decide(
                prepared.operation, attempt, self.max_retries, request, outcome, self._random
            )
            if decision is None:
                assert isinstance(outcome, httpx.Response)
                return outcome
            if isinstance(decision, Fail):
                _raise(decision)
            assert isinstance(decision, Retry)
            log_retry(prepared, attempt, decision.delay, decision.reason)
            self._sleep(decision.delay)
            attempt += 1

    def request_json(
        self,
        operation_id: str,
        *,
        path_params: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        data: Mapping[str, Any] | None = None,
        files: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> Any:
        """Like :meth:`request`, returning the parsed JSON body (``None`` for 204 or empty)."""
        response = self.request(
            operation_id,
            path_params=path_params,
            params=params,
            json=json,
            data=data,
            files=files,
            headers=headers,
        )
        return parse_json_body(operation_for(operation_id), response)

    def paginate(
        self,
        operation_id: str,
        *,
        items_key: str,
        parse: Callable[[Any], T],
        path_params: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        page_size: int | None = None,
    ) -> SyncPager[T]:
        """Every item of every page of a list operation, parsed by ``parse``, fetched lazily."""

        def fetch(number: int) -> Page[T]:
            body = self.request_json(
                operation_id,
                path_params=path_params,
                params=_page_params(params, number, page_size),
            )
            where = f"{operation_id} page {number}"
            return parse_page(body, items_key=items_key, parse=parse, number=number, where=where)

        return SyncPager(fetch)

    def close(self) -> None:
        """Close the connection pool (only when this client created it)."""
        if self._owns_http:
            self._http.close()

    def __enter__(self) -> SyncAPIClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
