"""The write-once protocol: every write to the service that is not idempotent on the wire goes
through the ledger as *intent → claim → send → outcome* (``docs/conventions.md`` §6 Writes).

1. :meth:`~ledger.Ledger.record_intent` under a key derived from business data (never random),
   so a rerun finds the intent an earlier run recorded;
2. :meth:`ClaimPolicy.claim`: the ledger decides which worker sends (a silent claim older than the
   claim timeout, or whose holder is provably gone, may be taken over);
3. send, and record what is known afterwards — the classification of a failed send
   (:func:`classify_send_failure`) decides whether the write is ``unknown`` (it may have
   arrived: ask the service before sending again), ``released`` (sendable again as it was: it
   certainly was not applied, or it is idempotent) or ``failed`` (refused for good);
4. the outcome: ``sent`` with the service's id (an asynchronous job to poll), or ``confirmed`` at
   once for a write whose answer is final.

Generic over what is sent: the caller hands over the intent and a ``send`` callable (upload a
bulk-import chunk, ``payments:import`` a bank payment, mark a payment request as paid, pause or
resume collection) and, for writes that are not safe to repeat, a ``look_up`` that asks the
service whether an earlier attempt arrived before anything is sent again. No Prefect here.
"""

from __future__ import annotations

import threading
from collections.abc import Callable
from dataclasses import dataclass
from datetime import timedelta
from enum import StrEnum
from typing import Any

from billing_api import (
    ApiError,
    Forbidden,
    OutcomeUnknown,
    RateLimited,
    TransportError,
    Unauthorized,
)
from ledger import Ledger, Operation, OperationState
from tasks.common.crash_points import crash_point

DEFAULT_CLAIM_TIMEOUT = timedelta(minutes=10)
# A write whose answer keeps getting lost is sent at most this often per run, then left unknown
# for the next run (or ``billops ledger resolve``) instead of hammering a failing service.
MAX_SENDS_PER_RUN = 3


@dataclass(frozen=True)
class ClaimPolicy:
    """When a rerun may take over a write another worker claimed but never reported on.

    ``timeout``: a silent claim older than this is presumed dead. ``holder_dead``: a check that
    can prove the holder gone sooner (``tasks.common.workers.holder_dead``: its process or run
    ended).
    """

    timeout: timedelta = DEFAULT_CLAIM_TIMEOUT
    holder_dead: Callable[[Operation], bool] | None = None

    def claim(self, ledger: Ledger, key: str, worker: str) -> Operation | None:
        """The claimed operation, or None when it is not this worker's to send."""
        return ledger.claim(
            key, worker=worker, stale_after=self.timeout, holder_dead=self.holder_dead
        )


@dataclass(frozen=True)
class Intent:
    """A write about to be made: its ledger key (business data only) and what describes it.

    ``request_digest`` covers everything that changes what the service does, so the same key
    can never stand for two different requests (the ledger refuses that).
    """

    key: str
    kind: str
    biller: str
    request_digest: str
    run_id: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class Sent:
    """What the service answered to a send: its id for the write (a job to poll, a resource),
    and ``result`` when the answer is final at once (the write is then confirmed)."""

    remote_id: str | None
    result: dict[str, Any] | None = None


class SendFailure(StrEnum):
    """How a send that raised is recorded."""

    UNKNOWN = "unknown"  # it may have arrived: ask the service before sending again
    RELEASED = "released"  # sendable again as it was: not applied, or idempotent
    FAILED = "failed"  # the service refused it for good


def classify_send_failure(exc: BaseException) -> SendFailure:
    """The classification of an exception raised while sending a write.

    A lost answer is unknown. Refusals that come before anything is applied (too many requests,
    a token problem) and a :class:`TransportError` are released: the client raises that for a
    write that never left (connection refused), or for an idempotent one whose answers were
    all lost, which is safe to send again (:func:`_release_reason` tells the two apart). Any
    other API error is a refusal. Anything else mid-send (a bug, a closed client) cannot prove
    the write did not arrive, so it is unknown.
    """
    if isinstance(exc, OutcomeUnknown):
        return SendFailure.UNKNOWN
    if isinstance(exc, RateLimited | Unauthorized | Forbidden | TransportError):
        return SendFailure.RELEASED
    if isinstance(exc, ApiError):
        return SendFailure.FAILED
    return SendFailure.UNKNOWN


def _release_reason(exc: BaseException) -> str:
    """Why a released write may be sent again, as the ledger records it for an operator."""
    if isinstance(exc, TransportError) and exc.may_have_arrived:
        # An idempotent write whose answers were lost: it may well have been applied, and
        # sending it again is safe because the same request applies once.
        return f"no answer, maybe applied (idempotent: safe to send again): {exc}"
    return f"not applied: {exc}"


