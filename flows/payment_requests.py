"""Import payment requests from a finance team's file, and settle the jobs imports leave open."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Literal

from prefect import flow, get_run_logger
from prefect.futures import wait
from prefect.task_runners import ThreadPoolTaskRunner

from flows.approval import require_approval
from ledger import Ledger
from tasks import import_jobs
from tasks.biller_session import BillerSession, biller_session, open_ledger
from tasks.import_reports import ImportReport, write_reports
from tasks.payment_request_import import PreparedImport, prepare_import, settle_jobs, submit_chunk
from tasks.workers import current_run_id, worker_name

FILE_KIND = "payment_requests"
# Chunks of one biller are processed by the service one after another; four in flight keeps the
# upload busy without holding many connections (bounded, as every task runner here must be).
MAX_PARALLEL_CHUNKS = 4


@dataclass
class ImportSummary:
    """The result of one import run, as the CLI prints it and the UI shows it."""

    file: str
    biller: str
    status: Literal["imported", "partial", "rejected", "dry_run", "already_imported", "pending"]
    run_id: str
    message: str = ""
    report: ImportReport | None = None
    chunks: list[import_jobs.Submission] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 ok, 1 failed, 3 finished with rejected or failed rows (2 is the CLI's usage error)."""
        if self.status in ("imported", "dry_run", "already_imported"):
            return 0 if self.report is None or self.report.failed_rows == 0 else 3
        if self.status in ("partial", "rejected"):
            return 3
        return 1


@flow(
    name="import-payment-requests",
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_PARALLEL_CHUNKS),  # type: ignore[arg-type]
    log_prints=False,
)
def import_payment_requests(
    file: Path,
    biller: str,
    dry_run: bool = True,
    on_bad_rows: Literal["reject_file", "skip"] = "reject_file",
    chunk_size: int = 500,
    delete_missing: bool = False,
    sheet: str | None = None,
    force: bool = False,
    approved_by: str | None = None,
    approval_reason: str | None = None,
) -> ImportSummary:
    """Import a CSV or XLSX file of payment requests for one biller.

    - **file**: the file finance dropped (CSV or XLSX; reports are written next to it).
    - **biller**: the name of the biller's credential block.
    - **dry_run**: validate and report only; nothing is sent (the default from the UI).
    - **on_bad_rows**: `reject_file` sends nothing if any row is bad; `skip` imports the good rows.
    - **chunk_size**: rows per bulk-import job (at most 10,000, the service's limit).
    - **delete_missing**: full sync — the whole file as one job, deleting payment requests earlier
      imports created that are not in this file. Needs an approval.
    - **force**: import a file again even though this exact file was imported before.
    """
    if not 1 <= chunk_size <= 10_000:
        raise ValueError(f"chunk_size must be between 1 and 10,000 (got {chunk_size})")
    logger = get_run_logger()
    ledger = open_ledger()
    try:
        with biller_session(biller, ledger) as session:
            options = ImportOptions(
                dry_run=dry_run,
                on_bad_rows=on_bad_rows,
                chunk_size=chunk_size,
                delete_missing=delete_missing,
                sheet=sheet,
                force=force,
                approved_by=approved_by,
                approval_reason=approval_reason,
            )
            summary = _import(session, file, options)
    finally:
        ledger.close()
    logger.info(
        "%s: %s%s", file.name, summary.status, f" — {summary.message}" if summary.message else ""
    )
    return summary


@dataclass(frozen=True)
class ImportOptions:
    """The flow's parameters that shape one import (see the flow's docstring)."""

    dry_run: bool
    on_bad_rows: str
    chunk_size: int
    delete_missing: bool
    sheet: str | None
    force: bool
    approved_by: str | None
    approval_reason: str | None


def _import(session: BillerSession, file: Path, options: ImportOptions) -> ImportSummary:
    run_id = current_run_id()
    prepared = prepare_import(
        session.client,
        session.ledger,
        file=file,
        biller_id=session.biller_id,
        sheet=options.sheet,
        chunk_size=options.chunk_size,
        whole_file=options.delete_missing,
    )
    summary = ImportSummary(file=str(file), biller=session.block, status="dry_run", run_id=run_id)
    if prepared.seen_before and not options.force:
        summary.status = "already_imported"
        summary.message = f"{prepared.seen_before} (--force to import it again)"
        return summary
    parsed = prepared.parsed
    # A bad file is rejected whole by default; with `skip`, only when no row is left to send.
    rejected = bool(parsed.problems) and (options.on_bad_rows == "reject_file" or not parsed.rows)
    if options.dry_run or rejected or not parsed.rows:
        return _report_without_sending(session, prepared, summary, rejected, options.dry_run)
    if options.delete_missing:
        require_approval(
            session.ledger,
            action="delete-missing payment requests",
            subject=f"{session.block}:{file.name}",
            approved_by=options.approved_by,
            reason=options.approval_reason,
        )
    return _send_and_settle(session, prepared, summary, options.delete_missing)


