"""Bulk-import jobs under the ledger's protocol: submit a chunk once, poll it, record each row.

ARCHITECTURE rule 3 for ``payment_requests.bulk_import`` (not idempotent on the wire):

1. ``record_intent`` under ``bulk_import:<biller id>:<chunk sha256>`` (the same rows always give the
   same chunk bytes, so a rerun finds its intent);
2. ``claim`` it (the ledger decides which worker sends; an in-flight claim older than the
   claim timeout, or whose holder is provably gone, is presumed dead), send, ``mark_sent`` with
   the job id;
3. poll the job to a final status, record every item, ``mark_confirmed`` (or ``mark_failed``).

On a rerun a chunk whose job id is known is polled, never resent. A chunk whose outcome is unknown
(a dropped answer, a crash between send and ``mark_sent``) is sent again: that is safe because every
row carries its ``externalId`` and the service updates a payment request with a known externalId
instead of creating a second one (contract, bulk import). These functions know nothing of Prefect;
``tasks/payment_request_import.py`` wraps them in tasks.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

from billing_api import (
    ApiError,
    BillingClient,
    Forbidden,
    OutcomeUnknown,
    RateLimited,
    TransportError,
    Unauthorized,
)
from ledger import ItemOutcome, Ledger, Operation, OperationState
from tasks.crash_points import crash_point
from tasks.payment_request_files import Chunk

KIND = "bulk_import"
# The contract's largest page: a 500-row chunk's items in 3 requests instead of 25.
LIST_PAGE_SIZE = 200
FINAL_JOB_STATUSES = frozenset({"COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"})
DEFAULT_CLAIM_TIMEOUT = timedelta(minutes=10)
# A chunk whose answer keeps getting lost is sent at most this often per run, then left unknown
# for the next run (or ``billops ledger resolve``) instead of hammering a failing service.
MAX_SENDS_PER_RUN = 3


def operation_key(biller_id: str, chunk: Chunk) -> str:
    """The ledger key of one chunk: business data only (biller and the chunk's bytes)."""
    return f"{KIND}:{biller_id}:{chunk.sha256}"


@dataclass(frozen=True)
class Submission:
    """What happened to one chunk in this run."""

    key: str
    chunk_index: int
    rows: int
    state: str
    job_id: str | None = None
    sent_now: bool = False
    note: str = ""


@dataclass
class PollSettings:
    """Exponential backoff between polls, with a cap and a deadline for the whole wait."""

    first_delay: float = 0.5
    max_delay: float = 10.0
    deadline: float = 1800.0
    sleep: Callable[[float], None] = field(default=time.sleep)
    clock: Callable[[], float] = field(default=time.monotonic)


@dataclass(frozen=True)
class ClaimPolicy:
    """When a rerun may take over a chunk another worker claimed but never reported on.

    ``timeout``: a silent claim older than this is presumed dead. ``holder_dead``: a check that
    can prove the holder gone sooner (``tasks.workers.holder_dead``: its process or run ended).
    """

    timeout: timedelta = DEFAULT_CLAIM_TIMEOUT
    holder_dead: Callable[[Operation], bool] | None = None

    def claim(self, ledger: Ledger, key: str, worker: str) -> Operation | None:
        return ledger.claim(
            key, worker=worker, stale_after=self.timeout, holder_dead=self.holder_dead
        )


class PollDeadlineExceeded(Exception):
    """A job did not finish in time; it stays in the ledger and the next run polls it again."""


def submit_chunk(
    client: BillingClient,
    ledger: Ledger,
    *,
    biller_id: str,
    chunk: Chunk,
    run_id: str,
    worker: str,
    file_sha256: str,
    delete_missing: bool = False,
    collection_method: str = "NONE",
    claims: ClaimPolicy = ClaimPolicy(),
) -> Submission:
    """Send one chunk unless the ledger shows it was sent (or is being sent) already."""
    key = operation_key(biller_id, chunk)
    ledger.record_intent(
        key=key,
        kind=KIND,
        biller=biller_id,
        request_digest=chunk.sha256,
        run_id=run_id,
        payload={
            "file_sha256": file_sha256,
            "chunk_index": chunk.index,
            "rows": len(chunk.rows),
            "delete_missing": delete_missing,
            "collection_method": collection_method,
            "content": chunk.content.decode("utf-8"),
            "lines": {row.external_id: row.line for row in chunk.rows},
        },
    )
    existing = ledger.get(key)
    if existing is not None and existing.state in (
        OperationState.CONFIRMED,
        OperationState.FAILED,
    ):
        return _submission(existing, chunk, note="settled by an earlier run")
    if existing is not None and existing.state == OperationState.SENT and existing.remote_id:
        return _submission(existing, chunk, note="job known: polled, not resent")
    crash_point("after_intent")
    claimed = claims.claim(ledger, key, worker)
    if claimed is None:
        held = ledger.get(key)
        assert held is not None
        return _submission(held, chunk, note="being sent by another worker")
    op = _send_bytes(
        client,
        ledger,
        claimed.key,
        chunk.content,
        chunk_index=chunk.index,
        collection_method=collection_method,
        delete_missing=delete_missing,
    )
    notes = {
        OperationState.UNKNOWN: "outcome unknown: resent next run",
        OperationState.FAILED: "refused by the service",
    }
    return _submission(op, chunk, sent_now=True, note=notes.get(OperationState(op.state), ""))


def _send_bytes(
    client: BillingClient,
    ledger: Ledger,
    key: str,
    content: bytes,
    *,
    chunk_index: int,
    collection_method: str,
    delete_missing: bool,
) -> Operation:
    """Send a claimed chunk and record what is known afterwards (job id, unknown or refused)."""
    try:
        job = client.payment_requests.bulk_import(
            content,
            filename=f"chunk-{chunk_index:04d}.csv",
            collection_method=collection_method,
            delete_missing=delete_missing,
        )
    except OutcomeUnknown as exc:
        return ledger.mark_unknown(key, error=str(exc))
    except (RateLimited, Unauthorized, Forbidden) as exc:
        # Refused before anything was applied (too many requests, a token problem): the chunk is
        # sendable again as it was, once the cause is gone. The run fails and says why.
        ledger.release(key, reason=f"not applied: {exc}")
        raise
    except ApiError as exc:
        return ledger.mark_failed(key, error=str(exc))
    except TransportError as exc:
        # For a write, the client raises this only when the request never left (connection
        # refused): nothing reached the service, so the chunk is sendable again as it was.
        ledger.release(key, reason=f"not sent: {exc}")
        raise
    except Exception as exc:
        # Anything else mid-send (a bug, a closed client): we cannot prove it did not arrive.
        ledger.mark_unknown(key, error=f"{type(exc).__name__}: {exc}")
        raise
    crash_point("after_send")
    return ledger.mark_sent(key, remote_id=job.job_id)


def _submission(
    op: Operation, chunk: Chunk, *, sent_now: bool = False, note: str = ""
) -> Submission:
    return Submission(
        key=op.key,
        chunk_index=chunk.index,
        rows=len(chunk.rows),
        state=str(op.state),
        job_id=op.remote_id,
        sent_now=sent_now,
        note=note,
    )


def wait_for_job(
    client: BillingClient,
    job_id: str,
    settings: PollSettings,
    on_poll: Callable[[Any], None] | None = None,
) -> Any:
    """Poll a job until it is final; backoff doubles from ``first_delay`` up to ``max_delay``."""
    started = settings.clock()
    delay = settings.first_delay
    while True:
        job = client.payment_requests.retrieve_bulk_import(job_id)
        if on_poll is not None:
            on_poll(job)
        crash_point("mid_poll")
        if str(job.status) in FINAL_JOB_STATUSES:
            return job
        if settings.clock() - started + delay > settings.deadline:
            raise PollDeadlineExceeded(
                f"bulk-import job {job_id} still {job.status} after "
                f"{settings.deadline:.0f} s; it stays in the ledger and the next run polls it"
            )
        settings.sleep(delay)
        delay = min(delay * 2, settings.max_delay)


def settle_operation(
    client: BillingClient,
    ledger: Ledger,
    op: Operation,
    settings: PollSettings,
    on_poll: Callable[[Any], None] | None = None,
) -> Operation:
    """Poll the operation's job, record every item, and mark the operation confirmed or failed."""
    if op.remote_id is None:
        raise ValueError(f"operation {op.key} has no job id to poll")
    job = wait_for_job(client, op.remote_id, settings, on_poll)
    lines: dict[str, int] = dict((op.payload or {}).get("lines", {}))
    items = [
        ItemOutcome(
            operation_key=op.key,
            external_id=item.external_id or "",
            row_number=lines.get(item.external_id or ""),
            status=str(item.status),
            payment_request_id=item.payment_request_id,
            errors=[_error_text(e) for e in item.errors or []],
            run_id=op.run_id,
        )
        for item in client.payment_requests.list_bulk_import_items(
            op.remote_id, page_size=LIST_PAGE_SIZE
        )
    ]
    ledger.record_items(op.key, items)
    if str(job.status) == "FAILED":
        reasons = "; ".join(_error_text(e) for e in job.errors or []) or "no reason given"
        settled = ledger.mark_failed(op.key, error=f"job {op.remote_id} FAILED: {reasons}")
    else:
        counts = {str(c.status): int(c.count) for c in job.counts_by_item_status or []}
        settled = ledger.mark_confirmed(
            op.key, remote_id=op.remote_id, result={"status": str(job.status), "counts": counts}
        )
    crash_point("after_outcome")
    return settled


def _error_text(error: Any) -> str:
    if isinstance(error, dict):
        kind, detail = error.get("type", ""), error.get("detail") or ""
    else:
        kind, detail = getattr(error, "type", ""), getattr(error, "detail", None) or ""
    return f"{kind}: {detail}" if detail else str(kind)


def resend_unknown(
    client: BillingClient,
    ledger: Ledger,
    op: Operation,
    *,
    worker: str,
    claims: ClaimPolicy = ClaimPolicy(),
) -> Operation | None:
    """Send again a chunk whose first outcome is unknown, from the bytes the ledger kept.

    Returns the operation after sending (with its job id), or None when another worker holds it.
    """
    payload = op.payload or {}
    claimed = claims.claim(ledger, op.key, worker)
    if claimed is None:
        return None
    return _send_bytes(
        client,
        ledger,
        op.key,
        str(payload["content"]).encode("utf-8"),
        chunk_index=int(payload.get("chunk_index", 0)),
        collection_method=str(payload.get("collection_method", "NONE")),
        delete_missing=bool(payload.get("delete_missing", False)),
    )


def settle_one(
    client: BillingClient,
    ledger: Ledger,
    op: Operation,
    settings: PollSettings,
    *,
    worker: str,
    claims: ClaimPolicy = ClaimPolicy(),
    on_poll: Callable[[Any], None] | None = None,
) -> Operation:
    """Bring one operation to a final state if it can be: poll a known job, resend an unknown one.

    An operation another live worker is sending is returned unchanged (still unsettled).
    """
    sends = 0
    started = settings.clock()
    delay = settings.first_delay
    while op.state not in (OperationState.CONFIRMED, OperationState.FAILED):
        if op.state == OperationState.SENT and op.remote_id is not None:
            return settle_operation(client, ledger, op, settings, on_poll)
        if sends == MAX_SENDS_PER_RUN:
            break
        resent = resend_unknown(client, ledger, op, worker=worker, claims=claims)
        if resent is not None:
            sends += 1
            op = resent
            continue
        # Another live worker is sending it: wait for its job id (then poll it) or its death.
        if settings.clock() - started + delay > settings.deadline:
            break
        settings.sleep(delay)
        delay = min(delay * 2, settings.max_delay)
        op = ledger.get(op.key) or op
    return op


def unsettled_imports(ledger: Ledger, biller_id: str | None = None) -> Sequence[Operation]:
    """Bulk-import operations a run left behind (intended, in flight or unknown)."""
    return ledger.unsettled(biller=biller_id, kinds=[KIND])


def outcomes_by_line(items: Iterable[ItemOutcome]) -> dict[int, ItemOutcome]:
    """The latest item per input line (a resent chunk's second job supersedes the first)."""
    return {item.row_number: item for item in items if item.row_number is not None}
