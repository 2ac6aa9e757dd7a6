"""Where a killed worker loses a rotating refresh token: the instants of every rotation, from the
request leaving the worker to the new token set being safe in the journal
(``docs/credentials.md`` §3).

    .venv/bin/python bench/bench_refresh_window.py [--workers 3] [--seconds 30]

Workers as in the crash test (``tests/blocks/test_kill.py``: ``GET /biller`` every 50 ms through
one shared block, 2-second access tokens) record, per rotation, when the refresh request was
handed to httpx, when the answer's headers arrived, when the journal write began, when its bytes
were written (``fsync`` entered: from then on a ``kill -9`` keeps them, the kernel has them) and
when the ``fsync`` returned. The sandbox, in a process of its own, records the instant it
committed each rotation. A rotation is lost to a kill anywhere between the request reaching the
service and the journal's bytes being written; the script prints how that window splits:

- *before the commit*: the request is at the service (queued, then processed), which finishes it
  whether the worker lives or not: only the service can close this part;
- *commit to answer*: the service has rotated and is still answering;
- *ours*: from the answer's arrival to the journal's bytes (parsing, building the token set, the
  journal's file calls).

The instrumentation wraps functions only in the script's own processes (the sandbox's rotation,
``os.fsync`` and the journal's record in the workers); what runs is the product's code.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
os.environ.setdefault("PREFECT_HOME", tempfile.mkdtemp(prefix="billops-bench-prefect-"))
os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


def sandbox(database: str, commits: str) -> None:
    """Serve a sandbox (2-second tokens) that appends the instant of every committed rotation."""
    from sqlalchemy import event
    from sqlalchemy.orm import Session

    import sandbox.oauth.tokens as tokens
    from billops.cli import app

    out = open(commits, "a", buffering=1)  # noqa: SIM115 - open for the process's life
    rotate = tokens.rotate_refresh_token

    def flagged(session: Session, **kwargs: Any) -> Any:
        answer = rotate(session, **kwargs)
        session.info["rotated"] = True
        return answer

    @event.listens_for(Session, "after_commit")
    def committed(session: Session) -> None:
        if session.info.pop("rotated", False):
            out.write(f"{time.time():.6f}\n")

    tokens.rotate_refresh_token = flagged
    app(["sandbox", "serve", "--port", "0", "--db", database, "--access-token-ttl", "2"])


def worker(name: str, seconds: float, out: str) -> None:
    """GET /biller every 50 ms through the block, timing each rotation's steps."""
    import httpx

    import billing_api._recovery as recovery
    from billing_api import BillingClient, OAuthClient, RefreshingAuth, TokenManager
    from billing_api.oauth import ClientCredentials
    from blocks import BillerCredentials
    from blocks._journal import default_journal

    marks: dict[str, float] = {}
    fsync = os.fsync

    def timed_fsync(fd: int) -> None:
        marks.setdefault("written", time.time())
        fsync(fd)

    recovery.os.fsync = timed_fsync  # type: ignore[attr-defined]
    journal = default_journal()
    record = journal.record

    def timed_record(store_name: str, tokens: Any) -> None:
        marks["journal"] = time.time()
        marks.pop("written", None)
        record(store_name, tokens)
        marks["synced"] = time.time()

    journal.record = timed_record  # type: ignore[method-assign]

    def on_request(request: httpx.Request) -> None:
        marks.clear()
        marks["sent"] = time.time()

    def on_response(response: httpx.Response) -> None:
        marks["answered"] = time.time()

    block = BillerCredentials.load_named(name)
    http = httpx.Client(event_hooks={"request": [on_request], "response": [on_response]})
    oauth = OAuthClient(
        block.api_url,
        ClientCredentials(block.client_id, block.client_secret.get_secret_value()),
        http_client=http,
    )
    rows: list[dict[str, float]] = []

    def after_grant(tokens: Any) -> None:
        rows.append({"rotation": tokens.rotation, **marks})

    manager = TokenManager(block, oauth, journal=journal, after_grant=after_grant)
    deadline = time.monotonic() + seconds
    with BillingClient(block.api_url, RefreshingAuth(manager), max_retries=0) as client:
        while time.monotonic() < deadline:
            client.request("biller.retrieve")
            time.sleep(0.05)
    Path(out).write_text(json.dumps(rows))


