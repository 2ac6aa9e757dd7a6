"""Bulk import of payment requests: jobs, their processing (run by
:mod:`sandbox.bulk_import.worker`, never inside a request), and how jobs and items are shown.

Processing applies the rows in chunks, one transaction per chunk, so the job's progress is
visible while it runs and a stopped sandbox resumes a job where it left off. What a row does to
the payment requests is :mod:`sandbox.bulk_import.apply`'s.
"""

from __future__ import annotations

import threading
from collections.abc import Iterable
from typing import Any

from sqlalchemy import func, select, update
from sqlalchemy.orm import Session, sessionmaker

from sandbox.bulk_import import apply as bulk_apply
from sandbox.bulk_import.csv_rows import FileError, Row, duplicate_external_ids, error, read_rows
from sandbox.core import ids, state, stats
from sandbox.core.db import session_scope
from sandbox.core.errors import BAD_REQUEST, INTERNAL_ERROR, ApiError, not_found
from sandbox.core.pagination import Listing, column, sortable
from sandbox.core.timefmt import iso
from sandbox.models.imports import BulkImportItem, BulkImportJob

JOB_TYPE = "BULK_PAYMENT_REQUEST_IMPORT"
PENDING, PROCESSING, FAILED = "PENDING", "PROCESSING", "FAILED"
COMPLETED, COMPLETED_WITH_ERRORS = "COMPLETED", "COMPLETED_WITH_ERRORS"
# Item statuses in the contract's order (countsByItemStatus follows it).
ITEM_STATUSES = ("PENDING", "CREATED", "UPDATED", "UNCHANGED", "DELETED", "FAILED", "NOT_DELETED")
CHUNK_ROWS = 200


# --- jobs as the API sees them ----------------------------------------------------------------


def create_job(
    session: Session,
    biller_id: str,
    *,
    content: bytes,
    file_name: str | None,
    collection_method: str,
    delete_missing: bool,
) -> BulkImportJob:
    """A ``PENDING`` job for the worker; counted in the biller's ``bulkImportJobs``."""
    now = state.now(session)
    last = session.scalar(
        select(func.max(BulkImportJob.seq)).where(BulkImportJob.biller_id == biller_id)
    )
    job = BulkImportJob(
        id=ids.new_uuid(),
        biller_id=biller_id,
        seq=(last or 0) + 1,
        status=PENDING,
        collection_method=collection_method,
        delete_missing=delete_missing,
        file_name=(file_name or None) and file_name[:255],
        content=content,
        total_rows=None,
        errors=[],
        created_at=now,
        updated_at=now,
        completed_at=None,
    )
    session.add(job)
    stats.increment(session, f"biller:{biller_id}", stats.BULK_IMPORT_JOBS)
    session.flush()
    return job


def get_job(session: Session, biller_id: str, job_id: str) -> BulkImportJob:
    """The biller's job, or 404 (another biller's job does not exist for this one)."""
    job = session.get(BulkImportJob, job_id)
    if job is None or job.biller_id != biller_id:
        raise not_found("bulk import job")
    return job


def item_counts(session: Session, job_id: str) -> list[dict[str, Any]]:
    """``countsByItemStatus``: statuses with a count above 0, in the contract's order."""
    rows = session.execute(
        select(BulkImportItem.status, func.count())
        .where(BulkImportItem.job_id == job_id)
        .group_by(BulkImportItem.status)
    ).all()
    counts = {status: count for status, count in rows}
    order = {status: index for index, status in enumerate(ITEM_STATUSES)}
    return [
        {"status": status, "count": counts[status]}
        for status in sorted(counts, key=lambda s: (order.get(s, len(order)), s))
    ]


def public_job(session: Session, job: BulkImportJob) -> dict[str, Any]:
    return {
        "jobId": job.id,
        "type": JOB_TYPE,
        "status": job.status,
        "creationTime": iso(job.created_at),
        "lastUpdatedTime": iso(job.updated_at),
        "completionTime": iso(job.completed_at) if job.completed_at else None,
        "collectionMethod": job.collection_method,
        "deleteMissingPaymentRequests": job.delete_missing,
        "fileName": job.file_name,
        "totalRows": job.total_rows,
        "countsByItemStatus": item_counts(session, job.id),
        "errors": list(job.errors),
    }


def public_item(item: BulkImportItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "jobId": item.job_id,
        "rowNumber": item.row_number,
        "externalId": item.external_id,
        "status": item.status,
        "paymentRequestId": item.payment_request_id,
        "errors": list(item.errors),
    }


# ``rowNumber`` sorts by the item's ordinal: the deleteMissing items (no row number) come last.
ITEM_SORTABLE = sortable(
    rowNumber=BulkImportItem.ordinal,
    status=BulkImportItem.status,
    externalId=BulkImportItem.external_id,
)


