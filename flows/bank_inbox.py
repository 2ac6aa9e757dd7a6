"""The nightly's bank step: bank statements waiting in a biller's inbox folder.

For machines where neither ``billops inbox watch`` nor the ``inbox-scan`` deployment takes
dropped files as they come, the nightly run takes, for each biller, the bank statements waiting
in its inbox folder(s) (the folders whose ``inbox.yaml`` names its credential block, or which are
named after it): each is claimed and processed exactly as the inbox processes a file (checked
against the files the ledger has seen, put away with its reports in ``processed/`` or
``failed/``). Nobody is there to approve, so exact, full matches are recorded only where the
biller's bank settings allow it (``auto_apply_exact``, or the folder's ``bank_apply_exact``);
everything else is reported for a person, as a dry run.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.client.schemas.objects import State

from flows.bank_payments import import_bank_payments
from flows.inbox import DETECTORS
from tasks.bank_payments.settings import load_settings
from tasks.common.outcome import COMPLETED, Outcome, end_run
from tasks.common.session import open_ledger
from tasks.common.workers import current_run_id
from tasks.inbox.layout import FileKind, default_root
from tasks.inbox.process import JobResult, raise_if_could_not_run, raise_if_in_doubt
from tasks.inbox.settings import InboxSettings
from tasks.inbox.sweep import process_waiting

FAILED = {"rejected", "approval refused", "approval expired"}


def _bank(path: Path, block: str, settings: InboxSettings) -> JobResult:
    """Run the bank job on one statement, unattended (see the module docstring)."""
    allowed = settings.bank_apply_exact or load_settings(block).auto_apply_exact
    state = import_bank_payments(
        file=path, biller=block, dry_run=not allowed, exact_only=allowed, return_state=True
    )
    raise_if_could_not_run(state)
    raise_if_in_doubt(state)  # payments in doubt: the file stays for the retry to resume them
    name = str(state.name)
    failed = not state.is_completed() or name.lower() in FAILED
    step = "read the report and review files beside it" if failed or not allowed else ""
    return JobResult(name.lower(), failed, state.message or name, next_step=step)


@flow(name="import-waiting-bank-statements", log_prints=False)
def import_waiting_bank_statements(biller: str, root: Path | None = None) -> State[Any]:
    """The bank statements waiting in one biller's inbox folder, each processed as the inbox
    does; exact, full matches recorded only where the biller allows it unattended.

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
            kind=FileKind.BANK,
            detectors=DETECTORS,
            runner=_bank,
            run_id=current_run_id(),
        )
    message = f"{len(done)} bank statement(s) from the inbox" + (
        ": " + ", ".join(f"{name} {status}" for name, status in done) if done else ""
    )
    get_run_logger().info(message)
    return end_run(Outcome(COMPLETED, message), data=done)