def _percentiles(values: list[float]) -> str:
    if not values:
        return "none"
    ordered = sorted(values)
    pick = [ordered[min(len(ordered) - 1, int(q * len(ordered)))] for q in (0.5, 0.9, 0.99)]
    return (
        f"min {ordered[0] * 1000:6.2f}  median {pick[0] * 1000:6.2f}  p90 {pick[1] * 1000:6.2f}  "
        f"p99 {pick[2] * 1000:6.2f}  max {ordered[-1] * 1000:6.2f}  mean "
        f"{statistics.fmean(values) * 1000:6.2f} ms"
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--workers", type=int, default=3)
    parser.add_argument("--seconds", type=float, default=30.0)
    parser.add_argument("--sandbox", nargs=2, help=argparse.SUPPRESS)
    parser.add_argument("--worker", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.sandbox:
        sandbox(*args.sandbox)
        return 0
    if args.worker:
        worker(args.worker[0], args.seconds, args.worker[1])
        return 0

    from prefect.settings import PREFECT_API_URL
    from prefect.testing.utilities import prefect_test_harness

    from tests.support.credentials import refresh_grants, save_connected_block, unique_name
    from tests.support.sandbox_admin import SandboxAdmin

    with tempfile.TemporaryDirectory() as folder, prefect_test_harness(server_startup_timeout=60):
        commits = Path(folder) / "commits.txt"
        command = [sys.executable, __file__, "--sandbox", f"sqlite:///{folder}/sbx.db"]
        server = subprocess.Popen([*command, str(commits)], stdout=subprocess.PIPE, text=True)
        try:
            assert server.stdout is not None
            line = server.stdout.readline().strip()
            admin = SandboxAdmin(line.removeprefix("sandbox ready: "))
            name = unique_name("window")
            _, tokens = save_connected_block(admin, name, with_access_token=False)
            env = {
                **os.environ,
                "PREFECT_API_URL": str(PREFECT_API_URL.value()),
                "PYTHONPATH": str(ROOT),
                "BILLOPS_HOME": f"{folder}/home",
            }
            env.pop("BILLOPS_LEDGER_URL", None)
            outs = [f"{folder}/w{i}.json" for i in range(args.workers)]
            base = [sys.executable, __file__, "--seconds", str(args.seconds), "--worker", name]
            started = os.times()
            workers = [subprocess.Popen([*base, out], env=env) for out in outs]
            for process in workers:
                process.wait()
            cpu = os.times()
            granted = refresh_grants(admin, tokens.biller_id)
            admin.close()
        finally:
            server.terminate()
            server.wait(30)
        stamps = [float(x) for x in commits.read_text().split()]
        rows = sorted(
            (row for out in outs for row in json.loads(Path(out).read_text())),
            key=lambda r: r["rotation"],
        )
    spent = cpu.children_user - started.children_user
    spent += cpu.children_system - started.children_system
    print(f"rotations journaled {len(rows)}, committed {len(stamps)}, granted {granted}")
    print(f"load average {os.getloadavg()}, the workers' CPU {spent:.1f} s")
    parts: dict[str, list[float]] = {k: [] for k in ("queue", "reply", "ours", "write", "sync")}
    for row in rows:
        commit = stamps[row["rotation"] - 1]
        parts["queue"].append(commit - row["sent"])
        parts["reply"].append(row["answered"] - commit)
        parts["ours"].append(row["written"] - row["answered"])
        parts["write"].append(row["written"] - row["journal"])
        parts["sync"].append(row["synced"] - row["written"])
    print("request handed to httpx -> service committed:", _percentiles(parts["queue"]))
    print("service committed -> answer at the worker:   ", _percentiles(parts["reply"]))
    print("answer at the worker -> journal bytes written:", _percentiles(parts["ours"]))
    print("  of which the journal's file calls:         ", _percentiles(parts["write"]))
    print("journal fsync (a kill here keeps the record): ", _percentiles(parts["sync"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
