"""``billops demo`` end to end, as `make demo` runs it on a fresh machine (its own PREFECT_HOME and
BILLOPS_HOME under the demo folder; a sandbox it starts and stops; Prefect's ephemeral server)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path


def test_the_demo_runs_end_to_end_and_leaves_reports(tmp_path: Path) -> None:
    folder = tmp_path / "demo"
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PREFECT_", "BILLOPS_"))}

    done = subprocess.run(
        [sys.executable, "-m", "billops.cli", "demo", "--folder", str(folder)],
        env=env,
        capture_output=True,
        text=True,
        timeout=300,
    )

    assert done.returncode == 0, done.stdout + done.stderr
    out = done.stdout
    assert "logged in to" in out and "consent approved" in out
    assert "created: 16 payment requests; rejected: 5 rows" in out
    assert "billops ui --home" in out
    report = folder / "inbox" / "payment-requests.report.csv"
    with report.open(newline="", encoding="utf-8-sig") as handle:
        outcomes = [row["outcome"] for row in csv.DictReader(handle)]
    assert outcomes.count("CREATED") == 16 and outcomes.count("REJECTED") == 5
    assert (folder / "inbox" / "payment-requests.failed.csv").exists()
    assert (folder / "prefect").is_dir() and (folder / "home" / "ledger.db").exists()