def _report_without_sending(
    session: BillerSession,
    prepared: PreparedImport,
    summary: ImportSummary,
    rejected: bool,
    dry_run: bool,
) -> ImportSummary:
    parsed = prepared.parsed
    summary.report = write_reports(
        parsed, {}, dry_run=not rejected, sent=False, title=f"Payment requests: {parsed.path.name}"
    )
    summary.status = "rejected" if rejected else "dry_run"
    summary.message = _nothing_sent_message(parsed.problems, rejected, dry_run)
    if not dry_run:
        state = "rejected" if rejected else "imported"
        _record_file(session, prepared, summary.run_id, state, summary.report)
    return summary


def _send_and_settle(
    session: BillerSession, prepared: PreparedImport, summary: ImportSummary, delete_missing: bool
) -> ImportSummary:
    parsed = prepared.parsed
    _record_file(session, prepared, summary.run_id, "importing", None)
    summary.chunks = _submit_all(session, prepared, summary.run_id, delete_missing)
    settled = settle_jobs(
        session.client,
        session.ledger,
        keys=[s.key for s in summary.chunks],
        worker=worker_name(),
        poll=import_jobs.PollSettings(),
    )
    items = import_jobs.outcomes_by_line(
        item for op in settled for item in session.ledger.items(op.key)
    )
    summary.report = write_reports(
        parsed, items, dry_run=False, sent=True, title=f"Payment requests: {parsed.path.name}"
    )
    finished = all(op.state in ("confirmed", "failed") for op in settled)
    summary.status = ("partial" if parsed.problems else "imported") if finished else "pending"
    state = "imported" if finished else "importing"
    _record_file(session, prepared, summary.run_id, state, summary.report)
    if not finished:
        summary.message = "some jobs are still open; `billops run poll-import-jobs` settles them"
    return summary


def _submit_all(
    session: BillerSession, prepared: PreparedImport, run_id: str, delete_missing: bool
) -> list[import_jobs.Submission]:
    worker = worker_name()
    futures = [
        submit_chunk.submit(
            session.client,
            session.ledger,
            biller_id=session.biller_id,
            chunk=chunk,
            run_id=run_id,
            worker=worker,
            file_sha256=prepared.parsed.sha256,
            delete_missing=delete_missing,
        )
        for chunk in prepared.chunks
    ]
    # Every chunk finishes (or fails) before any failure propagates: the client must stay open
    # while a sibling chunk is mid-send.
    wait(futures)
    return [future.result() for future in futures]


def _record_file(
    session: BillerSession,
    prepared: PreparedImport,
    run_id: str,
    state: str,
    report: ImportReport | None,
) -> None:
    parsed = prepared.parsed
    report_path = str(report.report_csv) if report is not None else None
    ledger: Ledger = session.ledger
    if ledger.file_seen(parsed.sha256, biller=session.biller_id, kind=FILE_KIND) is None:
        ledger.record_file(
            sha256=parsed.sha256,
            name=parsed.path.name,
            size=parsed.path.stat().st_size,
            folder=str(parsed.path.parent),
            biller=session.biller_id,
            kind=FILE_KIND,
            run_id=run_id,
            state=state,
            report_path=report_path,
        )
    else:
        ledger.update_file(
            parsed.sha256,
            biller=session.biller_id,
            kind=FILE_KIND,
            state=state,
            report_path=report_path,
            run_id=run_id,
        )


def _nothing_sent_message(problems: Sequence[object], rejected: bool, dry_run: bool) -> str:
    if rejected:
        return (
            f"{len(problems)} problem(s) in the file: nothing was sent "
            "(fix the rows, or use on_bad_rows=skip to import the good ones)"
        )
    if dry_run:
        return "dry run: nothing was sent (--apply to import)"
    return "no valid rows: nothing was sent"


@flow(name="poll-import-jobs", log_prints=False)
def poll_import_jobs(biller: str) -> list[import_jobs.Submission]:
    """Settle the bulk-import jobs a biller's earlier runs left open (crashes, timeouts, unknowns).

    - **biller**: the name of the biller's credential block.
    """
    ledger = open_ledger()
    try:
        with biller_session(biller, ledger) as session:
            open_ops = import_jobs.unsettled_imports(ledger, session.biller_id)
            settled = settle_jobs(
                session.client,
                ledger,
                keys=[op.key for op in open_ops],
                worker=worker_name(),
                poll=import_jobs.PollSettings(),
            )
    finally:
        ledger.close()
    return [
        import_jobs.Submission(
            key=op.key,
            chunk_index=int((op.payload or {}).get("chunk_index", 0)),
            rows=int((op.payload or {}).get("rows", 0)),
            state=str(op.state),
            job_id=op.remote_id,
        )
        for op in settled
    ]
