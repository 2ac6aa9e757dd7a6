"""ASGI middleware: ``X-Request-Id`` on every response, and the per-operation request counters."""

from __future__ import annotations

import uuid
from typing import Any

from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.core.deps import SandboxContext
from sandbox.faults.middleware import COUNT_REQUEST


class RequestIdMiddleware:
    """Tag each response with ``X-Request-Id`` and count it under the contract's operationId.

    A pure ASGI middleware (not ``BaseHTTPMiddleware``) so streamed bodies pass untouched. The
    request is counted in memory (never in a transaction, so it cannot fail) just before the last
    byte of the answer goes out, so a test that reads the stats next sees it; a request that ends
    without an answer is counted when the app returns, or earlier by whoever drops its
    connection (the fault middleware calls ``scope[COUNT_REQUEST]`` before it closes).
    """

    def __init__(self, app: ASGIApp, context: SandboxContext) -> None:
        self.app = app
        self.context = context

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http":
            await self.app(scope, receive, send)
            return
        request_id = _caller_request_id(scope) or str(uuid.uuid4())
        counted = False

        def count_once() -> None:
            nonlocal counted
            operation_id = getattr(scope.get("route"), "operation_id", None)
            if operation_id and not counted:
                counted = True
                self.context.request_counts.add(_owner(scope), operation_id)

        scope[COUNT_REQUEST] = count_once

        async def send_with_id(message: Message) -> None:
            if message["type"] == "http.response.start":
                headers = list(message.get("headers", []))
                headers.append((b"x-request-id", request_id.encode()))
                message = {**message, "headers": headers}
            elif message["type"] == "http.response.body" and not message.get("more_body"):
                # Count before the last byte leaves: a client that reads the stats right after
                # its answer must see its own request counted.
                count_once()
            await send(message)

        try:
            await self.app(scope, receive, send_with_id)
        finally:
            count_once()  # a request that ended without an answer counts too


def _caller_request_id(scope: Scope) -> str | None:
    """The caller's own ``X-Request-Id`` when it is 1-128 visible ASCII characters (contract)."""
    for name, value in scope.get("headers", []):
        if name == b"x-request-id":
            if 1 <= len(value) <= 128 and all(0x21 <= byte <= 0x7E for byte in value):
                return bytes(value).decode("ascii")
            return None
    return None


def _owner(scope: Scope) -> str:
    state: dict[str, Any] = scope.get("state") or {}
    return str(state.get("owner", "anonymous"))
