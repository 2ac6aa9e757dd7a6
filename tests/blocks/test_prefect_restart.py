"""A Prefect server SIGKILLed while workers hold and wait for the refresh lock, then restarted:
every worker and ``billops auth status`` work again within a bounded time, with no manual step,
and no rotation is lost on the way. (The lock is on the ledger's database, so nothing of it lived
in the server; a Prefect concurrency limit used as the lock stayed taken for good after this.)"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from blocks import BillerCredentials
from tests.blocks.kill_workers import Zygote
from tests.support.credentials import (
    invalid_grants,
    refresh_grants,
    register_block_secrets,
    save_connected_block,
    subprocess_env,
    unique_name,
)
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_log, register_secret, register_tree

ROOT = Path(__file__).resolve().parents[2]
WORKERS, GAP_SECONDS, BOUND_SECONDS = 3, 1.0, 120.0


class PrefectServer:
    """``prefect server start`` on a fixed port and database, killable and restartable."""

    def __init__(self, home: Path, port: int) -> None:
        self.home, self.port = home, port
        self.url = f"http://127.0.0.1:{port}/api"
        self.process: subprocess.Popen[bytes] | None = None
        self.log = home / "server.log"

    def start(self, timeout: float = 180) -> None:
        env = {k: v for k, v in os.environ.items() if not k.startswith("PREFECT_")}
        env.update(
            PREFECT_HOME=str(self.home),
            PREFECT_SERVER_ANALYTICS_ENABLED="false",
            PREFECT_UI_ENABLED="false",
            PREFECT_SERVER_SERVICES_SCHEDULER_ENABLED="false",
            PREFECT_SERVER_SERVICES_LATE_RUNS_ENABLED="false",
            PREFECT_SERVER_SERVICES_FOREMAN_ENABLED="false",
        )
        with self.log.open("ab") as log:
            self.process = subprocess.Popen(
                [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]
                + ["--port", str(self.port)],
                env=env,
                stdout=log,
                stderr=subprocess.STDOUT,
            )
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if httpx.get(f"{self.url}/health", timeout=2).status_code == 200:
                    return
            except httpx.HTTPError:
                pass
            assert self.process.poll() is None, self.log.read_text()[-3000:]
            time.sleep(0.5)
        tail = self.log.read_text()[-3000:]
        raise AssertionError(f"Prefect server not up in {timeout} s: {tail}")

    def kill(self) -> None:
        assert self.process is not None
        os.kill(self.process.pid, signal.SIGKILL)
        self.process.wait(30)

    def stop(self) -> None:
        if self.process is not None and self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
        register_log(self.log, label="restarted Prefect server log")


@pytest.fixture
def server(tmp_path: Path) -> Iterator[PrefectServer]:
    import socket

    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    running = PrefectServer(tmp_path / "prefect-home", port)
    running.home.mkdir()
    running.start()
    yield running
    running.stop()


def _outcomes(outdir: Path, pid: int) -> list[tuple[float, bool]]:
    path = outdir / f"{pid}.log"
    if not path.exists():
        return []
    found = []
    for line in path.read_text().splitlines():
        stamp, outcome = line.split()[:2]
        found.append((float(stamp), outcome == "ok"))
    return found


def _wait_for_gap(outdir: Path, timeout: float) -> int:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        markers = list(outdir.glob("*.gap"))
        if markers:
            return int(markers[0].stem)
        time.sleep(0.01)
    raise AssertionError("no worker took the refresh lock and entered the gap")


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_workers_and_status_recover_from_a_killed_and_restarted_prefect_server(
    server: PrefectServer, short_admin: SandboxAdmin, billops_home: Path, tmp_path: Path
) -> None:
    from prefect.settings import PREFECT_API_URL, temporary_settings

    outdir = tmp_path / "workers"
    outdir.mkdir()
    with temporary_settings({PREFECT_API_URL: server.url}):
        name = unique_name("restart")
        _, tokens = save_connected_block(short_admin, name, with_access_token=False)
        zygote = Zygote(subprocess_env(BILLOPS_HOME=str(billops_home), PYTHONPATH=str(ROOT)))
        try:
            pids = [
                zygote.spawn(name, BOUND_SECONDS + 90, GAP_SECONDS, outdir, keep_going=True)
                for _ in range(WORKERS)
            ]
            # One worker holds the lock (inside the widened gap), the others wait for it.
            holder = _wait_for_gap(outdir, 60)
            server.kill()
            killed_at = time.time()
            time.sleep(3)
            server.start()
            restarted_at = time.time()

            def recovered(pid: int) -> bool:
                return any(ok and at > restarted_at for at, ok in _outcomes(outdir, pid))

            deadline = time.monotonic() + BOUND_SECONDS
            while time.monotonic() < deadline and not all(recovered(pid) for pid in pids):
                time.sleep(1)
            worked_again = {pid: recovered(pid) for pid in pids}
            status = subprocess.run(
                [sys.executable, "-m", "billops.cli", "auth", "status", "--block", name],
                cwd=ROOT,
                env=subprocess_env(BILLOPS_HOME=str(billops_home), PYTHONPATH=str(ROOT)),
                capture_output=True,
                text=True,
                timeout=BOUND_SECONDS,
            )
            status_done = time.time()
            for pid in pids:
                os.kill(pid, signal.SIGKILL)
            zygote.reap()
        finally:
            zygote.close()

        register_log(status.stdout + status.stderr, label="billops auth status after restart")
        for path in outdir.glob("*.secrets"):
            for secret in path.read_text().split():
                register_secret(secret)
        failed = sum(1 for pid in pids for _, ok in _outcomes(outdir, pid) if not ok)
        assert worked_again == dict.fromkeys(pids, True)
        back = max(
            min(at for at, ok in _outcomes(outdir, pid) if ok and at > restarted_at) for pid in pids
        )
        print(
            f"restart test: holder {holder}, server down {restarted_at - killed_at:.1f} s, "
            f"{failed} requests failed meanwhile, every worker back {back - restarted_at:.1f} s "
            f"after the restart, status {status_done - restarted_at:.1f} s after"
        )
        assert status.returncode == 0, status.stdout + status.stderr
        assert "status:         ok" in status.stdout
        assert status_done - restarted_at < BOUND_SECONDS * 2

        # Nothing was lost: the next worker adopts what the killed ones left in the journal,
        # and then every grant the sandbox made is a rotation the block recorded.
        final = BillerCredentials.load_named(name)
        final.get_token_manager().access_token()
        register_block_secrets(final)
        assert invalid_grants(short_admin, tokens.biller_id) == 0
        assert refresh_grants(short_admin, tokens.biller_id) == final.read().rotation
    # A worker killed at the end may have left its rotation in the journal: tokens may be there,
    # and nowhere else under BILLOPS_HOME.
    register_tree(billops_home, allowed=[billops_home / "recovery"], label="BILLOPS_HOME")
