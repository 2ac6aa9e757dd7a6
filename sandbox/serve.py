"""Running the sandbox: the ``billops sandbox serve`` process and an in-thread server for tests.

``serve`` prints exactly one line, ``sandbox ready: http://HOST:PORT``, once the socket accepts
connections (a client's base URL is that root + ``/api``), and stops cleanly on SIGTERM or Ctrl-C
(uvicorn's own signal handling). Port 0 picks a free port; the line names the real one.
"""

from __future__ import annotations

import contextlib
import json
import socket
import sys
import threading
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import uvicorn
from fastapi import FastAPI

from sandbox.app import create_app
from sandbox.config import SandboxSettings
from sandbox.core.db import session_scope
from sandbox.simulation.seed import seed_demo


def root_url(host: str, port: int) -> str:
    shown = f"[{host}]" if ":" in host else host
    return f"http://{shown}:{port}"


def _bind(host: str, port: int) -> socket.socket:
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    # IPPROTO_TCP explicitly: asyncio sets TCP_NODELAY on accepted connections only for sockets
    # it knows to be TCP; without it each keep-alive request waits ~40 ms (Nagle + delayed ACK).
    sock = socket.socket(family, socket.SOCK_STREAM, socket.IPPROTO_TCP)
    sock.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    sock.bind((host, port))
    sock.listen(128)
    sock.setblocking(False)
    return sock


class _Server(uvicorn.Server):
    """A uvicorn server that calls ``on_ready`` once it is listening."""

    def __init__(self, config: uvicorn.Config, on_ready: Callable[[], None]) -> None:
        super().__init__(config)
        self._on_ready = on_ready

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        """uvicorn re-raises a captured SIGTERM after its graceful shutdown, so the process would
        die by the signal; a sandbox that shut down cleanly exits 0 instead."""
        with super().capture_signals():
            try:
                yield
            finally:
                captured = getattr(self, "_captured_signals", None)
                if isinstance(captured, list):
                    captured.clear()

    async def startup(self, sockets: list[socket.socket] | None = None) -> None:
        await super().startup(sockets=sockets)
        if self.started:
            self._on_ready()


def _config(settings: SandboxSettings, app: FastAPI | None = None) -> uvicorn.Config:
    # warning level: the ready line is the only thing the sandbox prints while all is well.
    return uvicorn.Config(
        app or create_app(settings),
        log_level="warning",
        access_log=False,
        lifespan="on",
        timeout_graceful_shutdown=5,
    )


def seed_into(app: FastAPI, credentials_file: Path) -> str:
    """Seed demo data; the app's credentials go to ``credentials_file`` (mode 0600), never to the
    terminal. Returns the line to print: the client id, the biller ids and where the file is."""
    with session_scope(app.state.sandbox.sessions) as session:
        demo = seed_demo(session, billers=2, customers=6, seed=42)
    credentials_file.parent.mkdir(parents=True, exist_ok=True)
    credentials_file.touch(mode=0o600)
    credentials_file.chmod(0o600)
    credentials_file.write_text(json.dumps(demo, indent=2) + "\n", encoding="utf-8")
    billers = ", ".join(b["billerId"] for b in demo["billers"])
    return (
        f"sandbox demo: app {demo['clientId']}, billers {billers}; "
        f"client secret in {credentials_file}"
    )


def serve(settings: SandboxSettings, *, demo_credentials: Path | None = None) -> None:
    """Serve until SIGTERM / SIGINT (blocking). With ``demo_credentials``, seed demo data first."""
    sock = _bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    app = create_app(settings)
    demo_line = seed_into(app, demo_credentials) if demo_credentials else None

    def announce() -> None:
        print(f"sandbox ready: {root_url(settings.host, port)}", flush=True)
        if demo_line:
            print(demo_line, flush=True)

    server = _Server(_config(settings, app), announce)
    try:
        server.run(sockets=[sock])
    finally:
        sock.close()
    if not server.started:
        sys.exit(1)


@contextmanager
def serve_in_thread(settings: SandboxSettings, timeout: float = 30.0) -> Iterator[str]:
    """Run a sandbox in a background thread; yields its root URL. Used by tests and the demo."""
    sock = _bind(settings.host, settings.port)
    port = sock.getsockname()[1]
    ready = threading.Event()
    server = _Server(_config(settings), ready.set)
    thread = threading.Thread(
        target=server.run, kwargs={"sockets": [sock]}, daemon=True, name=f"sandbox-{port}"
    )
    thread.start()
    try:
        if not ready.wait(timeout):
            raise RuntimeError(f"the sandbox did not start within {timeout} s")
        yield root_url(settings.host, port)
    finally:
        server.should_exit = True
        thread.join(timeout)
        sock.close()
