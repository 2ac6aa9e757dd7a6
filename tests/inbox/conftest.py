"""Fixtures of the inbox tests: a biller with customers and a credential block, an inbox root,
a BILLOPS_HOME with its ledger, and watchers as real processes."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.support.import_billers import ImportBiller, make_biller
from tests.support.sandbox_admin import SandboxAdmin

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def biller(prefect: None, admin: SandboxAdmin) -> Iterator[ImportBiller]:
    made = make_biller(admin)
    yield made
    made.api.close()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """BILLOPS_HOME with its ledger, as `billops setup` leaves it."""
    from ledger import upgrade_database
    from ledger.settings import BillopsSettings

    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("BILLOPS_HOME", str(folder))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    upgrade_database(BillopsSettings().ledger_database_url)
    return folder


def child_env(home: Path, **extra: str) -> dict[str, str]:
    from prefect.settings import PREFECT_API_URL

    env = {**os.environ, "BILLOPS_HOME": str(home), "PREFECT_API_URL": str(PREFECT_API_URL.value())}
    env.pop("BILLOPS_CRASH_AT", None)
    env.update(extra)
    return env


def billops(*args: str) -> list[str]:
    return [sys.executable, "-m", "billops.cli", *args]


class WatcherProcess:
    """``billops inbox watch`` in its own process; its output goes to a file."""

    def __init__(
        self, root: Path, home: Path, log: Path, *, ready: bool = True, **env: str
    ) -> None:
        self.log = log
        self._out = log.open("w")
        command = billops("inbox", "watch", "--root", str(root), "--settle-seconds", "1")
        self.process = subprocess.Popen(
            command,
            env=child_env(home, **env),
            stdout=self._out,
            stderr=subprocess.STDOUT,
            cwd=ROOT,
        )
        if ready:
            self.wait_ready()

    def wait_ready(self) -> None:
        """Until the watcher says it watches (``ready=False`` starts several side by side)."""
        deadline = time.monotonic() + 60
        while "inbox watcher ready" not in self.log.read_text():
            assert self.process.poll() is None, self.log.read_text()
            assert time.monotonic() < deadline, "the watcher did not start"
            time.sleep(0.1)

    def terminate(self) -> int:
        if self.process.poll() is None:
            self.process.send_signal(signal.SIGTERM)
        code = self.process.wait(120)
        self._out.close()
        return code

    def kill(self) -> None:
        if self.process.poll() is None:
            self.process.kill()
            self.process.wait(30)
        self._out.close()
