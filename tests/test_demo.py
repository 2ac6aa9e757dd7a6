"""``billops demo`` end to end, as `make demo` runs it on a fresh machine (its own PREFECT_HOME and
BILLOPS_HOME under the demo folder; a sandbox it starts and stops; Prefect's ephemeral server)."""

from __future__ import annotations

import csv
import os
import subprocess
import sys
from pathlib import Path

import pytest


@pytest.mark.slow
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
    assert "→ Applied: collection paused for" in " ".join(out.split())  # the failing payer
    flat = " ".join(out.split())
    assert "downloads its bank statement" in flat and "recorded:" in flat  # the bank step
    assert "awaiting a person:" in flat
    assert "Reconciled:" in flat and "deduction: takes back payment" in flat  # the payout step
    assert list(folder.glob("payouts/*.reconciliation.png"))
    # The file went through the inbox: taken by the watcher, put away with its reports.
    [report] = (folder / "inbox").glob("*/processed/*/payment-requests.report.csv")
    with report.open(newline="", encoding="utf-8-sig") as handle:
        outcomes = [row["outcome"] for row in csv.DictReader(handle)]
    assert outcomes.count("CREATED") == 16 and outcomes.count("REJECTED") == 5
    assert (report.parent / "payment-requests.failed.csv").exists()
    assert (report.parent / "payment-requests.csv.inbox.txt").exists()
    # A webhook from the sandbox reached the receiver and its trigger started a run.
    assert "arrived at the receiver" in out and "its trigger started run" in out
    assert (folder / "prefect").is_dir() and (folder / "home" / "ledger.db").exists()
