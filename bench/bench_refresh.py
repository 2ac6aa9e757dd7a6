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
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tests.support.sandbox_admin import SandboxAdmin

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="billops-bench-prefect-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


class Profile:
    """Times each part of the refresh procedure in one worker (``--profile``) by wrapping the
    calls the manager makes on its block, lock, token endpoint and journal: the product's code
    runs, only the clock is added. Every hold of the lock is kept with the wall-clock instants of
    its taking and release, so the main process can also measure how long the lock lay free
    between one holder's release and the next one's taking (the hand-over)."""

    PARTS = ("read", "journal_state", "intent", "refresh", "journal_fsync", "save", "settle")

    def __init__(self) -> None:
        self.holds: list[dict[str, float]] = []
        self.hold: dict[str, float] | None = None
        self.outside: dict[str, list[float]] = {"read": [], "try_acquire": [], "peek": []}

    def wrap(self, target: object, method: str, part: str) -> None:
        original = getattr(target, method)

        def timed(*args: object, **kwargs: object) -> object:
            began = time.perf_counter()
            try:
                return original(*args, **kwargs)
            finally:
                spent = time.perf_counter() - began
                if self.hold is not None:
                    self.hold[part] = self.hold.get(part, 0.0) + spent
                elif part in self.outside:
                    self.outside[part].append(spent)

        object.__setattr__(target, method, timed)

    def instrument(self, manager: object) -> None:
        from billing_api import RefreshLock

        block, journal = manager.store, manager.journal  # type: ignore[attr-defined]
        self.wrap(block, "read", "read")
        self.wrap(block, "write", "save")
        self.wrap(manager._endpoint, "refresh", "refresh")  # type: ignore[attr-defined]
        self.wrap(journal, "state", "journal_state")
        self.wrap(journal, "record_intent", "intent")
        self.wrap(journal, "record", "journal_fsync")
        self.wrap(journal, "settle", "settle")
        lock: RefreshLock = manager._refresh_lock()  # type: ignore[attr-defined]
        acquire, release = lock.try_acquire, lock.release
        self.wrap(lock, "peek_rotation", "peek")

        def try_acquire(wait: float) -> bool:
            began = time.perf_counter()
            got = acquire(wait)
            self.outside["try_acquire"].append(time.perf_counter() - began)
            if got:
                self.hold = {"taken": time.time(), "taken_perf": time.perf_counter()}
            return got

        def released(stored_rotation: int | None = None) -> None:
            began = time.perf_counter()
            release(stored_rotation)
            hold, self.hold = self.hold, None
            if hold is not None:
                hold["release"] = time.perf_counter() - began
                hold["held"] = time.perf_counter() - hold.pop("taken_perf")
                hold["released"] = time.time()
                self.holds.append(hold)

        object.__setattr__(lock, "try_acquire", try_acquire)
        object.__setattr__(lock, "release", released)


def worker(name: str, seconds: float, profile: bool = False) -> None:
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
    profiler = Profile() if profile else None
    if profiler is not None:
        profiler.instrument(manager)
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
    report: dict[str, object] = {
        "calls": calls,
        "timed_out": timed_out,
        "errors": errors,
        "longest": longest,
    }
    if profiler is not None:
        report["holds"] = profiler.holds
        report["outside"] = profiler.outside
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


def part_floors(admin: SandboxAdmin, seconds: float, home: Path) -> dict[str, float]:
    """Seconds per call of the parts a rotation cannot skip, each alone in a loop in this
    process (``--profile``): the block's save (one Prefect API write), its read, and the
    journal's record (append and ``fsync``)."""
    from dataclasses import replace

    from billing_api import RecoveryDirectory
    from blocks import BillerCredentials
    from tests.support.credentials import save_connected_block, unique_name

    name = unique_name("floor")
    save_connected_block(admin, name, with_access_token=False)
    block = BillerCredentials.load_named(name)
    tokens = block.read()
    journal = RecoveryDirectory(home / "floor-journal")
    calls: dict[str, Callable[[int], object]] = {
        "save": lambda n: block.write(replace(tokens, rotation=n), expected_rotation=n - 1),
        "read": lambda n: block.read(),
        "journal_fsync": lambda n: journal.record(name, replace(tokens, rotation=n)),
    }
    floors: dict[str, float] = {}
    for part, call in calls.items():
        count, began = 0, time.perf_counter()
        while time.perf_counter() - began < seconds:
            count += 1
            call(tokens.rotation + count)
        floors[part] = (time.perf_counter() - began) / count
    return floors


