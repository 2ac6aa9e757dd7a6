"""Refresh what a biller is owed: the open-items snapshot a bank statement is planned against.

Started by the ``refresh-open-items`` deployment's trigger when the service says a payment or an
invoice changed (``docs/service.md §11.5 Event names``): the next statement's plan then starts
from what is owed now. No webhook is needed for that to be right: a statement's own run refreshes
the snapshot first in any case; the trigger only keeps it fresh between runs.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from prefect import flow, get_run_logger
from prefect.client.schemas.objects import State

from tasks.bank_payments import pounds
from tasks.bank_payments._owed import OpenItem  # the task's own result type
from tasks.bank_payments.steps import keep_open_items_task
from tasks.common.outcome import COMPLETED, Outcome, end_run
from tasks.common.reports import artifact_key, publish_summary
from tasks.common.session import open_biller
from tasks.common.workers import current_run_id


def summary(items: Sequence[OpenItem]) -> str:
    """One line: how many open items of each kind and the money due on them."""
    invoices = sum(1 for item in items if item.kind == "invoice")
    due = pounds(sum(item.due for item in items))
    requests = len(items) - invoices
    return (
        f"{len(items)} open items ({invoices} invoices, {requests} payment requests), £{due:,} due"
    )


@flow(name="refresh-open-items", log_prints=False)
def refresh_open_items(biller: str) -> State[Any]:
    """Refresh what the biller is owed (its open invoices and payment requests) and keep it in
    the ledger as the snapshot its next bank statement is matched against. Reads the service,
    never writes to it.

    Args:
        biller: The name of the biller's credential block.
    """
    with open_biller(biller) as session:
        items = keep_open_items_task(session, current_run_id())
    message = summary(items)
    get_run_logger().info("%s: %s", biller, message)
    publish_summary(
        [f"# Open items of {biller}", "", message], key=artifact_key("open-items", biller)
    )
    return end_run(Outcome(COMPLETED, message), data=len(items))
