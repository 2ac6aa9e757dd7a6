"""Engine and session factories for the sandbox's state.

The sandbox builds its schema with ``create_all`` rather than migrations: its state is disposable
test data, and ``POST /_sandbox/reset`` or a new file gives a clean start. (The ledger, whose data
matters, uses Alembic.)
"""

from __future__ import annotations

import logging
import threading
from collections import deque
from collections.abc import Iterator
from contextlib import contextmanager
from typing import Any

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from sandbox.core.bodies import dumps
from sandbox.models import Base

log = logging.getLogger(__name__)
# How long a transaction waits for its turn before it tries anyway (then SQLite's own busy
# timeout decides): far longer than any one transaction of the sandbox holds the database.
GATE_TIMEOUT_SECONDS = 120.0
BUSY_TIMEOUT_SECONDS = 60


class WriteGate:
    """One transaction at a time on a SQLite database, in the order they asked.

    SQLite has one writer at a time, and its busy handler is not fair: a waiting connection sleeps
    and retries, so a busy writer that commits and begins again at once (the bulk-import worker,
    chunk after chunk) can keep the lock for longer than any busy timeout, and the others fail
    with "database is locked". The gate queues transactions in arrival order and hands the turn
    to the next one when a transaction ends, so nobody starves.
    """

    def __init__(self, timeout: float = GATE_TIMEOUT_SECONDS) -> None:
        self.timeout = timeout
        self._lock = threading.Lock()
        self._held = False
        self._waiting: deque[threading.Event] = deque()

    def acquire(self) -> bool:
        """Wait for the turn; False when it did not come within the timeout."""
        with self._lock:
            if not self._held and not self._waiting:
                self._held = True
                return True
            turn = threading.Event()
            self._waiting.append(turn)
        if turn.wait(self.timeout):
            return True
        with self._lock:
            if turn in self._waiting:
                self._waiting.remove(turn)
                return False
        return True  # handed over just as the wait timed out

    def release(self) -> None:
        with self._lock:
            if self._waiting:
                self._waiting.popleft().set()  # the turn passes on; the gate stays held
            else:
                self._held = False


def _install_gate(engine: Engine) -> None:
    gate = WriteGate()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # type: ignore[no-untyped-def]
        if gate.acquire():
            conn.info["holds_write_gate"] = True
        else:
            log.warning(
                "a transaction waited %s s for its turn; trying anyway", GATE_TIMEOUT_SECONDS
            )
        try:
            conn.exec_driver_sql("BEGIN IMMEDIATE")
        except Exception:
            _release(conn.info)
            raise

    def _release(info: dict[str, Any]) -> None:
        if info.pop("holds_write_gate", False):
            gate.release()

    @event.listens_for(engine, "commit")
    def _on_commit(conn):  # type: ignore[no-untyped-def]
        _release(conn.info)

    @event.listens_for(engine, "rollback")
    def _on_rollback(conn):  # type: ignore[no-untyped-def]
        _release(conn.info)

    @event.listens_for(engine, "checkin")
    def _on_checkin(_dbapi_connection, record):  # type: ignore[no-untyped-def]
        _release(record.info)  # a connection returned without commit or rollback


def make_engine(url: str) -> Engine:
    """Create an engine for ``url``; SQLite gets WAL, a busy timeout and one writer at a time.

    On SQLite every transaction starts with ``BEGIN IMMEDIATE``: the sandbox serves requests from a
    thread pool, and a deferred transaction that reads and then writes can fail with "database is
    locked" when another writer committed in between. Transactions take turns through a
    :class:`WriteGate` (first come, first served), so a long import never starves a request.
    """
    if url.startswith("postgresql://"):
        # The psycopg 3 driver is what billops installs; plain "postgresql://" means psycopg2.
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if not url.startswith("sqlite"):
        return create_engine(
            url, pool_pre_ping=True, pool_size=10, max_overflow=20, json_serializer=dumps
        )

    engine = create_engine(
        url,
        connect_args={"timeout": BUSY_TIMEOUT_SECONDS, "check_same_thread": False},
        json_serializer=dumps,  # JSON columns take bodies whose numbers are Decimal
    )

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None  # let the "begin" hook below issue BEGIN
        cursor = dbapi_connection.cursor()
        if url not in ("sqlite://", "sqlite:///:memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    _install_gate(engine)
    return engine


def init_schema(engine: Engine) -> None:
    """Create the tables that do not exist yet."""
    Base.metadata.create_all(engine)


def clear_all(engine: Engine) -> None:
    """Delete every row of every table (``POST /_sandbox/reset``)."""
    with engine.begin() as conn:
        for table in reversed(Base.metadata.sorted_tables):
            conn.execute(table.delete())


def make_session_factory(engine: Engine) -> sessionmaker[Session]:
    return sessionmaker(engine, expire_on_commit=False)


@contextmanager
def session_scope(factory: sessionmaker[Session]) -> Iterator[Session]:
    """One transaction: commit on success, roll back on any error."""
    with factory() as session, session.begin():
        yield session
