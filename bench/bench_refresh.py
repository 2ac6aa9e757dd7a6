"""Refreshes per second through a shared ``BillerCredentials`` block (refresh lock on the ledger's
database, write-ahead journal, compare-and-swap save), as a ratio to a bare refresh loop (no
lock, no block, no journal) against the same sandbox in the same run.

    .venv/bin/python bench/bench_refresh.py [--processes 32] [--seconds 30]

Each worker process forces refreshes in a loop through the block's ``TokenManager``: every call
wants a token newer than the one it holds, so it takes the lock and refreshes unless another
worker rotated meanwhile (a waiter re-reads the block and goes on with that one). The workers
import Prefect and load the block first, then start together; the rate counts the refresh grants
the sandbox made in the window in which all of them ask (``--seconds``). The whole run, until the
last worker's last call returns, and the longest any call waited for a token are printed too. The
floor is one process refreshing with
``OAuthClient.refresh`` alone. The sandbox (2-second access tokens) runs in a process of its own,
as the service does, so both sides wait on it alike. Checked as the rotation tests check: no
``invalid_grant``, the block's rotation equals the refresh grants the sandbox saw, and no worker
timed out waiting.
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
    """Load the block, say ready, wait for go; force refreshes until the deadline; report."""
    from billing_api import RefreshLockTimeout
    from blocks import BillerCredentials

    # Starting is not measured: 32 processes loading one block at once can overrun the test
    # server's database pool on a loaded machine, so the first load and token are retried.
    for attempt in range(1, 6):
        try:
            manager = BillerCredentials.load_named(name).get_token_manager()
            token = manager.access_token()
            break
        except Exception as exc:
            if attempt == 5:
                print(json.dumps({"not_ready": f"{type(exc).__name__}: {exc}"[:300]}), flush=True)
                return
            time.sleep(2 * attempt)
    print("ready", flush=True)
    sys.stdin.readline()  # "go"
    calls, timed_out, errors, longest = 0, 0, [], 0.0
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        asked = time.monotonic()
        try:
            token = manager.force_refresh(token)
        except RefreshLockTimeout:
            timed_out += 1
            break
        except Exception as exc:  # reported: the run counts as failed
            errors.append(type(exc).__name__)
            break
        finally:
            longest = max(longest, time.monotonic() - asked)
        calls += 1
    report = {"calls": calls, "timed_out": timed_out, "errors": errors, "longest": longest}
    print(json.dumps(report), flush=True)


def bare_loop(admin: SandboxAdmin, seconds: float) -> float:
    """Refreshes per second of one process chaining refresh tokens, no lock, no block."""
    from billing_api import ClientCredentials, OAuthClient

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
    admin: SandboxAdmin, processes: int, seconds: float, home: Path
) -> tuple[float, dict[str, float], dict[str, int]]:
    """Refreshes per second of ``processes`` workers sharing one block while all of them ask
    (the first ``seconds``); how the run ended (its whole length, the longest any call waited
    for a token); and the checks."""
    from prefect.settings import PREFECT_API_URL

    from blocks import BillerCredentials
    from tests.support.credentials import (
        invalid_grants,
        refresh_grants,
        save_connected_block,
        unique_name,
    )

    name = unique_name("bench")
    _, tokens = save_connected_block(admin, name, with_access_token=False)
    env = {
        **os.environ,
        "PREFECT_API_URL": str(PREFECT_API_URL.value()),
        "PYTHONPATH": str(ROOT),
        "BILLOPS_HOME": str(home),
    }
    env.pop("BILLOPS_LEDGER_URL", None)  # the lock lives beside the ledger under BILLOPS_HOME
    command = [sys.executable, __file__, "--worker", name, "--seconds", str(seconds)]
    workers = [
        subprocess.Popen(command, env=env, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
        for _ in range(processes)
    ]
    for process in workers:  # every worker has imported Prefect and holds a token
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        if line != "ready":
            for other in workers:
                other.kill()
            raise SystemExit(f"a worker could not start: {line or 'no answer'}")
    before = BillerCredentials.load_named(name).read().rotation
    started = time.monotonic()
    for process in workers:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    # Every worker asks until its deadline: the grants the sandbox counted by then are the
    # rotations made while all of them contended (the one in flight at most aside).
    time.sleep(max(0.0, started + seconds - time.monotonic()))
    in_window = refresh_grants(admin, tokens.biller_id) - before
    reports = [json.loads(process.communicate(timeout=seconds + 300)[0]) for process in workers]
    elapsed = time.monotonic() - started
    stored = BillerCredentials.load_named(name).read()
    checks = {
        "rotation": stored.rotation,
        "refresh_grants": refresh_grants(admin, tokens.biller_id),
        "invalid_grant": invalid_grants(admin, tokens.biller_id),
        "workers_timed_out": sum(r["timed_out"] for r in reports),
        "workers_failed": sum(1 for p, r in zip(workers, reports, strict=True) if r["errors"])
        + sum(1 for p in workers if p.returncode != 0),
    }
    run = {
        "whole_run_s": elapsed,
        "whole_run_rate": (stored.rotation - before) / elapsed,
        "longest_wait_s": max(r["longest"] for r in reports),
    }
    return in_window / seconds, run, checks


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

    from tests.support.credential_fixtures import sandbox_process

    with (
        tempfile.TemporaryDirectory() as folder,
        prefect_test_harness(server_startup_timeout=60),
        # In a process of its own, as the service is: both sides wait on it alike.
        sandbox_process(Path(folder) / "sandbox.db", access_token_ttl=2) as admin,
    ):
        floor = bare_loop(admin, args.seconds)
        rate, run, checks = shared_block(admin, args.processes, args.seconds, Path(folder) / "home")
    print(f"bare refresh loop (1 process, no lock, no block): {floor:.1f} refreshes/s")
    print(
        f"shared block ({args.processes} processes, ledger lock + journal + CAS save): "
        f"{rate:.2f} refreshes/s over the {args.seconds:g} s all of them ask"
    )
    print(f"ratio shared/bare: {rate / floor:.3f}")
    print(
        f"whole run until the last worker's last call returned: {run['whole_run_s']:.1f} s, "
        f"{run['whole_run_rate']:.2f} refreshes/s; longest wait for a token "
        f"{run['longest_wait_s']:.1f} s (lock timeout 120 s)"
    )
    print("checks: " + ", ".join(f"{key}={value}" for key, value in checks.items()))
    ok = checks["invalid_grant"] == 0 and checks["rotation"] == checks["refresh_grants"]
    return 0 if ok and not checks["workers_failed"] and not checks["workers_timed_out"] else 1


if __name__ == "__main__":
    sys.exit(main())
