"""The inbox: one flow run per dropped file, and a scan for machines where no watcher runs.

``process-inbox-file`` takes one file in ``processing/`` (under its lock), finds its kind, checks
its content against the ledger, runs its job as a subflow and puts it away with its reports.
``inbox-scan`` resumes files whose holder died and takes every complete waiting file, one
``process-inbox-file`` run each (through its deployment when ``via_deployment`` names one, with
an idempotency key from the file's content, so two scanners or watchers start one run).
"""

from __future__ import annotations

import threading
import time
from pathlib import Path
from typing import Any

from prefect import flow, get_run_logger
from prefect.client.schemas.objects import State
from prefect.states import Completed, Failed

from flows.bank_payments import import_bank_payments
from flows.payment_requests import import_payment_requests
from flows.payouts import reconcile_payouts
from tasks.bank_payments import StatementRefused, UnknownLayout, detect_layout
from tasks.bank_payments.settings import load_settings as load_bank_settings
from tasks.common.finance_files import InputFileError
from tasks.common.session import open_ledger
from tasks.common.workers import current_run_id
from tasks.inbox.claim import Claimed, resume
from tasks.inbox.classify import Detector
from tasks.inbox.layout import SETTLE_SECONDS, FileKind, Waiting, default_root
from tasks.inbox.ledger_files import sha256_of
from tasks.inbox.process import (
    JobResult,
    Runner,
    process_claimed,
    raise_if_could_not_run,
    raise_if_in_doubt,
)
from tasks.inbox.settings import InboxSettings
from tasks.inbox.watch import take_files
from tasks.payment_requests import read_payment_request_file
from tasks.payouts import is_payout_report

LOCK_WAIT_SECONDS = 10.0
# Import outcomes that mean nothing was imported (the file goes to failed/).
FAILED_IMPORTS = {"rejected", "refused", "approval refused", "approval expired"}


def _is_bank_statement(path: Path) -> str | None:
    try:
        detect_layout(path.read_bytes(), where=path.name)
    except (StatementRefused, UnknownLayout) as exc:
        return str(exc)
    return None


def _is_payment_request_file(path: Path) -> str | None:
    try:
        read_payment_request_file(path)
    except InputFileError as exc:
        return str(exc)
    return None


DETECTORS: dict[FileKind, Detector] = {
    FileKind.PAYMENT_REQUESTS: _is_payment_request_file,
    FileKind.BANK: _is_bank_statement,
    FileKind.PAYOUTS: is_payout_report,
}


def _payment_requests(path: Path, block: str, settings: InboxSettings) -> JobResult:
    state = import_payment_requests(
        file=path, biller=block, dry_run=False, on_bad_rows=settings.on_bad_rows, return_state=True
    )
    raise_if_could_not_run(state)
    name = str(state.name)
    failed = not state.is_completed() or name.lower() in FAILED_IMPORTS
    return JobResult(
        name.lower(),
        failed,
        state.message or name,
        next_step="fix the rows in the .failed.csv and drop it again" if failed else "",
    )


def _bank(path: Path, block: str, settings: InboxSettings) -> JobResult:
    """Record what the statement shows, as its approval rules allow: exact, full matches on
    their own where the biller's bank settings (or the folder's ``inbox.yaml``) say so; else
    the run asks for an approval — in a deployment's run it pauses for the form, elsewhere
    nobody can be asked, so it records nothing and ends "Awaiting approval" with its preview."""
    auto = settings.bank_apply_exact or load_bank_settings(block).auto_apply_exact
    state = import_bank_payments(
        file=path, biller=block, dry_run=False, exact_only=auto, return_state=True
    )
    raise_if_could_not_run(state)
    raise_if_in_doubt(state)  # payments in doubt: the file stays for the retry to resume them
    name = str(state.name)
    message = state.message or name
    if not state.is_completed() or name.lower() in FAILED_IMPORTS:
        return JobResult(name.lower(), True, message, next_step="read the report beside it")
    if name.lower() != "awaiting approval":
        return JobResult(name.lower(), False, message)
    return JobResult(
        "previewed, awaiting approval",
        False,
        message,
        next_step=(
            f"to record its payments: billops run import-bank-payments FILE --biller {block} "
            "--apply --approve-as NAME --reason TEXT (FILE: this file in processed/), or run the "
            "import-bank-payments deployment with dry_run off (it pauses for the approval form); "
            "exact matches are recorded on their own when the biller's bank settings set "
            "auto_apply_exact (or inbox.yaml sets bank_apply_exact: true)"
        ),
    )


def _payouts(path: Path, block: str, settings: InboxSettings) -> JobResult:
    """Reconcile the payouts the report lists (reads the service, never writes to it)."""
    state = reconcile_payouts(biller=block, payout_report=path, return_state=True)
    raise_if_could_not_run(state)
    name = str(state.name)
    failed = not state.is_completed() or name.lower() in FAILED_IMPORTS
    next_step = "read the exceptions file beside it" if "exception" in name.lower() else ""
    return JobResult(name.lower(), failed, state.message or name, next_step=next_step)


