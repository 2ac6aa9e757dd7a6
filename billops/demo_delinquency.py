"""The demo's delinquency step: days pass in the sandbox, the failing test payer's direct debit
bounces, and the job's plan pauses that customer's collection and leaves the good payers alone.

The demo acts as the operator: it reads the plan (a dry run), then approves it as a person would
at the terminal (``--approve-as``). The policy is the demo's own, one line stricter than the
shipped default (one bounce is enough), so the demo need not wait for a second bounce.
"""

from __future__ import annotations

import csv
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from rich.console import Console

DAYS = 20  # long enough for the failing payer's first debit to be submitted and refused
DEMO_POLICY = """\
# The demo's policy: pause direct-debit collection after one failed collection.
name: demo
states:
  - name: paused
    enter:
      all: [{unpaid_amount_at_least: "1.00"}, {failed_attempts: 1}]
    leave:
      all: [{overdue_amount_below: "1.00"}, {mandate_status: [ACTIVE, PENDING]}]
    min_days: 7
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
"""


def pause_the_failing_payer(root: str, block: str, folder: Path, console: Console) -> list[str]:
    """Advance the sandbox, plan, approve, apply; returns the names of the customers paused."""
    from flows.delinquency import pause_delinquent_customers
    from tasks.common.approval import approved_from_cli

    answer = httpx.post(f"{root}/_sandbox/clock/advance", json={"days": DAYS}, timeout=120)
    answer.raise_for_status()
    now = datetime.fromisoformat(httpx.get(f"{root}/_sandbox/clock", timeout=30).json()["now"])
    today = now.astimezone(ZoneInfo("Europe/London")).date()
    console.print(f"7. {DAYS} days pass in the sandbox ({today:%d/%m/%Y}): debits are collected…")
    policy = folder / "delinquency-policy.yaml"
    policy.write_text(DEMO_POLICY, encoding="utf-8")
    plan: Any = pause_delinquent_customers(biller=block, policy=policy, as_of=today)
    rows = _rows(plan.report)
    console.print(f"   the plan for {block} (a dry run: {plan.report.name}):")
    for row in rows:
        console.print(
            f"     • {row['customer']}: {row['action']} {row['payment_request']} "
            f"(£{row['amount']}) — {row['rule']}",
            highlight=False,
        )
    with approved_from_cli("Demo Operator", "the failing test payer's debit bounced"):
        done: Any = pause_delinquent_customers(
            biller=block, policy=policy, dry_run=False, as_of=today
        )
    paused = sorted({r["customer"] for r in _rows(done.report) if r["outcome"] == "done"})
    console.print(
        f"   approved as 'Demo Operator' → {done.state}: collection paused for "
        f"{', '.join(paused) or 'nobody'}; every other customer left alone",
        highlight=False,
    )
    console.print(f"   report: {done.report}", highlight=False)
    return paused


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))
