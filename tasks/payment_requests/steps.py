"""The Prefect tasks of the payment-request import: prepare, submit each chunk, settle, report.

Batch-sized on purpose: one task run to prepare the file, one per chunk (default 500 rows), one to
poll every job of the run, one to write the reports — never one per row (a task run costs
milliseconds of Prefect bookkeeping; 100,000 rows would be 100,000 of them). Each is a thin
wrapper over a plain function (``prepare.py``, ``jobs.py``, ``reports.py``) that tests call
directly. No task retries a send: the ledger decides what may be sent again.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from ledger import ItemOutcome, Operation
from tasks.common.polling import PollSettings
from tasks.common.progress import JobProgress
from tasks.common.session import BillerSession
from tasks.common.workers import CLAIMS, worker_name
from tasks.common.write_once import SendBudget
from tasks.payment_requests import jobs, reports
from tasks.payment_requests.model import Chunk, ParsedFile
from tasks.payment_requests.prepare import ImportOptions, PreparedImport, import_rules, prepare
from tasks.payment_requests.report_update import update_reports
from tasks.payment_requests.request_details import RequestDetails


@task(name="prepare-import", cache_policy=NO_CACHE)
def prepare_import(session: BillerSession, file: Path, options: ImportOptions) -> PreparedImport:
    """Read and validate the file; note whether this exact file was imported before."""
    return prepare(
        session.client,
        session.ledger,
        file=file,
        biller_id=session.biller_id,
        options=options,
        rules=import_rules(session.block),
    )


@task(name="submit-chunk", cache_policy=NO_CACHE)
def submit_chunk(
    session: BillerSession,
    chunk: Chunk,
    *,
    run_id: str,
    file_sha256: str,
    delete_missing: bool,
    generation: int = 0,
    budget: SendBudget | None = None,
    existed_before: Collection[str] = (),
) -> jobs.Submission:
    """Send one chunk under the ledger's protocol (never twice unless its outcome was unknown)."""
    return jobs.submit_chunk(
        session.client,
        session.ledger,
        biller_id=session.biller_id,
        chunk=chunk,
        run_id=run_id,
        worker=worker_name(),
        file_sha256=file_sha256,
        delete_missing=delete_missing,
        generation=generation,
        claims=CLAIMS,
        budget=budget,
        existed_before=existed_before,
    )


def _settle_with_progress(
    session: BillerSession, keys: Sequence[str], budget: SendBudget | None
) -> list[Operation]:
    progress = JobProgress(total=len(keys))
    settled = jobs.settle_all(
        session.client,
        session.ledger,
        keys,
        PollSettings(),
        worker=worker_name(),
        claims=CLAIMS,
        budget=budget,
        on_settled=lambda _op: progress.job_finished(),
    )
    progress.finish()
    return settled


@task(name="settle-import-jobs", cache_policy=NO_CACHE)
def settle_jobs(session: BillerSession, keys: Sequence[str], budget: SendBudget) -> list[Operation]:
    """Poll every job of these operations to the end, resending those whose outcome is unknown
    (within the run's budget of sends, shared with the chunks' first sends)."""
    return _settle_with_progress(session, keys, budget)


@task(name="settle-open-imports", cache_policy=NO_CACHE)
def settle_open_imports(session: BillerSession) -> list[Operation]:
    """Settle every bulk import the biller's earlier runs left open (crashes, timeouts, unknowns).

    What ``poll-import-jobs`` and the nightly run do for a biller; the report of each file
    whose jobs are settled here is brought up to date.
    """
    keys = [op.key for op in jobs.unsettled_imports(session.ledger, session.biller_id)]
    settled = _settle_with_progress(session, keys, SendBudget())
    update_reports(session.ledger, settled, session.biller_id)
    return settled


@task(name="write-import-reports", cache_policy=NO_CACHE)
def write_reports(
    parsed: ParsedFile,
    items: Mapping[str, ItemOutcome],
    *,
    dry_run: bool,
    sent: bool,
    title: str,
    biller: str,
    existed_before: Collection[str] = (),
    deletions: Sequence[reports.Deletion] = (),
    resent: int = 0,
    details: Mapping[str, RequestDetails] | None = None,
    dry_run_report: bool | None = None,
) -> reports.ImportReport:
    """Write the CSV report and failed-rows file next to the input, and the run's artifacts."""
    return reports.write_reports(
        parsed,
        items,
        dry_run=dry_run,
        sent=sent,
        title=title,
        biller=biller,
        existed_before=existed_before,
        deletions=deletions,
        resent=resent,
        details=details,
        dry_run_report=dry_run_report,
    )