def send_claimed(ledger: Ledger, key: str, send: Callable[[], Sent]) -> Operation:
    """Send a claimed write and record what is known afterwards.

    A lost answer or a refusal is recorded and returned (the run goes on with other writes); a
    released write and an unexpected error are recorded and raised, so the run fails saying why.
    """
    try:
        sent = send()
    except Exception as exc:
        failure = classify_send_failure(exc)
        if failure is SendFailure.RELEASED:
            ledger.release(key, reason=_release_reason(exc))
            raise
        if failure is SendFailure.FAILED:
            return ledger.mark_failed(key, error=str(exc))
        if isinstance(exc, OutcomeUnknown):
            return ledger.mark_unknown(key, error=str(exc))
        ledger.mark_unknown(key, error=f"{type(exc).__name__}: {exc}")
        raise
    crash_point("after_send")
    return record_sent(ledger, key, sent)


def record_sent(ledger: Ledger, key: str, sent: Sent) -> Operation:
    """Record the service's answer: ``sent`` with its id, and ``confirmed`` when it is final."""
    op = ledger.mark_sent(key, remote_id=sent.remote_id)
    if sent.result is not None:
        op = ledger.mark_confirmed(key, remote_id=sent.remote_id, result=sent.result)
    return op


class SendBudget:
    """How often each write was sent in this run, so none is sent more than ``limit`` times.

    One budget per run, shared by every task of the run (thread-safe).
    """

    def __init__(self, limit: int = MAX_SENDS_PER_RUN) -> None:
        self.limit = limit
        self._sent: dict[str, int] = {}
        self._lock = threading.Lock()

    def exhausted(self, key: str) -> bool:
        """True once ``key`` was sent ``limit`` times in this run."""
        return self.sends(key) >= self.limit

    def spend(self, key: str) -> None:
        """Count one send of ``key``."""
        with self._lock:
            self._sent[key] = self._sent.get(key, 0) + 1

    def sends(self, key: str) -> int:
        """How often ``key`` was sent in this run."""
        with self._lock:
            return self._sent.get(key, 0)

    def resent(self) -> int:
        """Sends beyond the first, over every write of the run."""
        with self._lock:
            return sum(n - 1 for n in self._sent.values() if n > 1)


LookUp = Callable[[Operation], Sent | None]


@dataclass(frozen=True)
class WriteAttempt:
    """What one attempt at a write did in this run: the operation now, whether it was sent."""

    operation: Operation
    sent_now: bool
    note: str = ""


_NOTES = {
    OperationState.UNKNOWN: "outcome unknown: resent next run",
    OperationState.FAILED: "refused by the service",
}


def claim_and_send(
    ledger: Ledger,
    op: Operation,
    send: Callable[[], Sent],
    *,
    worker: str,
    claims: ClaimPolicy,
    budget: SendBudget | None = None,
    look_up: LookUp | None = None,
) -> WriteAttempt:
    """Claim ``op`` and send it, unless another worker holds it or the run's budget is spent.

    A write tried before (its outcome unknown, or its sender gone) is first looked up with the
    service when ``look_up`` is given: found there, it is recorded and not sent again.
    """
    if budget is not None and budget.exhausted(op.key):
        return WriteAttempt(op, False, f"sent {budget.limit} times in this run: left for the next")
    claimed = claims.claim(ledger, op.key, worker)
    if claimed is None:
        held = ledger.get(op.key) or op
        return WriteAttempt(held, False, "being sent by another worker")
    if look_up is not None and claimed.attempts > 1:
        try:
            found = look_up(claimed)
        except Exception as exc:  # cannot ask: the earlier attempt's outcome stays unknown
            ledger.mark_unknown(op.key, error=f"look-up failed: {type(exc).__name__}: {exc}")
            raise
        if found is not None:
            return WriteAttempt(record_sent(ledger, op.key, found), False, "found at the service")
    if budget is not None:
        budget.spend(op.key)
    done = send_claimed(ledger, op.key, send)
    return WriteAttempt(done, True, _NOTES.get(done.state, ""))


def write_once(
    ledger: Ledger,
    intent: Intent,
    send: Callable[[], Sent],
    *,
    worker: str,
    claims: ClaimPolicy,
    budget: SendBudget | None = None,
    look_up: LookUp | None = None,
) -> WriteAttempt:
    """Make the write unless the ledger shows it was made (or is being made) already."""
    ledger.record_intent(
        key=intent.key,
        kind=intent.kind,
        biller=intent.biller,
        request_digest=intent.request_digest,
        run_id=intent.run_id,
        payload=intent.payload,
    )
    existing = ledger.get(intent.key)
    assert existing is not None, "the intent was just recorded"
    if existing.state.settled:
        return WriteAttempt(existing, False, "settled by an earlier run")
    if existing.state is OperationState.SENT and existing.remote_id:
        return WriteAttempt(existing, False, "known to the service: polled, not resent")
    crash_point("after_intent")
    return claim_and_send(
        ledger, existing, send, worker=worker, claims=claims, budget=budget, look_up=look_up
    )
