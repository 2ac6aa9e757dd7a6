"""Operations: one row per intended write to the service (``docs/conventions.md`` §6 Writes).

The protocol: :meth:`record_intent` → :meth:`claim` → send → :meth:`mark_sent` (job or resource
id) → :meth:`mark_confirmed` / :meth:`mark_failed`; :meth:`mark_unknown` when the answer was lost.

Who sends is decided by one conditional ``UPDATE ... WHERE key = :key AND state IN (claimable)``
and its row count, the same statement on both databases. PostgreSQL (read committed) makes a
second worker wait for the first one's row lock and then re-checks the condition against the
committed row, which no longer matches; SQLite serialises writers (WAL + busy timeout). Either way
exactly one worker sees one updated row. This was chosen over ``SELECT ... FOR UPDATE SKIP
LOCKED`` because it needs no second statement, holds the lock only for the update itself, and
behaves the same on SQLite, where row locks do not exist.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import timedelta
from typing import Any

from sqlalchemy import Connection, RowMapping, and_, case, func, literal, or_, select, update
from sqlalchemy.sql.elements import ColumnElement

from ledger._base import LedgerBase, insert_or_ignore
from ledger._engine import check_json
from ledger._models import KEY_LENGTH, Base, OperationRow
from ledger._types import UTCDateTime
from ledger.errors import InvalidTransition, LedgerConflict, UnknownOperation
from ledger.records import UNSETTLED_STATES, IntentResult, Operation, OperationState

OPS = Base.metadata.tables[OperationRow.__tablename__]
S = OperationState
CLAIMABLE = (S.INTENDED.value, S.UNKNOWN.value)
OPEN = tuple(state.value for state in UNSETTLED_STATES)
IN_FLIGHT = and_(OPS.c.state == S.SENT.value, OPS.c.remote_id.is_(None))


class OperationsMixin(LedgerBase):
    """The operations half of :class:`~ledger.Ledger`."""

    def record_intent(
        self,
        *,
        key: str,
        kind: str,
        biller: str,
        request_digest: str,
        run_id: str | None = None,
        payload: dict[str, Any] | None = None,
    ) -> IntentResult:
        """Record that a write is about to be sent, or find the row an earlier run recorded.

        The same key with a different request digest (or kind, or biller) raises
        :class:`LedgerConflict`: a key must always describe the same request.
        """
        _require_text(key=key, kind=kind, biller=biller, request_digest=request_digest)
        if len(key) > KEY_LENGTH:
            raise ValueError(f"operation key is {len(key)} characters long; at most {KEY_LENGTH}")
        check_json(f"payload of operation {key!r}", payload)
        now = self._now()
        values = {
            "key": key,
            "kind": kind,
            "biller": biller,
            "request_digest": request_digest,
            "state": S.INTENDED.value,
            "run_id": run_id,
            "payload": payload,
            "attempts": 0,
            "created_at": now,
            "updated_at": now,
        }
        with self._begin() as connection:
            created = insert_or_ignore(connection, OPS, values, ["key"])
            op = _fetch(connection, key)
        assert op is not None, "the row was inserted or already there"
        mine = (kind, biller, request_digest)
        if (op.kind, op.biller, op.request_digest) != mine:
            raise LedgerConflict(
                f"operation key {key!r} is already recorded for a different request "
                f"(kind {op.kind!r}, biller {op.biller!r}, digest {op.request_digest!r}; this one: "
                f"kind {kind!r}, biller {biller!r}, digest {request_digest!r}). A key must be "
                "derived from everything that makes the request what it is."
            )
        return IntentResult(operation=op, created=created)

    def claim(
        self,
        key: str,
        *,
        worker: str,
        stale_after: timedelta | None = None,
        holder_dead: Callable[[Operation], bool] | None = None,
    ) -> Operation | None:
        """Take the right to send: ``intended``/``unknown`` → ``sent`` (in flight, ``worker``).

        Returns the claimed operation, or None when it is not this worker's to send: another
        worker holds it, its job id is known (poll it instead), or it is settled.

        An in-flight claim (its worker never recorded the service's answer) is taken over when
        it is older than ``stale_after``, or when ``holder_dead(operation)`` says its worker is
        gone (e.g. same host, process no longer running); otherwise never. A take-over only
        succeeds if nobody claimed the operation in between (its attempt count is the version).
        """
        _require_text(worker=worker)
        now = self._now()
        claimable: ColumnElement[bool] = OPS.c.state.in_(CLAIMABLE)
        if stale_after is not None:
            since = func.coalesce(OPS.c.claimed_at, OPS.c.sent_at, OPS.c.updated_at)
            cutoff = literal(now - stale_after, UTCDateTime())
            claimable = or_(claimable, and_(IN_FLIGHT, since <= cutoff))
        won, op = self._claim_where(key, claimable, worker)
        if not won and op is not None and op.in_flight and holder_dead and holder_dead(op):
            same_claim = and_(
                IN_FLIGHT,
                OPS.c.attempts == op.attempts,
                func.coalesce(OPS.c.claimed_by, "") == (op.claimed_by or ""),
            )
            won, op = self._claim_where(key, same_claim, worker)
        if op is None:
            raise UnknownOperation(f"no operation {key!r} in the ledger (record_intent first)")
        return op if won else None

    def _claim_where(
        self, key: str, condition: ColumnElement[bool], worker: str
    ) -> tuple[bool, Operation | None]:
        now = self._now()
        stmt = (
            update(OPS)
            .where(OPS.c.key == key, condition)
            .values(
                state=S.SENT.value,
                claimed_by=worker,
                claimed_at=now,
                sent_at=now,
                attempts=OPS.c.attempts + 1,
                remote_id=None,
                error=None,
                updated_at=now,
            )
        )
        with self._begin() as connection:
            won = connection.execute(stmt).rowcount == 1
            return won, _fetch(connection, key)

    def release(self, key: str, *, reason: str) -> Operation:
        """Hand an operation the service never received back to ``intended`` (sendable again)."""
        released = or_(OPS.c.state == S.UNKNOWN.value, IN_FLIGHT)
        values = {"state": S.INTENDED.value, "claimed_by": None, "error": reason}
        return self._transition(key, released, values, S.INTENDED)

    def mark_sent(self, key: str, *, remote_id: str | None = None) -> Operation:
        """The service accepted the write; ``remote_id`` names its job or resource."""
        values: dict[str, Any] = {
            "state": S.SENT.value,
            "sent_at": func.coalesce(OPS.c.sent_at, literal(self._now(), UTCDateTime())),
            # A send that skipped claim() still counts as an attempt.
            "attempts": case(
                (OPS.c.state == S.INTENDED.value, OPS.c.attempts + 1), else_=OPS.c.attempts
            ),
            "error": None,
        }
        if remote_id is not None:
            values["remote_id"] = remote_id
        return self._transition(key, OPS.c.state.in_(OPEN), values, S.SENT)

    def mark_confirmed(
        self, key: str, *, remote_id: str | None = None, result: dict[str, Any] | None = None
    ) -> Operation:
        """The write happened and is final. Confirming a confirmed operation changes nothing."""
        check_json(f"result of operation {key!r}", result)
        values: dict[str, Any] = {
            "state": S.CONFIRMED.value,
            "result": result,
            "error": None,
            "settled_at": self._now(),
        }
        if remote_id is not None:
            values["remote_id"] = remote_id
        return self._transition(key, OPS.c.state.in_(OPEN), values, S.CONFIRMED)

    def mark_failed(self, key: str, *, error: str) -> Operation:
        """The service refused the write (final). Failing a failed operation changes nothing."""
        values = {"state": S.FAILED.value, "error": error, "settled_at": self._now()}
        return self._transition(key, OPS.c.state.in_(OPEN), values, S.FAILED)

    def mark_unknown(self, key: str, *, error: str) -> Operation:
        """The answer was lost: ask the service before sending again."""
        values = {"state": S.UNKNOWN.value, "error": error}
        return self._transition(key, OPS.c.state.in_(OPEN), values, S.UNKNOWN)

    def get(self, key: str) -> Operation | None:
        """The operation recorded under ``key``, if any."""
        with self._begin() as connection:
            return _fetch(connection, key)

    def unsettled(
        self, *, biller: str | None = None, kinds: Sequence[str] | None = None
    ) -> list[Operation]:
        """Operations left ``intended``, ``sent`` or ``unknown``, oldest first."""
        return self.operations(states=UNSETTLED_STATES, biller=biller, kinds=kinds)

    def operations(
        self,
        *,
        states: Sequence[OperationState] | None = None,
        biller: str | None = None,
        kinds: Sequence[str] | None = None,
    ) -> list[Operation]:
        """Operations matching every filter given, oldest first."""
        stmt = select(OPS).order_by(OPS.c.created_at, OPS.c.id)
        if states is not None:
            stmt = stmt.where(OPS.c.state.in_([OperationState(s).value for s in states]))
        if biller is not None:
            stmt = stmt.where(OPS.c.biller == biller)
        if kinds is not None:
            stmt = stmt.where(OPS.c.kind.in_(list(kinds)))
        with self._begin() as connection:
            return [_operation(row) for row in connection.execute(stmt).mappings()]

    def state_counts(self, *, biller: str | None = None) -> dict[OperationState, int]:
        """How many operations are in each state (every state listed, zeros included)."""
        stmt = select(OPS.c.state, func.count()).group_by(OPS.c.state)
        if biller is not None:
            stmt = stmt.where(OPS.c.biller == biller)
        with self._begin() as connection:
            found = {str(state): int(count) for state, count in connection.execute(stmt)}
        return {state: found.get(state.value, 0) for state in OperationState}

    def _transition(
        self,
        key: str,
        allowed: ColumnElement[bool],
        values: Mapping[str, Any],
        target: OperationState,
    ) -> Operation:
        stmt = update(OPS).where(OPS.c.key == key, allowed).values(updated_at=self._now(), **values)
        with self._begin() as connection:
            changed = connection.execute(stmt).rowcount == 1
            op = _fetch(connection, key)
        if op is None:
            raise UnknownOperation(f"no operation {key!r} in the ledger (record_intent first)")
        if changed or (op.state == target and target.settled):
            return op
        raise InvalidTransition(
            f"operation {key!r} is {op.state.value}; it cannot become {target.value}"
            + (" (settled operations stay settled)" if op.state.settled else "")
        )


def _fetch(connection: Connection, key: str) -> Operation | None:
    row = connection.execute(select(OPS).where(OPS.c.key == key)).mappings().one_or_none()
    return None if row is None else _operation(row)


def _operation(row: RowMapping) -> Operation:
    return Operation(
        key=row["key"],
        kind=row["kind"],
        biller=row["biller"],
        request_digest=row["request_digest"],
        state=OperationState(row["state"]),
        remote_id=row["remote_id"],
        run_id=row["run_id"],
        payload=row["payload"],
        result=row["result"],
        error=row["error"],
        attempts=int(row["attempts"]),
        created_at=row["created_at"],
        updated_at=row["updated_at"],
        sent_at=row["sent_at"],
        settled_at=row["settled_at"],
        claimed_by=row["claimed_by"],
        claimed_at=row["claimed_at"],
    )


def _require_text(**fields: str) -> None:
    for name, value in fields.items():
        if not isinstance(value, str) or not value.strip():
            raise ValueError(f"{name} must be a non-empty string, got {value!r}")
