"""The demo's bank step: after the simulated days, the biller downloads its business account's
statement (the sandbox's export, in Barclays' layout) and imports it.

Before the days pass, the biller sends a few invoices with a payment link (not collected by
direct debit), so its customers have something to pay by bank transfer in the meantime; how each
is paid (in full, in part, too much, with a mistyped number, ...) is the sandbox's draw.

The demo acts as the finance team: a dry run first (what would be recorded, what waits for a
person), then the recording approved at the terminal as a person would (``--approve-as``). The
sandbox's clock runs ahead of the real one, so the statement is read as of the sandbox's day.
"""

from __future__ import annotations

import csv
from datetime import date, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import httpx
from rich.console import Console

LAYOUT = "barclays"
DAYS_SHOWN = 30


TRANSFER_INVOICES = 11


def send_invoices_paid_by_transfer(block: str, console: Console) -> None:
    """Invoices with a payment link for the customer of the biller's first overdue invoice (one
    who pays by transfer, not by card), before the demo's days pass."""
    from blocks import BillerCredentials

    client = BillerCredentials.load_named(block).get_client()
    try:
        overdue = next(iter(client.invoices.list(statuses=["OVERDUE"])), None)
        customer = overdue.customer if overdue is not None else None
        if customer is None:
            customer = next(iter(client.customers.list()))
        for n in range(TRANSFER_INVOICES):
            item = {"description": "Call-out and parts", "quantity": 1, "unitAmount": 140 + 35 * n}
            made = client.invoices.create(customer=str(customer.id), items=[item])
            client.invoices.activate(str(made.id), collection_method="ONE_TIME_PAYMENT")
    finally:
        client.close()
    console.print(
        f"   {block} sends {TRANSFER_INVOICES} invoices with a payment link to {customer.name}"
    )


def _review(path: Path) -> list[dict[str, str]]:
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def sandbox_today(root: str) -> date:
    """The sandbox's day (London), which runs ahead of the real one once days have passed."""
    now = datetime.fromisoformat(httpx.get(f"{root}/_sandbox/clock", timeout=30).json()["now"])
    return now.astimezone(ZoneInfo("Europe/London")).date()


def import_the_bank_statement(
    root: str,
    biller_id: str,
    block: str,
    folder: Path,
    console: Console,
    today: date | None = None,
) -> Any:
    """Export the last 30 days of the biller's statement, preview it, record it; returns the
    recording run's result."""
    from flows.bank_payments import import_bank_payments
    from tasks.common.approval import approved_from_cli

    today = today or sandbox_today(root)
    start = today - timedelta(days=DAYS_SHOWN)
    answer = httpx.get(
        f"{root}/_sandbox/exports/bank_statement.csv",
        params={
            "billerId": biller_id,
            "from": start.isoformat(),
            "to": today.isoformat(),
            "layout": LAYOUT,
        },
        timeout=60,
    )
    answer.raise_for_status()
    path = folder / "bank-statement.csv"
    path.write_bytes(answer.content)
    lines = answer.content.count(b"\n") - 1
    console.print(
        f"8. {block} downloads its bank statement ({LAYOUT}, {lines} lines, "
        f"{start:%d/%m}–{today:%d/%m/%Y}) and imports it:"
    )
    preview: Any = import_bank_payments(file=path, biller=block, as_of=today)
    console.print(f"   dry run: {preview.message}", highlight=False)
    with approved_from_cli("Demo Operator", "the month's bank statement"):
        done: Any = import_bank_payments(file=path, biller=block, dry_run=False, as_of=today)
    console.print(
        f"   approved as 'Demo Operator' → {done.outcome}: {done.message}", highlight=False
    )
    recorded = [r for r in done.recorded if r.state == "confirmed" and r.sent_now]
    console.print(f"   recorded: {len(recorded)} payment(s)")
    for payment in recorded:
        console.print(f"     • line {payment.line}: £{payment.amount} → {payment.number}")
    waiting = _review(Path(done.review))
    console.print(f"   awaiting a person: {len(waiting)} line(s)")
    for row in waiting:
        guess = f" → suggested {row['suggestions']}" if row["suggestions"] else ""
        console.print(
            f"     • line {row['line']}: £{row['left_for_review']} of £{row['amount']} from "
            f"{row['payer']} ({row['outcome']}){guess}",
            highlight=False,
        )
    console.print(f"   report: {done.report}", highlight=False)
    console.print(f"   for review: {done.review}", highlight=False)
    return done
