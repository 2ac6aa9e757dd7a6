"""A biller's night: the files its inbox folder(s) still hold once the bank and payout steps
have taken theirs.

For each folder whose ``inbox.yaml`` names the biller's credential block (or which is named
after it), files a stopped process left in ``processing/`` are resumed (a night cut off by a
crash or a kill left them there) and every complete file still waiting is claimed and processed
exactly as the inbox processes it: its kind, its content checked against the files the ledger
has seen, its job as a subflow, put away with its reports in ``processed/`` or ``failed/``.
Nobody is there to approve anything:

- payment-request files are imported as the inbox imports them (``on_bad_rows`` from
  ``inbox.yaml``);
- bank statements follow the nightly bank rule (``flows/bank_inbox.py``'s runner): exact, full
  matches recorded only where the biller's bank settings allow it unattended, everything else
  previewed for a person;
- payout reports are reconciled (``flows/payouts_inbox.py``'s runner; the payout job only reads
  the service);
- a file no job recognises goes to ``failed/`` with each job's answer, as in the inbox.

The tally counts the rows the service created or updated in these runs.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from prefect.client.schemas.objects import State

from flows.bank_inbox import _bank as bank_unattended  # the nightly bank rule, kept in one place
from flows.inbox import DETECTORS, FAILED_IMPORTS
from flows.payment_requests import import_payment_requests
from flows.payouts_inbox import run_on_report
from tasks.common.session import open_ledger
from tasks.common.workers import current_run_id
from tasks.inbox.claim import Claimed, claim, resume
from tasks.inbox.layout import (
    FileKind,
    billers,
    complete,
    default_root,
    processing_files,
    waiting_files,
)
from tasks.inbox.process import JobResult, Runner, process_claimed, raise_if_could_not_run
from tasks.inbox.settings import InboxSettings, InboxSettingsError, block_of

IMPORTED = ("CREATED", "UPDATED")  # row statuses that mean the service wrote the row


@dataclass
class FilesTally:
    """What the night made of the biller's waiting files."""

    done: list[tuple[str, str, str]] = field(default_factory=list)  # (kind, file, status)
    failed: list[str] = field(default_factory=list)  # "file: status"
    rows: int = 0

    def of_kind(self, kind: FileKind) -> str:
        """``file: status`` of each file of ``kind``, or ``none waiting``."""
        shown = [f"{name}: {status}" for k, name, status in self.done if k == kind.value]
        return ", ".join(shown) or "none waiting"


def _data(state: State[Any]) -> Any:
    """The data a job's flow handed back with its named state (None when it failed)."""
    try:
        return state.result(raise_on_failure=False)
    except Exception:  # a state without a readable result: nothing to count
        return None


def _result(state: State[Any], next_step: str) -> JobResult:
    """The file's outcome from its job's named state, as the inbox words it (``next_step`` for
    a person when the job failed)."""
    raise_if_could_not_run(state)
    name = str(state.name)
    failed = not state.is_completed() or name.lower() in FAILED_IMPORTS
    return JobResult(name.lower(), failed, state.message or name, next_step=next_step * failed)


def _runners(tally: FilesTally) -> dict[FileKind, Runner]:
    def payment_requests(path: Path, block: str, settings: InboxSettings) -> JobResult:
        state = import_payment_requests(
            file=path,
            biller=block,
            dry_run=False,
            on_bad_rows=settings.on_bad_rows,
            return_state=True,
        )
        report = getattr(_data(state), "report", None)
        if report is not None:
            tally.rows += sum(report.by_status.get(status, 0) for status in IMPORTED)
        return _result(state, "fix the rows in the .failed.csv and drop it again")

    return {
        FileKind.PAYMENT_REQUESTS: payment_requests,
        FileKind.BANK: bank_unattended,
        FileKind.PAYOUTS: run_on_report,
    }


def _folders(root: Path, block: str) -> list[str]:
    found = []
    for folder in billers(root):
        try:
            if block_of(root / folder) == block:
                found.append(folder)
        except InboxSettingsError:
            continue  # the inbox itself reports an unreadable inbox.yaml, file by file
    return found


def _claims(root: Path, block: str) -> Iterator[Claimed]:
    """Files left in ``processing/`` by a process that stopped, then complete waiting files;
    each locked by this process (another process's files are left alone)."""
    for folder in _folders(root, block):
        for left in processing_files(root, folder):
            resumed = resume(left)
            if resumed is not None:
                yield resumed
        for waiting in list(waiting_files(root, folder)):
            taken = claim(waiting, root) if complete(waiting.path) else None
            if taken is not None:
                yield taken


def take_waiting_files(biller: str, root: Path | None = None) -> FilesTally:
    """Process every file waiting for ``biller`` (see the module docstring)."""
    folder = root or default_root()
    tally = FilesTally()
    runners = _runners(tally)
    with open_ledger() as ledger:
        for claimed in _claims(folder, biller):
            try:
                outcome = process_claimed(
                    claimed, ledger, detectors=DETECTORS, runners=runners, run_id=current_run_id()
                )
            finally:
                claimed.release()
            if outcome is None:
                continue  # the same content is being processed elsewhere: a later pass
            tally.done.append((outcome.kind or "unknown", outcome.file, outcome.status))
            if outcome.failed:
                tally.failed.append(f"{outcome.file}: {outcome.status}")
    return tally
