"""A platform's night: N billers (200 by default) on a real Prefect server with 1, then 2,
process workers.

The topology is the README's "A platform's night", with local processes: ``prefect server start``
(on PostgreSQL when ``--server-db`` names one, ``postgresql+asyncpg://...``; else SQLite), the
ledger (``--ledger-url``, default SQLite), the ``nightly-biller`` deployment and its ``billops``
process pool, ``prefect worker start`` processes; the sandbox serves in this process. Each biller
has a payment-request file, a bank statement and a delinquency policy waiting
(``tests/support/nightly_world.py``). The coordinator (``flows/nightly.py``) runs the night on
the workers, first with one worker, then — for a second set of billers, as fresh — with two.

Prints the night's duration for each, the ratio (goal: 2 workers ≤ 0.6× of 1 on the 2-core
development machine), and Prefect's overhead per biller against the jobs' own time: a child run's
time on the server (Running to its end, as the worker's process saw it) minus the time the jobs
themselves took (the night's own clock, ``BillerResult.seconds``), and the whole night's time per
biller; and where the CPU went (the workers with their flow-run processes, the Prefect server,
this process's sandbox and coordinator) with how busy the machine's cores were, which says
whether a second worker on the same machine had any core to use.
``python bench/bench_nightly.py [--billers N] [--rows R] [--limit L] [--server-db URL]``.
"""

from __future__ import annotations

import argparse
import os
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from statistics import mean
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


TICK = os.sysconf("SC_CLK_TCK")


def _machine_busy() -> tuple[float, float]:
    """(busy, all) core-seconds of the whole machine so far, from ``/proc/stat``."""
    fields = [int(v) for v in Path("/proc/stat").read_text().split("\n", 1)[0].split()[1:9]]
    idle = fields[3] + fields[4]  # idle and iowait
    return (sum(fields) - idle) / TICK, sum(fields) / TICK


def _tree_cpu(pid: int) -> float:
    """CPU seconds of ``pid`` and every process below it, those already reaped included (a
    worker's finished flow-run processes are in its children's times once it has waited)."""
    from tests.support.platform import descendants

    total = 0.0
    for each in [pid, *descendants(pid)]:
        try:
            stat = Path(f"/proc/{each}/stat").read_text().rsplit(")", 1)[1].split()
        except OSError:
            continue
        total += sum(int(v) for v in stat[11:15]) / TICK  # utime stime cutime cstime
    return total


def _cpu(running: Any) -> dict[str, float]:
    """CPU seconds so far: the workers with their flow runs, the Prefect server, this process
    (the sandbox's threads and the coordinator), and the machine's busy and total."""
    busy, whole = _machine_busy()
    return {
        "workers": sum(_tree_cpu(w.pid) for w in running.workers.values()),
        "server": _tree_cpu(running.server.pid),
        "here": sum(os.times()[:2]),
        "busy": busy,
        "whole": whole,
    }


def _night(running: Any, blocks: list[str]) -> tuple[float, list[Any]]:
    from flows.nightly import nightly

    started = time.monotonic()
    with running.api():
        state = nightly(billers=blocks, run_billers="workers", return_state=True)
    seconds = time.monotonic() - started
    results = state.result(raise_on_failure=False) if state.is_completed() else []
    if not state.is_completed():
        print(f"  the night ended {state.name}: {state.message}")
    return seconds, list(results or [])


def _overhead(url: str, blocks: set[str], results: list[Any]) -> tuple[float, float]:
    """(mean child run time on the server, mean jobs' own time), seconds."""
    from tests.support.nightly_world import night_runs

    spans = []
    for run in night_runs(url):
        if run["parameters"].get("biller") in blocks and run["start_time"] and run["end_time"]:
            start = datetime.fromisoformat(run["start_time"])
            end = datetime.fromisoformat(run["end_time"])
            spans.append((end - start).total_seconds())
    jobs = [r.seconds for r in results]
    return (mean(spans) if spans else 0.0), (mean(jobs) if jobs else 0.0)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--billers", type=int, default=200)
    parser.add_argument("--rows", type=int, default=5, help="payment requests per biller's file")
    parser.add_argument("--limit", type=int, default=2, help="flow runs at once per worker")
    parser.add_argument("--server-db", default=os.environ.get("BILLOPS_BENCH_SERVER_DB"))
    parser.add_argument("--ledger-url", default=os.environ.get("BILLOPS_BENCH_LEDGER_URL"))
    args = parser.parse_args()
    os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="bench-nightly-prefect-"))

    from tests.support.nightly_world import night_platform, whole_biller
    from tests.support.sandbox_admin import running_sandbox

    with tempfile.TemporaryDirectory(prefix="bench-nightly-") as folder:
        root = Path(folder)
        with (
            running_sandbox(f"sqlite:///{root / 'sandbox.db'}") as admin,
            night_platform(
                root,
                workers=1,
                worker_limit=args.limit,
                ledger_url=args.ledger_url,
                server_database_url=args.server_db,
            ) as running,
        ):
            home = Path(running.env["BILLOPS_HOME"])
            made = time.monotonic()
            with running.api():
                sets = [
                    [
                        whole_biller(admin, home, 10_000 * s + n, args.rows)
                        for n in range(args.billers)
                    ]
                    for s in (1, 2)
                ]
            print(f"{2 * args.billers} billers made in {time.monotonic() - made:.0f} s")
            figures = []
            for count, billers in zip((1, 2), sets, strict=True):
                if count == 2:
                    running.start_worker("w2", limit=args.limit)
                    running.wait_for_workers()
                blocks = [b.block for b in billers]
                before = _cpu(running)
                seconds, results = _night(running, blocks)
                spent = {k: v - before.get(k, 0.0) for k, v in _cpu(running).items()}
                ok = sum(r.ok for r in results)
                child, jobs = _overhead(running.url, set(blocks), results)
                figures.append(seconds)
                print(
                    f"{count} worker(s): {args.billers} billers in {seconds:.1f} s "
                    f"({seconds / args.billers:.2f} s per biller; {ok} ok); child run "
                    f"{child:.1f} s on average, jobs' own time {jobs:.1f} s: Prefect's overhead "
                    f"{child - jobs:.1f} s per biller ({(child - jobs) / jobs if jobs else 0:.0%} "
                    "of the jobs' time, process start not counted)"
                )
                print(
                    f"  the machine's {os.cpu_count()} cores were busy "
                    f"{spent['busy'] / spent['whole']:.0%} of the night; CPU per biller: "
                    f"workers and their flow runs {spent['workers'] / args.billers:.1f} s, "
                    f"Prefect server {spent['server'] / args.billers:.1f} s, sandbox and "
                    f"coordinator {spent['here'] / args.billers:.1f} s"
                )
    ratio = figures[1] / figures[0]
    verdict = "met" if ratio <= 0.6 else "NOT met"
    print(f"ratio 2 workers / 1 worker: {ratio:.2f}x (goal <= 0.6x: {verdict})")


if __name__ == "__main__":
    main()
