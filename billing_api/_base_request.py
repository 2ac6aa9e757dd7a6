"""Request building of the client (everything but the I/O).

:class:`RequestBuilder` turns an operation id and its arguments into the keyword arguments of
``httpx.Client.build_request``: method and path from the generated operation table, URL-quoted path
parameters, query parameters without ``None`` values, and the default headers. It never sees the
``Authorization`` header: authentication is the ``httpx.Auth`` flow's job, so no token passes
through this module (nor its logs or errors).
"""

from __future__ import annotations

import json as jsonlib
import logging
import re
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from importlib.metadata import PackageNotFoundError, version
from typing import Any
from urllib.parse import quote

import httpx

from billing_api._exceptions import UnexpectedResponse
from billing_api._operations import OPERATIONS, Operation

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "PreparedRequest",
    "RequestBuilder",
    "UnexpectedResponse",
    "USER_AGENT",
    "operation_for",
    "parse_json_body",
]

#: Explicit timeouts: httpx's own default (5 s for everything) is too short for the service's
#: bulk uploads and list pages of 200 items, and no timeout at all would let a hung connection stall
#: a nightly run forever. 30 s per read/write/pool wait, 10 s to connect (a host that does not
#: accept a TCP connection in 10 s is down; better to retry or fail than to wait).
DEFAULT_TIMEOUT = httpx.Timeout(30.0, connect=10.0)
#: Retries after the first attempt (so at most 4 sends of an idempotent request).
DEFAULT_MAX_RETRIES = 3

logger = logging.getLogger("billing_api")


def _package_version() -> str:
    try:
        return version("billops")
    except PackageNotFoundError:
        return "0+unknown"


USER_AGENT = f"billops/{_package_version()}"
_PLACEHOLDER = re.compile(r"\{([^{}]+)\}")


def operation_for(operation_id: str) -> Operation:
    """The contract operation named ``operation_id`` (``<tag>.<x-method>``), or a clear error."""
    try:
        return OPERATIONS[operation_id]
    except KeyError:
        raise ValueError(
            f"unknown operation {operation_id!r}: not in billing_api/_operations.py "
            "(the operationIds of billing_api/openapi.yaml)"
        ) from None


def _expand_path(operation: Operation, path_params: Mapping[str, str] | None) -> str:
    given = dict(path_params or {})
    wanted = _PLACEHOLDER.findall(operation.path)
    missing = [name for name in wanted if given.get(name) in (None, "")]
    if missing:
        raise ValueError(
            f"{operation.id}: missing path parameter(s) {', '.join(missing)} "
            f"for {operation.method} {operation.path}"
        )
    unknown = sorted(set(given) - set(wanted))
    if unknown:
        raise ValueError(
            f"{operation.id}: unknown path parameter(s) {', '.join(unknown)} "
            f"for {operation.method} {operation.path}"
        )
    # safe="" so that "/" or ":" inside an id cannot change which resource or action is addressed.
    return _PLACEHOLDER.sub(lambda m: quote(str(given[m.group(1)]), safe=""), operation.path)


def _clean_params(params: Mapping[str, Any] | None) -> dict[str, Any]:
    """Drop ``None`` values (an unset filter); lists become repeated parameters
    (contract convention 6)."""
    cleaned: dict[str, Any] = {}
    for key, value in (params or {}).items():
        if value is None:
            continue
        if isinstance(value, list | tuple):
            value = [item for item in value if item is not None]
            if not value:
                continue
        cleaned[key] = value
    return cleaned


@dataclass(frozen=True, slots=True)
class PreparedRequest:
    """One logical request: built into a fresh ``httpx.Request`` for every attempt."""

    operation: Operation
    url: str
    params: dict[str, Any]
    headers: dict[str, str]
    json: Any
    data: Mapping[str, Any] | None
    files: Any
    timeout: httpx.Timeout

    @property
    def request_id(self) -> str:
        return next(v for k, v in self.headers.items() if k.lower() == "x-request-id")

    def build_kwargs(self) -> dict[str, Any]:
        """Keyword arguments of ``httpx.Client.build_request``."""
        kwargs: dict[str, Any] = {
            "method": self.operation.method,
            "url": self.url,
            "params": self.params,
            "headers": self.headers,
            "timeout": self.timeout,
        }
        if self.json is not None:
            kwargs["json"] = self.json
        if self.data is not None:
            kwargs["data"] = self.data
        if self.files is not None:
            kwargs["files"] = self.files
        return kwargs


class RequestBuilder:
    """Holds what every request of one client shares: base URL, default headers, timeout."""

    def __init__(
        self,
        base_url: str,
        *,
        timeout: httpx.Timeout | float,
        headers: Mapping[str, str] | None,
    ) -> None:
        if not base_url.startswith(("http://", "https://")):
            raise ValueError(f"base_url must be an http(s) URL ending in /api, got {base_url!r}")
        self.base_url = base_url.rstrip("/")
        self.timeout = timeout if isinstance(timeout, httpx.Timeout) else httpx.Timeout(timeout)
        self.headers: dict[str, str] = {
            "User-Agent": USER_AGENT,
            "Accept": "application/json",
            **dict(headers or {}),
        }

    def prepare(
        self,
        operation_id: str,
        *,
        path_params: Mapping[str, str] | None = None,
        params: Mapping[str, Any] | None = None,
        json: Any = None,
        data: Mapping[str, Any] | None = None,
        files: Any = None,
        headers: Mapping[str, str] | None = None,
    ) -> PreparedRequest:
        """Everything but the I/O. The ``X-Request-Id`` is new here (unless the caller gives its
        own, e.g. derived from a ledger key) and is kept across the request's retries."""
        operation = operation_for(operation_id)
        merged = {**self.headers, **dict(headers or {})}
        if not any(name.lower() == "x-request-id" for name in merged):
            merged["X-Request-Id"] = f"billops-{uuid.uuid4().hex}"
        return PreparedRequest(
            operation=operation,
            url=self.base_url + _expand_path(operation, path_params),
            params=_clean_params(params),
            headers=merged,
            json=json,
            data=data,
            files=files,
            timeout=self.timeout,
        )


def parse_json_body(operation: Operation, response: httpx.Response) -> Any:
    """The parsed body of a 2xx answer, or ``None`` when it has none (204, empty)."""
    if response.status_code == 204 or not response.content:
        return None
    try:
        return jsonlib.loads(response.content)
    except ValueError as exc:
        raise UnexpectedResponse(
            f"{operation.id}: {response.request.method} {response.request.url.path} answered "
            f"{response.status_code} with a body that is not JSON "
            f"(content-type {response.headers.get('content-type', 'none')!r}): {exc}"
        ) from None


def log_retry(prepared: PreparedRequest, attempt: int, delay: float, reason: str) -> None:
    """One line per retry, without headers or bodies (they may hold tokens or personal data)."""
    logger.warning(
        "%s %s (%s) attempt %d failed with %s; retrying in %.2fs (request id %s)",
        prepared.operation.method,
        prepared.url,
        prepared.operation.id,
        attempt + 1,
        reason,
        delay,
        prepared.request_id,
    )
