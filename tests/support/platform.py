"""A platform's topology with local processes: a Prefect server (``prefect server start``, on
SQLite or PostgreSQL), the ``billops`` process work pool with the ``nightly-biller`` deployment,
and N process workers (``prefect worker start``), each also polling a work queue named after
itself (where the nightly run sends a retry meant for another worker). Every worker shares one
``BILLOPS_HOME`` (the inbox) and one ledger, as workers on several machines share a disk and a
database. Used by the nightly tests, the soak and ``bench/bench_nightly.py``.

The test process talks to this server inside :meth:`Platform.api` (Prefect's settings pointed at
it): blocks saved, deployments applied and the nightly run itself go there.
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import AbstractContextManager, contextmanager, suppress
from dataclasses import dataclass, field
from pathlib import Path

import httpx

ROOT = Path(__file__).resolve().parents[2]
POOL = "billops"
# Seconds: workers ask for work every second and say they are alive every 5 (the server calls a
# worker offline after three missed heartbeats); flow runs send heartbeats at Prefect's minimum.
WORKER_SETTINGS = {
    "PREFECT_WORKER_QUERY_SECONDS": "1",
    "PREFECT_WORKER_HEARTBEAT_SECONDS": "5",
    "PREFECT_FLOWS_HEARTBEAT_FREQUENCY": "30",
}


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def descendants(pid: int) -> list[int]:
    """Every process below ``pid`` (children, their children, ...), from ``/proc``."""
    parents: dict[int, list[int]] = {}
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        ppid = int(stat.rsplit(")", 1)[1].split()[1])
        parents.setdefault(ppid, []).append(int(entry.name))
    found, todo = [], [pid]
    while todo:
        children = parents.get(todo.pop(), [])
        found += children
        todo += children
    return found


def _freeze(pid: int) -> list[int]:
    """SIGSTOP ``pid`` and every process below it, until no new one appears: a stopped process
    starts no other, so the list is then complete. Without this, a worker that starts a flow
    run between the listing and its own kill leaves that run alive, an orphan nobody killed."""
    frozen: list[int] = []
    todo = [pid]
    while todo:
        for victim in todo:
            with suppress(ProcessLookupError):
                os.kill(victim, signal.SIGSTOP)
        frozen += todo
        todo = [child for child in descendants(pid) if child not in frozen]
    return frozen


def kill_tree(pid: int, sig: int = signal.SIGKILL) -> list[int]:
    """Send ``sig`` to ``pid`` and every process below it; returns the pids signalled. A SIGKILL
    is a machine losing its power: the tree is frozen first, so none of it escapes and nothing
    cleans up."""
    victims = _freeze(pid) if sig == signal.SIGKILL else [pid, *descendants(pid)]
    for victim in victims:
        with suppress(ProcessLookupError):
            os.kill(victim, sig)
    return victims


def _wait_healthy(url: str, process: subprocess.Popen[bytes], log: Path, timeout: float) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if process.poll() is not None:
            tail = log.read_text(errors="replace")[-3000:]
            raise RuntimeError(f"the Prefect server exited ({process.returncode}):\n{tail}")
        try:
            if httpx.get(f"{url}/health", timeout=2).status_code == 200:
                return
        except httpx.HTTPError:
            pass
        time.sleep(0.5)
    raise RuntimeError(f"the Prefect server did not answer within {timeout:.0f} s")


@dataclass
class Platform:
    """The running topology; ``env`` is what a billops process on a worker's machine has."""

    root: Path
    url: str  # the API's address (.../api)
    env: dict[str, str]
    server: subprocess.Popen[bytes]
    workers: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    def api(self) -> AbstractContextManager[None]:
        """Prefect's settings in this process pointed at this server, with the workers' flow
        heartbeat frequency: a coordinator run here judges a child that never announced its
        process by heartbeats within three of its own periods (``tasks/nightly/children.py``),
        as a coordinator deployed beside the workers does; with Prefect's default of 180 s a
        child killed while starting was taken for dead only after 9 minutes."""
        from prefect.settings import (
            PREFECT_API_URL,
            PREFECT_FLOWS_HEARTBEAT_FREQUENCY,
            temporary_settings,
        )

        heartbeat = int(WORKER_SETTINGS["PREFECT_FLOWS_HEARTBEAT_FREQUENCY"])
        return temporary_settings(
            {PREFECT_API_URL: self.url, PREFECT_FLOWS_HEARTBEAT_FREQUENCY: heartbeat}
        )

    def deploy(self) -> None:
        """The work pool and the ``nightly-biller`` deployment (module entrypoint, as
        ``deployments/prefect.yaml`` has it), on this server."""
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.actions import WorkPoolCreate
        from prefect.deployments.runner import EntrypointType
        from prefect.exceptions import ObjectAlreadyExists

        from flows.nightly_biller import nightly_biller

        with self.api(), get_client(sync_client=True) as client:
            with suppress(ObjectAlreadyExists):
                client.create_work_pool(WorkPoolCreate(name=POOL, type="process"))
            deployment = nightly_biller.to_deployment(
                name="nightly-biller",
                work_pool_name=POOL,
                entrypoint_type=EntrypointType.MODULE_PATH,
            )
            deployment.apply()

    def start_worker(self, name: str, limit: int = 2) -> subprocess.Popen[bytes]:
        """``prefect worker start`` polling the default queue and its own (created first: a
        worker asked to poll a queue that does not exist polls nothing at all)."""
        self.create_queue(name)
        command = [sys.executable, "-m", "prefect", "worker", "start", "--pool", POOL]
        command += ["--name", name, "--limit", str(limit)]
        command += ["--work-queue", "default", "--work-queue", name]
        log = (self.root / f"{name}.log").open("ab")
        process = subprocess.Popen(
            command,
            env=self.env,
            cwd=ROOT,
            stdout=log,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.workers[name] = process
        return process

    def create_queue(self, name: str) -> None:
        """The work queue ``name`` in the pool (``prefect work-queue create NAME --pool``)."""
        from prefect.client.orchestration import get_client
        from prefect.exceptions import ObjectAlreadyExists

        with self.api(), get_client(sync_client=True) as client, suppress(ObjectAlreadyExists):
            client.create_work_queue(name=name, work_pool_name=POOL)

    def wait_for_workers(self, timeout: float = 120) -> None:
        """Until every started worker is online at the server."""
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.objects import WorkerStatus

        wanted = {name for name, p in self.workers.items() if p.poll() is None}
        deadline = time.monotonic() + timeout
        with self.api(), get_client(sync_client=True) as client:
            while time.monotonic() < deadline:
                online = {
                    w.name
                    for w in client.read_workers_for_work_pool(POOL)
                    if w.status == WorkerStatus.ONLINE
                }
                if wanted <= online:
                    return
                time.sleep(1)
        raise RuntimeError(f"workers not online after {timeout:.0f} s: {sorted(wanted)}")

    def kill_worker(self, name: str) -> list[int]:
        """SIGKILL a worker and every flow run it started (they die with their machine)."""
        process = self.workers[name]
        victims = kill_tree(process.pid)
        process.wait(timeout=30)
        return victims

    def stop(self) -> None:
        """SIGTERM every process, then SIGKILL what is left after one shared grace period (a
        worker finishing a flow run can take 30 s to stop; waited for one after another, two
        such workers held a test's teardown for a minute)."""
        processes = [*self.workers.values(), self.server]
        for process in processes:
            if process.poll() is None:
                kill_tree(process.pid, signal.SIGTERM)
        deadline = time.monotonic() + 10
        for process in processes:
            try:
                process.wait(timeout=max(0.0, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                kill_tree(process.pid)
                process.wait(timeout=10)


@contextmanager
def platform(
    root: Path,
    *,
    home: Path,
    ledger_url: str,
    server_database_url: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Iterator[Platform]:
    """A Prefect server (SQLite in ``root`` unless ``server_database_url`` names a PostgreSQL
    database, ``postgresql+asyncpg://...``) with the nightly deployment; no worker yet
    (:meth:`Platform.start_worker`). Everything is stopped afterwards."""
    root.mkdir(parents=True, exist_ok=True)
    port = free_port()
    url = f"http://127.0.0.1:{port}/api"
    base = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BILLOPS_"))}
    base.update(
        PREFECT_HOME=str(root / "prefect"),
        PREFECT_SERVER_ANALYTICS_ENABLED="false",
        PYTHONPATH=str(ROOT),
    )
    server_env = {**base, "PREFECT_UI_ENABLED": "false"}
    if server_database_url:
        server_env["PREFECT_SERVER_DATABASE_CONNECTION_URL"] = server_database_url
    log = root / "server.log"
    with log.open("ab") as output:
        command = [sys.executable, "-m", "prefect", "server", "start", "--host", "127.0.0.1"]
        server = subprocess.Popen(
            [*command, "--port", str(port)],
            env=server_env,
            stdout=output,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
    env = {
        **base,
        **WORKER_SETTINGS,
        "PREFECT_API_URL": url,
        "BILLOPS_HOME": str(home),
        "BILLOPS_LEDGER_URL": ledger_url,
        **(extra_env or {}),
    }
    running = Platform(root, url, env, server)
    try:
        _wait_healthy(url, server, log, timeout=180)
        running.deploy()
        yield running
    finally:
        running.stop()
