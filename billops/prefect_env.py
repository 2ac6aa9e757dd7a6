"""The Prefect settings every billops command runs with, set before Prefect is first imported.

- Prefect's analytics are off: on a machine without internet they print "Failed to send
  telemetry" on every command, and the telemetry service's writes race the ephemeral server's
  first start ("database is locked ... TELEMETRY_SESSION").
- When a persistent local server is up (``billops server start``, see the README's quick start),
  every command talks to it instead of starting Prefect's temporary server, which costs 10-20 s a
  command. ``PREFECT_API_URL``, when set, always wins.
- Without either, Prefect's temporary server gets 60 s to start (a first start takes ~13 s on two
  cores; Prefect's default of 20 s is too close).

This module imports nothing heavy (no Prefect, no ledger): it runs first in every command.
"""

from __future__ import annotations

import json
import os
import socket
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

SERVER_RECORD = "billops-server.json"
QUIET_PREFECT = {
    "PREFECT_SERVER_ANALYTICS_ENABLED": "false",
    "DO_NOT_TRACK": "1",
    "PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS": "60",
}


@dataclass(frozen=True)
class ServerRecord:
    """What ``billops server start`` wrote down about the server it started."""

    url: str
    pid: int
    prefect_home: str
    log: str

    @property
    def api_url(self) -> str:
        return f"{self.url}/api"


def prefect_home() -> Path:
    """Prefect's home folder (``PREFECT_HOME``, Prefect's default ``~/.prefect``)."""
    configured = os.environ.get("PREFECT_HOME")
    return Path(configured).expanduser() if configured else Path.home() / ".prefect"


def record_path(home: Path | None = None) -> Path:
    """Where the persistent server of a Prefect home is written down."""
    return (home or prefect_home()) / SERVER_RECORD


def read_record(home: Path | None = None) -> ServerRecord | None:
    """The server written down for this Prefect home, if any (alive or not)."""
    try:
        data = json.loads(record_path(home).read_text(encoding="utf-8"))
        return ServerRecord(
            url=str(data["url"]),
            pid=int(data["pid"]),
            prefect_home=str(data["prefect_home"]),
            log=str(data["log"]),
        )
    except (OSError, ValueError, KeyError, TypeError):
        return None


def write_record(record: ServerRecord) -> Path:
    path = record_path(Path(record.prefect_home))
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(asdict(record), indent=2) + "\n", encoding="utf-8")
    return path


def process_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # alive, but someone else's
        return True
    return True


def port_open(url: str, timeout: float = 0.5) -> bool:
    """True when something accepts connections at the URL's host and port."""
    parts = urlsplit(url)
    try:
        with socket.create_connection((parts.hostname or "127.0.0.1", parts.port or 80), timeout):
            return True
    except OSError:
        return False


def running_server(home: Path | None = None) -> ServerRecord | None:
    """The persistent server of this Prefect home when its process is alive and listening."""
    record = read_record(home)
    if record is None or not process_alive(record.pid) or not port_open(record.url):
        return None
    return record


def prepare_prefect_environment() -> ServerRecord | None:
    """Set what Prefect reads at import (see the module docstring); the server used, if any."""
    for name, value in QUIET_PREFECT.items():
        os.environ.setdefault(name, value)
    if os.environ.get("PREFECT_API_URL"):
        return None
    server = running_server()
    if server is not None:
        os.environ["PREFECT_API_URL"] = server.api_url
    return server