def shared_block(
    admin: SandboxAdmin, processes: int, seconds: float, home: Path, profile: bool = False
) -> tuple[float, dict[str, float], dict[str, int], list[dict[str, object]]]:
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
    command += ["--profile"] if profile else []
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
    started, cpu_before = time.monotonic(), os.times()
    for process in workers:
        assert process.stdin is not None
        process.stdin.write("go\n")
        process.stdin.flush()
    # Every worker asks until its deadline: the grants the sandbox counted by then are the
    # rotations made while all of them contended (the one in flight at most aside).
    time.sleep(max(0.0, started + seconds - time.monotonic()))
    in_window = refresh_grants(admin, tokens.biller_id) - before
    reports = [json.loads(process.communicate(timeout=seconds + 300)[0]) for process in workers]
    elapsed, cpu_after = time.monotonic() - started, os.times()
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
        "workers_cpu_s": cpu_after.children_user
        - cpu_before.children_user
        + cpu_after.children_system
        - cpu_before.children_system,
    }
    return in_window / seconds, run, checks, reports


def _ms(values: list[float]) -> str:
    if not values:
        return "-"
    ordered = sorted(values)
    median = ordered[len(ordered) // 2]
    p90 = ordered[min(len(ordered) - 1, int(0.9 * len(ordered)))]
    total, top = sum(values), ordered[-1]
    return (
        f"median {median * 1000:7.2f} ms, p90 {p90 * 1000:7.2f} ms, max {top * 1000:7.1f} ms, "
        f"sum {total:5.1f} s (n={len(values)})"
    )


def print_profile(reports: list[dict[str, object]]) -> None:
    """Per-part costs of a hold of the lock, the hand-over between holders, the waiting side."""
    holds = [h for r in reports for h in r.get("holds", [])]  # type: ignore[attr-defined]
    rotating = [h for h in holds if "refresh" in h]
    print(f"profile: {len(holds)} holds of the lock, {len(rotating)} with a refresh")
    for part in (*Profile.PARTS, "release", "held"):
        print(f"  {part:>14}: {_ms([h[part] for h in rotating if part in h])}")
    others = [h for h in holds if "refresh" not in h]
    if others:
        found = _ms([h["held"] for h in others])
        print(f"  holds without a refresh (a token found under the lock): {found}")
    ordered = sorted(holds, key=lambda h: h["taken"])
    gaps = [b["taken"] - a["released"] for a, b in zip(ordered, ordered[1:], strict=False)]
    print(f"  hand-over (lock free between a release and the next taking): {_ms(gaps)}")
    span = ordered[-1]["released"] - ordered[0]["taken"] if ordered else 0.0
    busy = sum(h["held"] for h in holds)
    print(f"  lock held {busy:.1f} s of {span:.1f} s ({busy / span:.0%})" if span else "")
    for part in ("read", "try_acquire", "peek"):
        spent = [x for r in reports for x in r.get("outside", {}).get(part, [])]  # type: ignore[attr-defined]
        total = sum(spent)
        print(f"  waiting side, {part}: {len(spent)} calls, {total:.1f} s in all, {_ms(spent)}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--processes", type=int, default=32)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument(
        "--profile", action="store_true", help="time each part of a rotation under the lock"
    )
    parser.add_argument("--worker", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.worker:
        worker(args.worker, args.seconds, args.profile)
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
        # In this process a save has measured 40-140 ms against 17-18 ms in the workers during
        # the same runs, for a reason not found: read the floors as upper bounds.
        floors = part_floors(admin, 5.0, Path(folder)) if args.profile else {}
        rate, run, checks, reports = shared_block(
            admin, args.processes, args.seconds, Path(folder) / "home", args.profile
        )
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
    print(
        f"workers' CPU {run['workers_cpu_s']:.1f} s in {run['whole_run_s']:.1f} s "
        f"({run['workers_cpu_s'] / max(1, checks['rotation']):.3f} s per rotation); "
        f"load average {' '.join(f'{x:.1f}' for x in os.getloadavg())}"
    )
    print("checks: " + ", ".join(f"{key}={value}" for key, value in checks.items()))
    if args.profile:
        print_profile(reports)
        print(
            "  floors, each part alone in a loop: "
            + ", ".join(f"{part} {cost * 1000:.2f} ms" for part, cost in floors.items())
            + f", refresh {1000 / floor:.2f} ms"
        )
    ok = checks["invalid_grant"] == 0 and checks["rotation"] == checks["refresh_grants"]
    return 0 if ok and not checks["workers_failed"] and not checks["workers_timed_out"] else 1


if __name__ == "__main__":
    sys.exit(main())
