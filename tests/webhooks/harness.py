"""A running webhook receiver for tests: the real ASGI app under uvicorn on a free loopback port,
in a thread that carries the test's Prefect settings (so it emits to the harness's server)."""

from __future__ import annotations

import contextvars
import socket
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any

import httpx
import uvicorn
from starlette.types import ASGIApp, Receive, Scope, Send

from billops.webhooks_app import create_app
from blocks.webhook_settings import WebhookReceiverSettings
from ledger import Ledger
from tasks.webhooks.emitter import Emitter


@dataclass
class RunningReceiver:
    url: str  # where deliveries go
    root: str

    def health(self) -> dict[str, Any]:
        return dict(httpx.get(f"{self.root}/healthz", timeout=10).json())


class FirstAnswerLost:
    """ASGI middleware: the receiver handles each event's first attempt (stores it), but the
    answer is replaced by a 502, as when a proxy drops it: the service must retry, and the retry
    must be deduplicated."""

    def __init__(self, app: ASGIApp) -> None:
        self.app = app
        self.seen: set[str] = set()
        self.replaced = 0

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] != "http" or scope["path"] == "/healthz":
            await self.app(scope, receive, send)
            return
        headers = {k.decode().lower(): v.decode() for k, v in scope["headers"]}
        event_id = headers.get("adfin-webhook-id", "")
        if event_id in self.seen:
            await self.app(scope, receive, send)
            return
        self.seen.add(event_id)
        self.replaced += 1

        async def swallow(message: Any) -> None:
            if message["type"] == "http.response.start":
                message = {**message, "status": 502}
            await send(message)

        await self.app(scope, receive, swallow)


def reserve_port() -> socket.socket:
    """A listening loopback socket: its port is known before the receiver starts on it."""
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(2048)
    return listener


def url_of(listener: socket.socket) -> str:
    return f"http://127.0.0.1:{listener.getsockname()[1]}/webhooks"


@contextmanager
def running_receiver(
    ledger: Ledger,
    load_settings: Callable[[], WebhookReceiverSettings],
    *,
    emitter: Emitter | None = None,
    wrap: Callable[[ASGIApp], ASGIApp] | None = None,
    reload_after_refusal: float = 0.5,
    listener: socket.socket | None = None,
) -> Iterator[RunningReceiver]:
    app: ASGIApp = create_app(
        ledger, load_settings, emitter=emitter, reload_after_refusal=reload_after_refusal
    )
    if wrap is not None:
        app = wrap(app)
    listener = listener or reserve_port()
    port = listener.getsockname()[1]
    config = uvicorn.Config(app, log_level="warning", access_log=False, lifespan="on")
    server = uvicorn.Server(config)
    context = contextvars.copy_context()
    thread = threading.Thread(
        target=context.run, args=(server.run,), kwargs={"sockets": [listener]}, daemon=True
    )
    thread.start()
    deadline = time.monotonic() + 30
    while not server.started:
        assert thread.is_alive(), "the receiver failed to start (see the log above)"
        assert time.monotonic() < deadline, "the receiver did not start in 30 s"
        time.sleep(0.02)
    root = f"http://127.0.0.1:{port}"
    try:
        yield RunningReceiver(f"{root}/webhooks", root)
    finally:
        server.should_exit = True
        thread.join(30)
        listener.close()
