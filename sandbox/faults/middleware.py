"""The ASGI side of fault injection: applying :class:`~sandbox.faults.plan.FaultState` decisions
to requests, and closing a connection without an answer (``dropAfterCommit``)."""

from __future__ import annotations

from collections.abc import Callable

import anyio
from fastapi import FastAPI
from starlette.responses import JSONResponse
from starlette.types import ASGIApp, Message, Receive, Scope, Send

from sandbox.faults.plan import Decision, FaultState

# Set on the request scope by SandboxFastAPI: closes the client's connection (None when the server
# is not uvicorn, e.g. an in-process test transport; a drop then surfaces as an exception).
CLOSE_CONNECTION = "sandbox.close_connection"
# Set on the request scope by the request-counting middleware: counts the request now. A drop
# calls it before closing, so a client that reads the stats right after the drop sees it.
COUNT_REQUEST = "sandbox.count_request"


class FaultMiddleware:
    """Applies :class:`FaultState` decisions. Installed inside ``RequestIdMiddleware``, so the
    injected 429 and 500 answers carry ``X-Request-Id`` like real ones."""

    def __init__(self, app: ASGIApp, faults: FaultState) -> None:
        self.app = app
        self.faults = faults

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        decision = None
        if scope["type"] == "http":
            decision = self.faults.decide(scope["method"], scope["path"])
        if decision is None:
            await self.app(scope, receive, send)
            return
        if decision.delay:
            await anyio.sleep(decision.delay)
        if decision.outcome in ("rateLimit", "error"):
            await _fault_response(decision)(scope, receive, send)
        elif decision.outcome == "dropAfterCommit":
            await self._run_then_drop(scope, receive)
        else:
            await self.app(scope, receive, send)

    async def _run_then_drop(self, scope: Scope, receive: Receive) -> None:
        """Let the route run to the end (SessionDep commits before the response is produced),
        swallow its answer, then close the connection without a status line."""

        async def swallow(_message: Message) -> None:
            return None

        await self.app(scope, receive, swallow)
        count: Callable[[], None] | None = scope.get(COUNT_REQUEST)
        if count is not None:
            count()
        close: Callable[[], None] | None = scope.get(CLOSE_CONNECTION)
        if close is None:
            raise ConnectionDropped("drop after commit: no server connection to close")
        close()
        # Wait for the server to notice the closed connection: then it neither logs a missing
        # response nor tries to send its own 500 on a connection that is gone.
        with anyio.move_on_after(5):
            message = await receive()
            while message["type"] != "http.disconnect":
                message = await receive()


class ConnectionDropped(Exception):
    """Raised when a drop cannot close the connection itself (not served by uvicorn)."""


def _fault_response(decision: Decision) -> JSONResponse:
    rule = decision.rule
    if decision.outcome == "rateLimit":
        body = {"errors": [{"type": "RATE_LIMITED", "detail": "rate limit exceeded (injected)"}]}
        return JSONResponse(body, 429, headers={"Retry-After": str(rule.retry_after)})
    if rule.error_status == 503:
        body = {"errors": [{"type": "SERVICE_UNAVAILABLE", "detail": "unavailable (injected)"}]}
        return JSONResponse(body, 503, headers={"Retry-After": str(rule.retry_after)})
    detail = "unexpected failure (injected); quote the X-Request-Id"
    return JSONResponse({"errors": [{"type": "INTERNAL_ERROR", "detail": detail}]}, 500)


class SandboxFastAPI(FastAPI):
    """FastAPI that puts a way to close the client's connection on each HTTP request's scope.

    Only the server's own ``send`` knows the connection, and only the outermost ASGI callable sees
    that ``send``: Starlette wraps it before any middleware runs. Under uvicorn it is a bound method
    of the request cycle, whose ``transport`` is the socket. Returning from an app without a
    response, or raising, is not enough: uvicorn then answers 500 itself.
    """

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "http":
            transport = getattr(getattr(send, "__self__", None), "transport", None)
            close = getattr(transport, "close", None)
            if callable(close):
                scope[CLOSE_CONNECTION] = close
        await super().__call__(scope, receive, send)
