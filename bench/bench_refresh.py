"""Refreshes per second through a shared ``BillerCredentials`` block (Prefect lock + CAS save), as
a ratio to a bare refresh loop (no lock, no block) against the same sandbox in the same run.

    .venv/bin/python bench/bench_refresh.py [--processes 32] [--seconds 30]

Each worker process forces refreshes in a loop through the block's ``TokenManager``: every call
takes the lock, re-reads the block, and refreshes unless another worker just did. The floor is
one process refreshing with ``OAuthClient.refresh`` alone. It also checks what the rotation test
checks: no ``invalid_grant``, and the block's rotation equals the refresh grants the sandbox saw.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.sandbox_admin import SandboxAdmin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="billops-bench-prefect-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


def worker(name: str, seconds: float) -> None:
    """Force refreshes through the block until the deadline; print how many calls were made."""
    from blocks import BillerCredentials

    manager = BillerCredentials.load(name).get_token_manager()
    token = manager.access_token()
    calls = 0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        token = manager.force_refresh(token)
        calls += 1
    print(json.dumps({"calls": calls}), flush=True)


def bare_loop(admin: SandboxAdmin, seconds: float) -> float:
    """Refreshes per second of one process chaining refresh tokens, no lock, no block."""
    from billing_api.oauth import ClientCredentials, OAuthClient

    tokens = admin.connect_biller("Bare Loop Ltd")
    refresh = tokens.refresh_token
    count = 0
    oauth = OAuthClient(
        f"{admin.root}/api",
        ClientCredentials(tokens.app.client_id, tokens.app.client_secret),
    )
    with oauth:
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            refresh = oauth.refresh(refresh).refresh_token or refresh
            count += 1
    return count / seconds


def shared_block(
    admin: SandboxAdmin, processes: int, seconds: float
) -> tuple[float, dict[str, int]]:
    """Refreshes per second of ``processes`` workers sharing one block; and the checks."""
    from prefect.settings import PREFECT_API_URL

    from blocks import BillerCredentials
    from tests.blocks.helpers import (
        invalid_grants,
        refresh_grants,
        save_connected_block,
        unique_name,
    )

    name = unique_name("bench")
    _, tokens = save_connected_block(admin, name, with_access_token=False)
    env = {**os.environ, "PREFECT_API_URL": str(PREFECT_API_URL.value()), "PYTHONPATH": str(ROOT)}
    command = [sys.executable, __file__, "--worker", name, "--seconds", str(seconds)]
    started = time.monotonic()
    workers = [
        subprocess.Popen(command, env=env, stdout=subprocess.PIPE, text=True)
        for _ in range(processes)
    ]
    for process in workers:
        process.communicate(timeout=seconds + 300)
    elapsed = time.monotonic() - started
    stored = BillerCredentials.load(name).read()
    checks = {
        "rotation": stored.rotation,
        "refresh_grants": refresh_grants(admin, tokens.biller_id),
        "invalid_grant": invalid_grants(admin, tokens.biller_id),
        "failed_workers": sum(1 for p in workers if p.returncode != 0),
    }
    # Worker start-up (importing Prefect) is not refresh time: divide by the workers' window.
    return stored.rotation / min(elapsed, seconds), checks


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.seconds)
        return 0

    from prefect.testing.utilities import prefect_test_harness

    from tests.support.sandbox_admin import running_sandbox

    with (
        tempfile.TemporaryDirectory() as folder,
        prefect_test_harness(server_startup_timeout=60),
        running_sandbox(f"sqlite:///{folder}/sandbox.db") as admin,
    ):
        floor = bare_loop(admin, args.seconds)
        rate, checks = shared_block(admin, args.processes, args.seconds)
    print(f"bare refresh loop (1 process, no lock, no block): {floor:.1f} refreshes/s")
    print(f"shared block ({args.processes} processes, GCL lock + CAS save): {rate:.2f} refreshes/s")
    print(f"ratio shared/bare: {rate / floor:.3f}")
    print("checks: " + ", ".join(f"{key}={value}" for key, value in checks.items()))
    ok = checks["invalid_grant"] == 0 and checks["rotation"] == checks["refresh_grants"]
    return 0 if ok and not checks["failed_workers"] else 1


if __name__ == "__main__":
    sys.exit(main())
