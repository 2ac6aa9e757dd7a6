"""Bulk-import jobs under the write-once protocol (``tasks/common/write_once.py``): submit a chunk
once, poll its job, record each row.

``payment_requests.bulk_import`` is not idempotent on the wire. Each chunk is one ledger
operation keyed ``bulk_import:<biller id>:<chunk sha256>`` (the same rows always give the same
chunk bytes, so a rerun finds its intent); the job is polled to a final status, every item is
recorded, and the operation is confirmed (or failed).

On a rerun a chunk whose job id is known is polled, never resent. A chunk whose outcome is unknown
(a dropped answer, a crash between send and record) is sent again from the bytes the ledger kept:
that is safe because every row carries its ``externalId`` and the service updates a payment
request with a known externalId instead of creating a second one (``docs/service.md`` §8 Bulk
import of payment requests). These
functions know nothing of Prefect; ``steps.py`` wraps them in tasks.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable, Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from billing_api import BillingClient
from ledger import ItemOutcome, Ledger, Operation, OperationState
from tasks.common.crash_points import crash_point
from tasks.common.polling import Backoff, PollSettings, poll_until
from tasks.common.write_once import (
    ClaimPolicy,
    Intent,
    SendBudget,
    Sent,
    WriteAttempt,
    claim_and_send,
    write_once,
)
from tasks.payment_requests.model import Chunk

KIND = "bulk_import"
# The contract's largest page: a 500-row chunk's items in 3 requests instead of 25.
LIST_PAGE_SIZE = 200
FINAL_JOB_STATUSES = frozenset({"COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"})
# Without a check that proves a holder gone, a silent claim is taken over after the timeout only.
NO_TAKEOVER_PROOF = ClaimPolicy()


def request_digest(chunk: Chunk, *, delete_missing: bool, collection_method: str) -> str:
    """The digest of what the service is asked to do with a chunk: its bytes (which carry the
    column mapping) and every parameter that changes what the service does with them."""
    described = json.dumps([chunk.sha256, delete_missing, collection_method])
    return hashlib.sha256(described.encode("utf-8")).hexdigest()


def operation_key(biller_id: str, digest: str, generation: int = 0) -> str:
    """The ledger key of one chunk: business data only — the biller, the request's digest, and
    the round of a file imported again on purpose (``--force``), which is a new write."""
    return f"{KIND}:{biller_id}:{digest}" + (f":round-{generation}" if generation else "")


@dataclass(frozen=True)
class Submission:
    """What happened to one chunk in this run."""

    key: str
    chunk_index: int
    rows: int
    state: OperationState
    job_id: str | None = None
    sent_now: bool = False
    note: str = ""

    @classmethod
    def of(cls, op: Operation, *, sent_now: bool = False, note: str = "") -> Submission:
        """The submission an operation stands for (chunk and row count from its payload)."""
        payload = op.payload or {}
        return cls(
            key=op.key,
            chunk_index=int(payload.get("chunk_index", 0)),
            rows=int(payload.get("rows", 0)),
            state=op.state,
            job_id=op.remote_id,
            sent_now=sent_now,
            note=note,
        )


def _uploader(
    client: BillingClient,
    content: bytes,
    *,
    chunk_index: int,
    collection_method: str,
    delete_missing: bool,
) -> Callable[[], Sent]:
    def upload() -> Sent:
        job = client.payment_requests.bulk_import(
            content,
            filename=f"chunk-{chunk_index:04d}.csv",
            collection_method=collection_method,
            delete_missing=delete_missing,
        )
        return Sent(remote_id=job.job_id)

    return upload


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
    generation: int = 0,
    claims: ClaimPolicy = NO_TAKEOVER_PROOF,
    budget: SendBudget | None = None,
    existed_before: Collection[str] = (),
) -> Submission:
    """Send one chunk unless the ledger shows it was sent (or is being sent) already.

    ``existed_before``: the externalIds the service held before the import; the chunk's other
    rows are recorded as new, so any later run can tell that this import created them even if
    the answer that said so was lost.
    """
    digest = request_digest(
        chunk, delete_missing=delete_missing, collection_method=collection_method
    )
    known = set(existed_before)
    intent = Intent(
        key=operation_key(biller_id, digest, generation),
        kind=KIND,
        biller=biller_id,
        request_digest=digest,
        run_id=run_id,
        payload={
            "file_sha256": file_sha256,
            "chunk_index": chunk.index,
            "rows": len(chunk.rows),
            "delete_missing": delete_missing,
            "collection_method": collection_method,
            "content": chunk.content.decode("utf-8"),
            "lines": {row.external_id: row.line for row in chunk.rows},
            "new_rows": sorted(r.external_id for r in chunk.rows if r.external_id not in known),
        },
    )
    upload = _uploader(
        client,
        chunk.content,
        chunk_index=chunk.index,
        collection_method=collection_method,
        delete_missing=delete_missing,
    )
    attempt = write_once(ledger, intent, upload, worker=worker, claims=claims, budget=budget)
    return _submission(attempt, chunk)


def _submission(attempt: WriteAttempt, chunk: Chunk) -> Submission:
    op = attempt.operation
    return Submission(
        key=op.key,
        chunk_index=chunk.index,
        rows=len(chunk.rows),
        state=op.state,
        job_id=op.remote_id,
        sent_now=attempt.sent_now,
        note=attempt.note,
    )


def wait_for_job(
    client: BillingClient,
    job_id: str,
    settings: PollSettings,
    on_poll: Callable[[Any], None] | None = None,
) -> Any:
    """Poll a job until it is final; backoff doubles from ``first_delay`` up to ``max_delay``."""
    return poll_until(
        lambda: client.payment_requests.retrieve_bulk_import(job_id),
        lambda job: str(job.status) in FINAL_JOB_STATUSES,
        settings,
        describe=lambda job: f"bulk-import job {job_id} still {job.status}",
        on_poll=on_poll,
    )


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
    claims: ClaimPolicy = NO_TAKEOVER_PROOF,
    budget: SendBudget | None = None,
) -> Operation | None:
    """Send again a chunk whose first outcome is unknown, from the bytes the ledger kept.

    Returns the operation after sending (with its job id), or None when it was not sent: another
    worker holds it, or this run has sent it as often as it may.
    """
    payload = op.payload or {}
    upload = _uploader(
        client,
        str(payload["content"]).encode("utf-8"),
        chunk_index=int(payload.get("chunk_index", 0)),
        collection_method=str(payload.get("collection_method", "NONE")),
        delete_missing=bool(payload.get("delete_missing", False)),
    )
    attempt = claim_and_send(ledger, op, upload, worker=worker, claims=claims, budget=budget)
    return attempt.operation if attempt.sent_now else None


def settle_one(
    client: BillingClient,
    ledger: Ledger,
    op: Operation,
    settings: PollSettings,
    *,
    worker: str,
    claims: ClaimPolicy = NO_TAKEOVER_PROOF,
    budget: SendBudget | None = None,
    on_poll: Callable[[Any], None] | None = None,
) -> Operation:
    """Bring one operation to a final state if it can be: poll a known job, resend an unknown one.

    ``budget`` is the run's (shared with the chunk's first send): a chunk is sent at most
    ``budget.limit`` times per run, then left unknown for the next run. An operation another
    live worker is sending is returned unchanged (still unsettled).
    """
    budget = budget or SendBudget()
    backoff = Backoff(settings)
    while not op.state.settled:
        if op.state is OperationState.SENT and op.remote_id is not None:
            return settle_operation(client, ledger, op, settings, on_poll)
        if budget.exhausted(op.key):
            break
        resent = resend_unknown(client, ledger, op, worker=worker, claims=claims, budget=budget)
        if resent is not None:
            op = resent
            continue
        # Another live worker is sending it: wait for its job id (then poll it) or its death.
        if not backoff.pause():
            break
        op = ledger.get(op.key) or op
    return op


def unsettled_imports(ledger: Ledger, biller_id: str | None = None) -> Sequence[Operation]:
    """Bulk-import operations a run left behind (intended, in flight or unknown)."""
    return ledger.unsettled(biller=biller_id, kinds=[KIND])


def settle_all(
    client: BillingClient,
    ledger: Ledger,
    keys: Sequence[str],
    settings: PollSettings,
    *,
    worker: str,
    claims: ClaimPolicy,
    budget: SendBudget | None = None,
    on_settled: Callable[[Operation], None] | None = None,
) -> list[Operation]:
    """Settle the operations under ``keys``, one after another (the service runs one biller's jobs
    one at a time, so polling them in parallel would only wait in parallel)."""
    settled: list[Operation] = []
    for key in keys:
        op = ledger.get(key)
        if op is None:
            raise LookupError(f"ledger has no operation {key}")
        done = settle_one(client, ledger, op, settings, worker=worker, claims=claims, budget=budget)
        settled.append(done)
        if on_settled is not None:
            on_settled(done)
    return settled


def outcomes_by_line(items: Iterable[ItemOutcome]) -> dict[int, ItemOutcome]:
    """The latest item per input line (a resent chunk's second job supersedes the first)."""
    return {item.row_number: item for item in items if item.row_number is not None}
