"""Counters of what the service saw, so tests can assert on it (``GET /_sandbox/stats``).

Grants and bulk-import jobs are counted in the transaction that makes them. Requests are counted
off the request's transaction, in memory (:class:`RequestCounts`), and written to the database
in the background: a faithful service never fails a request over its own bookkeeping, and a
read of the stats adds what is not written yet.
"""

from __future__ import annotations

import logging
import threading
from collections import Counter as Tally
from collections import defaultdict
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session, sessionmaker

from sandbox.models import Counter

TOKEN_GRANTS = "token_grants"
INVALID_GRANT = "invalid_grant"
REQUESTS = "requests"
BULK_IMPORT_JOBS = "bulk_import_jobs"

_JSON_NAMES = {
    TOKEN_GRANTS: "tokenGrants",
    INVALID_GRANT: "invalidGrant",
    REQUESTS: "requests",
    BULK_IMPORT_JOBS: "bulkImportJobs",
}


def increment(session: Session, owner: str, name: str, key: str = "", by: int = 1) -> None:
    """Add ``by`` to one counter with a single upsert (atomic under concurrent requests)."""
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(Counter).values(owner=owner, name=name, key=key, count=by)
    stmt = stmt.on_conflict_do_update(
        index_elements=["owner", "name", "key"], set_={"count": Counter.count + by}
    )
    session.execute(stmt)


log = logging.getLogger(__name__)


class RequestCounts:
    """Per-operation request counts not yet written to the database (one per sandbox app)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._writing = threading.Lock()  # a flush, or a reset that must not race one
        self._pending: Tally[tuple[str, str]] = Tally()

    def add(self, owner: str, operation_id: str) -> None:
        """Count one request; never touches the database, so it cannot fail."""
        with self._lock:
            self._pending[(owner, operation_id)] += 1

    def pending(self) -> dict[tuple[str, str], int]:
        with self._lock:
            return dict(self._pending)

    def read(self, session: Session, owner: str | None) -> dict[str, Any]:
        """:func:`snapshot` with the pending counts added (no flush runs meanwhile, so nothing
        is counted twice or missed)."""
        with self._writing:
            return snapshot(session, owner, self.pending())

    @contextmanager
    def reset(self) -> Iterator[None]:
        """Forget the pending counts when the block ends (it clears the database meanwhile);
        no flush runs in between."""
        with self._writing:
            yield
            with self._lock:
                self._pending.clear()

    def flush(self, sessions: sessionmaker[Session]) -> None:
        """Write the pending counts in one transaction; on failure they stay pending."""
        with self._writing:
            with self._lock:
                taken, self._pending = self._pending, Tally()
            if not taken:
                return
            try:
                with sessions() as session, session.begin():
                    for (owner, operation_id), count in taken.items():
                        increment(session, owner, REQUESTS, operation_id, by=count)
            except SQLAlchemyError:
                log.warning("request counters not written yet; they are kept for the next try")
                with self._lock:
                    self._pending.update(taken)


class CounterFlusher:
    """A background thread that writes :class:`RequestCounts` every ``interval`` seconds, and
    once more when it stops."""

    def __init__(
        self, counts: RequestCounts, sessions: sessionmaker[Session], interval: float = 1.0
    ) -> None:
        self._counts, self._sessions, self._interval = counts, sessions, interval
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        self._stop.clear()
        self._thread = threading.Thread(target=self._run, name="sandbox-counters", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(10)
            self._thread = None
        self._counts.flush(self._sessions)

    def _run(self) -> None:
        while not self._stop.wait(self._interval):
            try:
                self._counts.flush(self._sessions)
            except Exception:  # the thread must outlive any one failure; the log says what
                log.exception("request counters: flush failed")


def snapshot(
    session: Session,
    owner: str | None = None,
    pending: dict[tuple[str, str], int] | None = None,
) -> dict[str, Any]:
    """``{"billers": {id: {...}}, "apps": {clientId: {...}}, "anonymous": {...}}``.

    Per owner: ``tokenGrants`` and ``requests`` are maps (grant type, operationId → count);
    ``invalidGrant`` and ``bulkImportJobs`` are plain counts.
    """
    query = select(Counter)
    if owner is not None:
        query = query.where(Counter.owner == owner)
    result: dict[str, Any] = {"billers": {}, "apps": {}, "anonymous": {}}
    per_owner: dict[str, dict[str, Any]] = defaultdict(dict)
    rows = [(c.owner, c.name, c.key, c.count) for c in session.scalars(query)]
    rows += [
        (who, REQUESTS, operation_id, count)
        for (who, operation_id), count in (pending or {}).items()
        if owner is None or who == owner
    ]
    for who, name, key, count in rows:
        family = _JSON_NAMES.get(name, name)
        if name in (INVALID_GRANT, BULK_IMPORT_JOBS):
            per_owner[who][family] = per_owner[who].get(family, 0) + count
        else:
            members = per_owner[who].setdefault(family, {})
            members[key] = members.get(key, 0) + count
    for key, counters in per_owner.items():
        kind, _, ident = key.partition(":")
        if kind == "biller":
            result["billers"][ident] = counters
        elif kind == "app":
            result["apps"][ident] = counters
        else:
            result["anonymous"] = counters
    return result
