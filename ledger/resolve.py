"""Settle the operations a run left behind by asking the service (``billops ledger resolve``).

The ledger side only: a *resolver* (built on the service client by the caller) looks at one
unsettled operation and says what the service knows; :func:`resolve_operations` records that,
with an audit entry per change. One operation's resolver error does not stop the others.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from ledger._ledger import Ledger
from ledger.errors import LedgerError
from ledger.records import Operation, OperationState, Resolution

Resolver = Callable[[Operation], Resolution]
S = OperationState


@dataclass(frozen=True)
class ResolvedOperation:
    """What resolving one operation did: its state before and after, or the error."""

    key: str
    kind: str
    biller: str
    before: OperationState
    after: OperationState
    note: str = ""
    error: str | None = None

    @property
    def changed(self) -> bool:
        """True when the ledger now says something different about the operation."""
        return self.before != self.after


def resolve_operations(
    ledger: Ledger,
    resolver: Resolver,
    *,
    biller: str | None = None,
    kinds: Sequence[str] | None = None,
    actor: str = "billops ledger resolve",
    run_id: str | None = None,
) -> list[ResolvedOperation]:
    """Ask ``resolver`` about every unsettled operation (of ``biller``/``kinds``) and record it.

    The resolver may also update the ledger itself (e.g. poll a job and confirm it); the
    operation is re-read before its resolution is applied, and a resolution the ledger already
    shows changes nothing.
    """
    outcomes = []
    for op in ledger.unsettled(biller=biller, kinds=kinds):
        try:
            resolution = resolver(op)
            after = _apply(ledger, op.key, resolution)
        except Exception as exc:  # one operation's failure must not stop the others
            outcomes.append(_failed(op, exc))
            continue
        outcome = ResolvedOperation(
            key=op.key,
            kind=op.kind,
            biller=op.biller,
            before=op.state,
            after=after.state,
            note=resolution.note,
        )
        if outcome.changed:
            ledger.audit(
                actor=actor,
                action="resolve-operation",
                subject=f"operation:{op.key}",
                reason=resolution.note or resolution.error,
                run_id=run_id,
                details={
                    "from": op.state.value,
                    "to": after.state.value,
                    "remote_id": after.remote_id,
                },
            )
        outcomes.append(outcome)
    return outcomes


def _apply(ledger: Ledger, key: str, resolution: Resolution) -> Operation:
    current = ledger.get(key)
    if current is None:
        raise LedgerError(f"operation {key!r} disappeared from the ledger while resolving it")
    target = S(resolution.state)
    same_job = resolution.remote_id in (None, current.remote_id)
    if current.state.settled or (current.state == target and (target != S.SENT or same_job)):
        return current
    if target == S.CONFIRMED:
        return ledger.mark_confirmed(key, remote_id=resolution.remote_id, result=resolution.result)
    if target == S.FAILED:
        return ledger.mark_failed(key, error=resolution.error or "refused by the service")
    if target == S.SENT:
        if resolution.remote_id is None:
            raise ValueError("a 'sent' resolution must name the service's id (remote_id)")
        return ledger.mark_sent(key, remote_id=resolution.remote_id)
    if target == S.UNKNOWN:
        return ledger.mark_unknown(key, error=resolution.error or "still unknown")
    return ledger.release(key, reason=resolution.note or "the service never received it")


def _failed(op: Operation, exc: Exception) -> ResolvedOperation:
    return ResolvedOperation(
        key=op.key,
        kind=op.kind,
        biller=op.biller,
        before=op.state,
        after=op.state,
        error=f"{type(exc).__name__}: {exc}",
    )
