"""A real Prefect server started the way a person starts it (``billops server start``), from the
project's own environment, with its own ``PREFECT_HOME`` and ``BILLOPS_HOME``; and the ``billops``
command run as a subprocess against it."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
# The server's scheduler looks for work every 5 s instead of 60 s: the same code, sooner.
SCHEDULER_LOOP_SECONDS = "5"


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def clean_env(prefect_home: Path, billops_home: Path, **extra: str) -> dict[str, str]:
    """A person's environment: no test harness API URL, no analytics switch set by the tests
    (billops must turn analytics off itself), homes of its own."""
    env = {
        k: v
        for k, v in os.environ.items()
        if not k.startswith("PREFECT_") and k not in ("DO_NOT_TRACK", "BILLOPS_LEDGER_URL")
    }
    env.update(
        PREFECT_HOME=str(prefect_home),
        BILLOPS_HOME=str(billops_home),
        PYTHONPATH=str(ROOT),
        PREFECT_SERVER_SERVICES_SCHEDULER_LOOP_SECONDS=SCHEDULER_LOOP_SECONDS,
        # Prefect's temporary server can take over a minute to start on a loaded CI machine.
        PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="180",
    )
    env.update(extra)
    return env


@dataclass
class BillopsHomes:
    """The folders and environment billops commands run with."""

    prefect_home: Path
    billops_home: Path
    env: dict[str, str]

    def run(self, *args: str, timeout: float = 300) -> subprocess.CompletedProcess[str]:
        """``billops ARGS`` as a subprocess; its output combined."""
        return subprocess.run(
            [sys.executable, "-m", "billops.cli", *args],
            env=self.env,
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=timeout,
        )


@dataclass
class RunningServer:
    homes: BillopsHomes
    url: str

    def api(self) -> httpx.Client:
        return httpx.Client(base_url=f"{self.url}/api", timeout=30)


@contextmanager
def billops_server(tmp: Path) -> Iterator[RunningServer]:
    """``billops server start`` on a free port; ``billops server stop`` afterwards."""
    homes = BillopsHomes(
        tmp / "prefect", tmp / "billops", clean_env(tmp / "prefect", tmp / "billops")
    )
    port = free_port()
    started = homes.run("server", "start", "--port", str(port), timeout=180)
    assert started.returncode == 0, started.stdout + started.stderr
    try:
        yield RunningServer(homes, f"http://127.0.0.1:{port}")
    finally:
        homes.run("server", "stop", timeout=60)


def wait_until(check: object, timeout: float, every: float = 1.0) -> bool:
    """Call ``check()`` until it returns true or ``timeout`` seconds pass."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if check():  # type: ignore[operator]
            return True
        time.sleep(every)
    return False
