"""Benchmark: a 100,000-row payment-request import through billops vs a bare httpx script.

Both sides do the same service work against the same sandbox in the same run: upload the same
chunk bytes (500 rows each, 4 uploads in flight), poll every job with the same backoff until it
is final, and read every job's items. billops additionally reads and validates the finance file,
keeps the ledger, runs Prefect tasks and writes the reports. The printed ratio is billops' end to
end time over the bare script's (goal <= 1.2x). Prefect's ephemeral server is started (by a
trivial flow) before timing: its ~13 s start-up is a one-off per worker, not per import.

Usage: ``python bench/bench_import.py [--rows 100000] [--chunk 500]``
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
_home = tempfile.mkdtemp(prefix="billops-bench-")
os.environ.update(
    PREFECT_HOME=f"{_home}/prefect",
    BILLOPS_HOME=f"{_home}/home",
    PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS="60",
    PREFECT_SERVER_ANALYTICS_ENABLED="false",
    PREFECT_LOGGING_LEVEL="WARNING",
)
os.environ.pop("PREFECT_API_URL", None)

import httpx  # noqa: E402

from bench.import_fixtures import BenchBiller, connect_biller, write_finance_file  # noqa: E402

FINAL = {"COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"}


def bare_import(biller: BenchBiller, chunks: list[bytes]) -> float:
    """The floor: upload, poll, read items with plain httpx; returns seconds."""
    started = time.perf_counter()
    with httpx.Client(base_url=biller.api, headers=biller.headers, timeout=60) as client:

        def upload(content: bytes) -> str:
            answer = client.post(
                "/payment_requests/bulk_import",
                params={"collectionMethod": "NONE", "deleteMissingPaymentRequests": "false"},
                files={"inputFile": ("chunk.csv", content, "text/csv")},
            )
            answer.raise_for_status()
            return str(answer.json()["jobId"])

        with ThreadPoolExecutor(max_workers=4) as pool:
            jobs = list(pool.map(upload, chunks))
        for job in jobs:
            delay = 0.5
            while client.get(f"/payment_requests/bulk_import/{job}").json()["status"] not in FINAL:
                time.sleep(delay)
                delay = min(delay * 2, 10.0)
            page = 0
            while True:
                body = client.get(
                    f"/payment_requests/bulk_import/{job}/items", params={"page": page, "size": 200}
                ).json()
                if page + 1 >= body["pagination"]["totalPages"]:
                    break
                page += 1
    return time.perf_counter() - started


def billops_import(biller: BenchBiller, file: Path, chunk: int) -> tuple[float, float]:
    """billops' wall seconds, and its own CPU seconds (this process: the sandbox runs apart)."""
    from flows.payment_requests import import_payment_requests

    started, cpu = time.perf_counter(), time.process_time()
    summary = import_payment_requests(
        file=file, biller=biller.block, dry_run=False, chunk_size=chunk
    )
    elapsed, cpu = time.perf_counter() - started, time.process_time() - cpu
    if summary.status != "imported":
        raise SystemExit(f"billops import ended {summary.status}: {summary.message}")
    return elapsed, cpu


@contextmanager
def sandbox_process(database: Path) -> Iterator[str]:
    """The sandbox in a process of its own, as the real service is: it does not share this
    process's interpreter lock with the side being measured."""
    command = [
        sys.executable,
        "-m",
        "billops.cli",
        "sandbox",
        "serve",
        "--port",
        "0",
        "--db",
        f"sqlite:///{database}",
    ]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline().strip()
        if not line.startswith("sandbox ready: "):
            raise SystemExit(f"sandbox did not start: {line!r}")
        yield line.removeprefix("sandbox ready: ")
    finally:
        server.terminate()
        server.wait(timeout=30)


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=100_000)
    parser.add_argument("--chunk", type=int, default=500)
    args = parser.parse_args()

    from prefect import flow

    from ledger import upgrade_database
    from ledger.settings import BillopsSettings
    from tasks.payment_requests import make_chunks

    flow(lambda: None, name="warm-up")()  # start Prefect's ephemeral server before timing
    Path(_home, "home").mkdir(parents=True, exist_ok=True)
    upgrade_database(BillopsSettings().ledger_database_url)  # what `billops setup` does
    with sandbox_process(Path(_home) / "sandbox.db") as root:
        bare_biller, ops_biller = connect_biller(root, "bare"), connect_biller(root, "billops")
        bare_file = write_finance_file(Path(_home) / "bare.csv", bare_biller, args.rows)
        ops_file = write_finance_file(Path(_home) / "billops.csv", ops_biller, args.rows)
        bare_rows = bare_biller.parse(bare_file)
        chunks = [c.content for c in make_chunks(bare_rows, size=args.chunk)]
        floor = bare_import(bare_biller, chunks)
        measured, cpu = billops_import(ops_biller, ops_file, args.chunk)
    print(f"rows: {args.rows}, chunk: {args.chunk}, chunks: {len(chunks)}")
    print(f"bare httpx script: {floor:8.1f} s")
    print(f"billops flow:      {measured:8.1f} s")
    print(f"ratio (billops / bare): {measured / floor:.2f}x  (goal <= 1.20x)")
    print(f"billops' own CPU: {cpu:.1f} s, {cpu / args.rows * 1000:.3f} s per 1,000 rows")
    return 0


if __name__ == "__main__":
    sys.exit(main())