def items(job: BulkImportJob, statuses: Iterable[str]) -> Listing:
    """The job's items with one of ``statuses`` (all when empty), by row number."""
    query = select(BulkImportItem).where(BulkImportItem.job_id == job.id)
    wanted = list(statuses)
    if wanted:
        query = query.where(BulkImportItem.status.in_(wanted))
    return Listing(query, ITEM_SORTABLE, column(BulkImportItem.ordinal))


ACCEPTED_COLLECTION_METHODS = ("NONE",)
KNOWN_COLLECTION_METHODS = ("AUTO_COLLECT", "ON_DEMAND", "NONE")


def check_collection_method(value: str) -> str:
    """Bulk import takes ``collectionMethod`` NONE only [C]; another known one is refused."""
    if value not in KNOWN_COLLECTION_METHODS:
        raise ApiError(
            400, BAD_REQUEST, f"unknown collectionMethod {value!r}", field="collectionMethod"
        )
    if value not in ACCEPTED_COLLECTION_METHODS:
        raise ApiError(
            400,
            BAD_REQUEST,
            f"collectionMethod {value} is not supported by bulk import; only NONE is",
            field="collectionMethod",
        )
    return value


# --- the worker's side ------------------------------------------------------------------------


def claim_next_job(session: Session) -> str | None:
    """The job to work on: one left ``PROCESSING`` by an earlier run first, else the oldest
    ``PENDING`` one, which becomes ``PROCESSING`` (a conditional update, so two workers on one
    database cannot both take it). Taking jobs in upload order keeps a biller's jobs in order."""
    oldest = (BulkImportJob.created_at, BulkImportJob.seq)
    for status in (PROCESSING, PENDING):
        job = session.scalars(
            select(BulkImportJob).where(BulkImportJob.status == status).order_by(*oldest).limit(1)
        ).first()
        if job is None:
            continue
        if status == PENDING:
            claimed = session.execute(
                update(BulkImportJob)
                .where(BulkImportJob.id == job.id, BulkImportJob.status == PENDING)
                .values(status=PROCESSING, updated_at=state.now(session))
                .execution_options(synchronize_session=False)
            )
            if getattr(claimed, "rowcount", 1) != 1:
                return None
        return job.id
    return None


def _read_job(sessions: sessionmaker[Session], job_id: str) -> tuple[list[Row], set[int]] | None:
    """The job's rows and the ordinals that already have an item; None when there is nothing
    to do (the job is gone or finished, or its file is unreadable: then the job fails)."""
    with session_scope(sessions) as session:
        job = session.get(BulkImportJob, job_id)
        if job is None or job.status != PROCESSING or job.content is None:
            return None
        try:
            rows = read_rows(job.content)
        except FileError as exc:
            _finish(session, job, FAILED, exc.errors)
            return None
        job.total_rows = len(rows)
        job.updated_at = state.now(session)
        done = session.scalars(
            select(BulkImportItem.ordinal).where(BulkImportItem.job_id == job_id)
        )
        return rows, set(done)


def process_job(sessions: sessionmaker[Session], job_id: str, stop: threading.Event) -> None:
    """Apply a ``PROCESSING`` job. Returns early (the job stays ``PROCESSING``) when ``stop`` is
    set; the next run resumes it, skipping rows that already have an item."""
    read = _read_job(sessions, job_id)
    if read is None:
        return
    rows, done = read
    duplicates = duplicate_external_ids(rows)
    pending = [row for row in rows if row.number not in done]
    for start in range(0, len(pending), CHUNK_ROWS):
        if stop.is_set():
            return
        with session_scope(sessions) as session:
            job = session.get(BulkImportJob, job_id)
            if job is None:  # the sandbox was reset meanwhile
                return
            customers: bulk_apply.CustomerCache = {}  # this chunk's lookups (files repeat them)
            for row in pending[start : start + CHUNK_ROWS]:
                bulk_apply.apply_row(session, job, row, duplicates, customers)
            job.updated_at = state.now(session)
    if stop.is_set():
        return
    with session_scope(sessions) as session:
        job = session.get(BulkImportJob, job_id)
        if job is None:
            return
        if job.delete_missing:
            bulk_apply.delete_missing(
                session, job, {row.external_id for row in rows if row.external_id}
            )
        failed = session.scalar(
            select(func.count()).where(
                BulkImportItem.job_id == job_id,
                BulkImportItem.status.in_(("FAILED", "NOT_DELETED")),
            )
        )
        _finish(session, job, COMPLETED_WITH_ERRORS if failed else COMPLETED, [])


def fail_job(sessions: sessionmaker[Session], job_id: str, detail: str) -> None:
    """Give up on a job the worker could not process (so it is not retried for ever)."""
    with session_scope(sessions) as session:
        job = session.get(BulkImportJob, job_id)
        if job is not None and job.status in (PENDING, PROCESSING):
            _finish(session, job, FAILED, [error(INTERNAL_ERROR, detail)])


def _finish(session: Session, job: BulkImportJob, status: str, errors: list[Any]) -> None:
    now = state.now(session)
    job.status = status
    job.errors = errors
    job.completed_at = now
    job.updated_at = now
    job.content = None  # the file is not needed any more
