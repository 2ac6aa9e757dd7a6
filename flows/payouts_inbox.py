"""The nightly's payout step: payout reports waiting in a biller's inbox folder, then the day's
reconciliation.

Each complete payout report waiting in the biller's inbox folder(s) (``payouts/``, or at the top
level when its content reads as a payout report) is claimed and processed exactly as the inbox
processes a file (checked against the files the ledger has seen, reconciled, put away with its
reports in ``processed/`` or ``failed/``). When no report was waiting, the biller's payouts are
reconciled against what the ledger holds, so the bank statements that arrived since move
yesterday's in-transit payouts to matched. Read-only toward the service: no approval is needed.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.client.schemas.objects import State

from flows.inbox import DETECTORS
from flows.payouts import reconcile_payouts
from tasks.common.outcome import COMPLETED, Outcome, end_run
from tasks.common.session import open_ledger
from tasks.common.workers import current_run_id
from tasks.inbox.layout import FileKind, default_root
from tasks.inbox.process import JobResult, raise_if_could_not_run
from tasks.inbox.settings import InboxSettings
from tasks.inbox.sweep import process_waiting

FAILED = {"rejected"}


def run_on_report(path: Path, block: str, settings: InboxSettings) -> JobResult:
    """The payout job on one report (the inbox's runner for ``payouts/``)."""
    state = reconcile_payouts(biller=block, payout_report=path, return_state=True)
    raise_if_could_not_run(state)
    name = str(state.name)
    failed = not state.is_completed() or name.lower() in FAILED
    attention = failed or name != "Reconciled"
    step = "read the exceptions file beside it" if attention else ""
    return JobResult(name.lower(), failed, state.message or name, next_step=step)


@flow(name="reconcile-waiting-payout-reports", log_prints=False)
def reconcile_waiting_payout_reports(biller: str, root: Path | None = None) -> State[Any]:
    """The payout reports waiting in one biller's inbox folder, each reconciled as the inbox
    does; without any, the biller's payouts reconciled against what the ledger holds.

    Args:
        biller: Name of the biller's credential block.
        root: The inbox root on the worker's disk; empty for `$BILLOPS_HOME/inbox`.
    """
    folder = root or default_root()
    with open_ledger() as ledger:
        done = process_waiting(
            folder,
            biller,
            ledger,
            kind=FileKind.PAYOUTS,
            detectors=DETECTORS,
            runner=run_on_report,
            run_id=current_run_id(),
        )
    if not done:
        state = reconcile_payouts(biller=biller, return_state=True)
        done.append(("(the ledger)", str(state.name).lower()))
    message = "payouts: " + ", ".join(f"{name} {status}" for name, status in done)
    get_run_logger().info(message)
    return end_run(Outcome(COMPLETED, message), data=done)
