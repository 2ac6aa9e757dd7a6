"""Benchmark: a million-row payment-request file through billops' dry run, against pandas.

billops' side is what a dry run does with a file: read it (encodings, delimiter, header), check
every row (customers, £ amounts, UK dates, references, derived externalIds, ceilings) and write
the report and failed-rows file next to it. The floor is ``pandas.read_csv`` of the same file,
measured in the same run. Each side runs in a process of its own, so each peak RSS is its own.
Goals: billops ≤ 10× the floor, peak RSS ≤ 1 GB. The service is not involved (a dry run sends
nothing); the ledger's copy of the biller's payment requests is empty, as for a new biller.

The machine is shared, so each side repeats its step ``--repeat`` times in its process and the
best CPU and wall seconds count (as ``bench_bank.py`` does); the first, cold round is printed too.
Every round starts as the first did: the previous round's reports are removed before its clock.
Imports happen before the clock starts, Polars' included (a worker has them loaded; billops loads
Polars on its first derived externalId).

Usage: ``python bench/bench_dry_run.py [--rows 1000000] [--repeat 3]``
"""

from __future__ import annotations

import argparse
import json
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.import_fixtures import local_customers, write_finance_file  # noqa: E402

GOAL_RSS_MB = 1024


def _peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024  # KiB on Linux


def _best(rounds: list[dict[str, float]]) -> dict[str, float]:
    """Each figure's best (lowest) over the rounds, the first round's CPU, and the peak RSS."""
    best = {key: min(r[key] for r in rounds) for key in rounds[0]}
    best["first_cpu"] = rounds[0]["cpu"]
    best["peak_mb"] = _peak_mb()
    return best


def pandas_side(file: Path, repeat: int) -> dict[str, float]:
    import pandas as pd

    rounds = []
    for _ in range(repeat):
        started, cpu = time.perf_counter(), time.process_time()
        frame = pd.read_csv(file)
        elapsed = time.perf_counter() - started
        assert len(frame) > 0
        rounds.append({"seconds": elapsed, "cpu": time.process_time() - cpu})
        del frame
    return _best(rounds)


def billops_side(file: Path, repeat: int) -> dict[str, float]:
    from decimal import Decimal

    import polars  # noqa: F401  (loaded by the first derived externalId; see the docstring)
    import polars_hash  # noqa: F401

    import tasks.payment_requests.reports  # noqa: F401
    from tasks.payment_requests import CustomerDirectory, ImportRules

    customers = CustomerDirectory.from_records((i, None, n) for i, n in local_customers())
    # A biller that bills this much in one file has raised its per-file ceiling.
    rules = ImportRules(max_file_amount=Decimal("1000000000"))
    return _best([_billops_round(file, customers, rules) for _ in range(repeat)])


def _billops_round(file: Path, customers: Any, rules: Any) -> dict[str, float]:
    from datetime import date

    from tasks.payment_requests import ParsedFile, read_payment_request_file, validate_table
    from tasks.payment_requests.report_files import failed_rows_path, report_path
    from tasks.payment_requests.reports import row_outcomes, write_report_files

    # The previous round's reports go before the clock starts: replacing an 86 MB report makes
    # the kernel free its pages inside the measured round (35 ms), which the first round, like a
    # first dry run of a file, does not pay.
    for earlier in (report_path(file), failed_rows_path(file)):
        earlier.unlink(missing_ok=True)
    started, cpu = time.perf_counter(), time.process_time()
    # parse_payment_request_file's two steps, timed apart.
    loaded = read_payment_request_file(file)
    read_cpu = time.process_time()
    good, problems, notes = validate_table(
        loaded.table, customers=customers, today=date.today(), biller="bench-biller", rules=rules
    )
    check_cpu = time.process_time()
    parsed = ParsedFile(
        path=file,
        sha256=loaded.sha256,
        encoding=loaded.encoding,
        sheet=loaded.sheet,
        table=loaded.table,
        good=good,
        problems=problems,
        notes=notes,
    )
    outcomes = row_outcomes(parsed, {}, dry_run=True, sent=False)
    report = write_report_files(parsed, outcomes)
    elapsed = time.perf_counter() - started
    done_cpu = time.process_time()
    assert report.by_status.get("WOULD_IMPORT") == len(parsed.good), report.by_status
    return {
        "seconds": elapsed,
        "cpu": done_cpu - cpu,
        "read_cpu": read_cpu - cpu,
        "check_cpu": check_cpu - read_cpu,
        "report_cpu": done_cpu - check_cpu,
        "rows": float(parsed.total_rows),
        "rejected": float(report.rejected),
    }


def _in_child(side: str, file: Path, repeat: int) -> dict[str, float]:
    done = subprocess.run(
        [sys.executable, __file__, "--side", side, "--file", str(file), "--repeat", str(repeat)],
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise SystemExit(f"{side} side failed:\n{done.stdout}{done.stderr}")
    result: dict[str, float] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rows", type=int, default=1_000_000)
    parser.add_argument("--side", choices=["pandas", "billops"])
    parser.add_argument("--file", type=Path)
    parser.add_argument("--repeat", type=int, default=3, help="rounds per side; the best counts")
    args = parser.parse_args()
    if args.side is not None:
        side = pandas_side if args.side == "pandas" else billops_side
        print(json.dumps(side(args.file, args.repeat)))
        return 0
    with tempfile.TemporaryDirectory(prefix="billops-bench-dry-run-") as folder:
        file = write_finance_file(Path(folder) / "million.csv", local_customers(), args.rows)
        size_mb = file.stat().st_size / 1e6
        floor = _in_child("pandas", file, args.repeat)
        measured = _in_child("billops", file, args.repeat)
    ratio = measured["seconds"] / floor["seconds"]
    print(f"rows: {args.rows:,} ({size_mb:.0f} MB file); best of {args.repeat} rounds per side")
    for label, side in (("pandas.read_csv", floor), ("billops read+check+report", measured)):
        print(
            f"{label + ':':<28}{side['seconds']:7.2f} s   CPU {side['cpu']:6.2f} s   "
            f"peak RSS {side['peak_mb']:6.0f} MB   (first round CPU {side['first_cpu']:.2f} s)"
        )
    print(
        f"billops CPU by step: read {measured['read_cpu']:.2f} s, check {measured['check_cpu']:.2f}"
        f" s, report {measured['report_cpu']:.2f} s"
    )
    cpu_ratio = measured["cpu"] / floor["cpu"]
    print(f"ratio (billops / pandas): {ratio:.2f}x wall, {cpu_ratio:.2f}x CPU  (goal <= 10x)")
    print(f"billops CPU per 1,000 rows: {measured['cpu'] / args.rows * 1e6:.2f} ms")
    print(f"billops peak RSS: {measured['peak_mb']:.0f} MB  (goal <= {GOAL_RSS_MB} MB)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
