"""How an import run ends and what a person approves: the named state an import ends in
(``tasks/common/outcome.py``), and the facts the approval form shows before a full sync
(``docs/conventions.md`` §10 Dry run and approval)."""

from __future__ import annotations

from collections.abc import Sequence
from decimal import Decimal

from ledger import OperationState
from tasks.common import outcome as names
from tasks.common.outcome import Outcome
from tasks.payment_requests.jobs import Submission
from tasks.payment_requests.prepare import PreparedImport
from tasks.payment_requests.summary import ImportStatus, ImportSummary, deletion_facts


def import_outcome(summary: ImportSummary) -> Outcome:
    """How an import ends: its state's name, its message, whether a person should look."""
    report = summary.report
    failed = report.failed_rows if report is not None else 0
    rejected = report.rejected if report is not None else 0
    counts = (
        ", ".join(f"{status} {n}" for status, n in report.by_status.items())
        if report is not None
        else ""
    )
    message = "; ".join(part for part in (summary.message, counts) if part) or str(summary.status)
    status = summary.status
    if status is ImportStatus.REJECTED:
        return Outcome(names.REJECTED, message, attention=True)
    if status is ImportStatus.ALREADY_IMPORTED:
        return Outcome(names.ALREADY_IMPORTED, message)
    if status is ImportStatus.REFUSED:
        return Outcome(names.APPROVAL_REFUSED, message, attention=True)
    if status is ImportStatus.PENDING:
        return Outcome(names.PENDING, message, attention=True)
    if status is ImportStatus.DRY_RUN:
        name = f"{names.DRY_RUN} with rejections" if rejected else names.DRY_RUN
        return Outcome(name, message)
    if status is ImportStatus.PARTIAL or rejected:
        return Outcome(names.WITH_REJECTIONS, message, attention=True)
    if failed:
        return Outcome(names.WITH_FAILURES, message, attention=True)
    return Outcome(names.COMPLETED, message)


def full_sync_facts(prepared: PreparedImport) -> list[tuple[str, str]]:
    """What a person approves before a full sync: the rows and money sent, and what it deletes."""
    rows = [row for chunk in prepared.chunks for row in chunk.rows]
    total = sum((row.amount for row in rows), Decimal("0"))
    return [
        ("file", prepared.parsed.path.name),
        ("payment requests sent (created or updated)", f"{len(rows):,}"),
        ("their total", f"£{total:,.2f}"),
        ("rows refused by the checks (not sent)", f"{len(prepared.parsed.problems):,}"),
        deletion_facts(prepared),
    ]


def settled_outcome(settled: Sequence[Submission]) -> Outcome:
    """How ``poll-import-jobs`` ends: nothing open, all settled, some failed or still open."""
    if not settled:
        return Outcome(names.COMPLETED, "no import job was left open")
    failed = sum(s.state is OperationState.FAILED for s in settled)
    still_open = sum(not s.state.settled for s in settled)
    message = (
        f"{len(settled)} open import job(s): {len(settled) - still_open} settled now "
        f"({failed} failed), {still_open} still open"
    )
    if failed:
        return Outcome(names.WITH_FAILURES, message, attention=True)
    if still_open:
        return Outcome(names.PENDING, message, attention=True)
    return Outcome(names.COMPLETED, message)