RUNNERS: dict[FileKind, Runner] = {
    FileKind.PAYMENT_REQUESTS: _payment_requests,
    FileKind.BANK: _bank,
    FileKind.PAYOUTS: _payouts,
}


# Files this process claimed and hands to a flow run in this process: the run takes the claim
# over, lock and all, so there is no moment when another watcher could take the file.
_HANDED_OVER: dict[str, Claimed] = {}
_HANDOVER_GUARD = threading.Lock()


def _take(biller: str, file: Path, kind: FileKind | None) -> Claimed | None:
    """The claim this process handed over, or the file's lock (taken here, for a run started
    through a deployment: the watcher that claimed it may be letting go this instant)."""
    with _HANDOVER_GUARD:
        handed = _HANDED_OVER.pop(str(file), None)
    if handed is not None:
        return handed
    deadline = time.monotonic() + LOCK_WAIT_SECONDS
    while (claimed := resume(Waiting(biller, file, kind))) is None:
        if not file.exists() or time.monotonic() > deadline:
            return None
        time.sleep(0.1)
    return claimed


@flow(name="process-inbox-file", log_prints=False)
def process_inbox_file(biller: str, file: Path, kind: FileKind | None = None) -> State:
    """Process one file the inbox took: its job runs as a subflow; the file and its reports go
    to `processed/YYYY-MM-DD/` or `failed/`.

    Args:
        biller: The biller folder's name under the inbox root.
        file: The file, in that folder's `processing/` (on the worker's disk).
        kind: payment-requests, bank or payouts; empty to detect it from the content.
    """
    claimed = _take(biller, file, kind)
    if claimed is None:
        return Completed(name="Taken elsewhere", message=f"{file.name}: another process has it")
    with open_ledger() as ledger:
        outcome = process_claimed(
            claimed, ledger, detectors=DETECTORS, runners=RUNNERS, run_id=current_run_id()
        )
    if outcome is None:
        return Completed(name="Postponed", message=f"{file.name}: a copy is being processed")
    message = f"{outcome.file}: {outcome.status} — {outcome.message}"
    get_run_logger().info(message)
    if outcome.failed:
        return Failed(name="File failed", message=message)
    return Completed(
        name="Duplicate" if outcome.status == "duplicate" else "Processed", message=message
    )


def start_file_run(claimed: Claimed, deployment: str) -> str:
    """Start ``process-inbox-file`` through its deployment for a claimed file, with an
    idempotency key from its content: a second watcher that took a copy of the same content
    starts no second run. That copy is then reported here as a duplicate once the content's run
    has ended, or left in ``processing/`` for a later pass while it is still going."""
    from prefect.deployments import run_deployment

    key = f"inbox:{claimed.biller}:{sha256_of(claimed.path)}"
    parameters = {
        "biller": claimed.biller,
        "file": str(claimed.path),
        "kind": claimed.kind.value if claimed.kind else None,
    }
    run: Any = run_deployment(deployment, parameters=parameters, idempotency_key=key, timeout=0)
    if run.parameters.get("file") == str(claimed.path):
        claimed.release()  # the run takes the lock itself
        return str(run.id)
    if run.state is not None and run.state.is_final():
        run_here(claimed)  # the content's run is over: this copy is a duplicate, said so here
    else:
        claimed.release()
    return str(run.id)


def run_here(claimed: Claimed) -> State:
    """Process a claimed file in this process (its own flow run)."""
    with _HANDOVER_GUARD:
        _HANDED_OVER[str(claimed.path)] = claimed
    try:
        # The file's own state (a failed file ends its run Failed) is returned, never raised:
        # one file's failure is its report's business, not the caller's.
        return process_inbox_file(
            biller=claimed.biller, file=claimed.path, kind=claimed.kind, return_state=True
        )
    finally:
        with _HANDOVER_GUARD:
            _HANDED_OVER.pop(str(claimed.path), None)
        # Put away, the lock is gone already; a run that crashed leaves the file in
        # processing/, and letting go of it lets the next pass resume it.
        claimed.release()


@flow(name="inbox-scan", log_prints=False)
def inbox_scan(
    root: Path | None = None,
    via_deployment: str | None = None,
    limit: int = 100,
    settle_seconds: float = SETTLE_SECONDS,
) -> State:
    """Take every complete file in the inbox (and resume those a stopped process left), one
    `process-inbox-file` run each.

    Args:
        root: The inbox root on the worker's disk; empty for `$BILLOPS_HOME/inbox`.
        via_deployment: Start each file's run through this deployment (e.g.
            `process-inbox-file/process-inbox-file`) instead of as a subflow here.
        limit: At most this many files per scan; the rest wait for the next one.
        settle_seconds: A file is taken only once it has not been modified for this many
            seconds (a copy still being written is left for the next scan).
    """
    folder = root or default_root()
    taken = take_files(folder, limit, settle_seconds)
    failed = 0
    for claimed in taken:
        if via_deployment:
            start_file_run(claimed, via_deployment)
        else:
            failed += run_here(claimed).is_failed()
    message = f"{len(taken)} file(s) taken from {folder}" + (
        f", {failed} failed (see their reports in failed/)" if failed else ""
    )
    get_run_logger().info(message)
    return Completed(name="Scanned", message=message)
