"""Prefect tasks of the payment-request import: prepare, submit each chunk, settle, report.

Batch-sized on purpose: one task run to prepare the file, one per chunk (default 500 rows), one to
poll every job of the run, one to write the reports — never one per row (a task run costs
milliseconds of Prefect bookkeeping; 100,000 rows would be 100,000 of them). The work itself lives
in plain functions (``tasks/import_jobs.py``, ``tasks/payment_request_files``) that tests call
directly. No task retries a send: the ledger decides what may be sent again (ARCHITECTURE rule 3).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date, datetime
from pathlib import Path
from zoneinfo import ZoneInfo

from prefect import task
from prefect.cache_policies import NO_CACHE

from billing_api import BillingClient
from ledger import Ledger, Operation
from ledger.settings import BillopsSettings
from tasks import import_jobs
from tasks.import_progress import JobProgress
from tasks.payment_request_files import (
    MAX_ROWS_PER_FILE,
    Chunk,
    CustomerDirectory,
    ParsedFile,
    make_chunks,
    parse_payment_request_file,
)
from tasks.workers import holder_dead

LONDON = ZoneInfo("Europe/London")
CLAIMS = import_jobs.ClaimPolicy(holder_dead=holder_dead)


@dataclass(frozen=True)
class PreparedImport:
    """A file read and validated against the biller's customers, cut into chunks."""

    parsed: ParsedFile
    chunks: list[Chunk]
    seen_before: str | None


def london_today() -> date:
    """Pay-by dates are checked against today's date in London, where the service runs."""
    return datetime.now(LONDON).date()


@task(name="prepare-import", cache_policy=NO_CACHE)
def prepare_import(
    client: BillingClient,
    ledger: Ledger,
    *,
    file: Path,
    biller_id: str,
    sheet: str | None,
    chunk_size: int,
    whole_file: bool,
) -> PreparedImport:
    """Read and validate the file; note whether this exact file was imported before."""
    customers = CustomerDirectory.from_records(
        (c.id, c.external_id, c.name)
        for c in client.customers.list(page_size=import_jobs.LIST_PAGE_SIZE)
    )
    references = existing_references(client)
    parsed = parse_payment_request_file(
        file,
        customers=customers,
        today=london_today(),
        biller=biller_id,
        sheet=sheet,
        already_imported_references=references,
    )
    seen = ledger.file_seen(parsed.sha256, biller=biller_id, kind="payment_requests")
    seen_before = None
    if seen is not None and seen.state == "imported":
        seen_before = (
            f"{file.name} was already imported on {seen.created_at:%Y-%m-%d %H:%M} UTC "
            f"by run {seen.run_id}"
        )
    size = max(len(parsed.rows), 1) if whole_file else chunk_size
    if whole_file and size > MAX_ROWS_PER_FILE:
        raise ValueError(
            f"a full sync (delete_missing) sends the whole file as one job, and the service takes "
            f"at most {MAX_ROWS_PER_FILE:,} rows per job; {file.name} has {size:,} valid rows"
        )
    mapping = BillopsSettings().bulk_import_columns
    return PreparedImport(
        parsed=parsed,
        chunks=make_chunks(parsed.rows, size=size, mapping=mapping),
        seen_before=seen_before,
    )


def existing_references(client: BillingClient) -> dict[str, str]:
    """``reference → externalId`` of the biller's payment requests, to flag references reused.

    A row whose reference belongs to a payment request with the same externalId is that request
    again (an update), not a duplicate, so callers compare both.
    """
    known: dict[str, str] = {}
    for request in client.payment_requests.list(page_size=import_jobs.LIST_PAGE_SIZE):
        reference = getattr(request, "reference", None)
        if reference:
            known[str(reference)] = str(getattr(request, "external_id", "") or "")
    return known


@task(name="submit-chunk", cache_policy=NO_CACHE)
def submit_chunk(
    client: BillingClient,
    ledger: Ledger,
    *,
    biller_id: str,
    chunk: Chunk,
    run_id: str,
    worker: str,
    file_sha256: str,
    delete_missing: bool,
) -> import_jobs.Submission:
    """Send one chunk under the ledger's protocol (never twice unless its outcome was unknown)."""
    return import_jobs.submit_chunk(
        client,
        ledger,
        biller_id=biller_id,
        chunk=chunk,
        run_id=run_id,
        worker=worker,
        file_sha256=file_sha256,
        delete_missing=delete_missing,
        claims=CLAIMS,
    )


@task(name="settle-import-jobs", cache_policy=NO_CACHE)
def settle_jobs(
    client: BillingClient,
    ledger: Ledger,
    *,
    keys: Sequence[str],
    worker: str,
    poll: import_jobs.PollSettings,
) -> list[Operation]:
    """Poll every job of these operations to the end, resending those whose outcome is unknown."""
    progress = JobProgress(total=len(keys))
    settled: list[Operation] = []
    for key in keys:
        op = ledger.get(key)
        if op is None:
            raise LookupError(f"ledger has no operation {key}")
        settled.append(
            import_jobs.settle_one(client, ledger, op, poll, worker=worker, claims=CLAIMS)
        )
        progress.job_finished()
    progress.finish()
    return settled
