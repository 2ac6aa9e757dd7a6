"""Engine and session factories for the sandbox's state.

The sandbox builds its schema with ``create_all`` rather than migrations: its state is disposable
test data, and ``POST /_sandbox/reset`` or a new file gives a clean start. (The ledger, whose data
matters, uses Alembic.)
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from sqlalchemy import Engine, create_engine, event
from sqlalchemy.orm import Session, sessionmaker

from sandbox.models import Base


def make_engine(url: str) -> Engine:
    """Create an engine for ``url``; SQLite gets WAL, a busy timeout and write-locking transactions.

    On SQLite every transaction starts with ``BEGIN IMMEDIATE``: the sandbox serves requests from a
    thread pool, and a deferred transaction that reads and then writes can fail with "database is
    locked" when another writer committed in between. Taking the write lock up front serialises
    writers cleanly (the busy timeout makes them wait) at a throughput cost a test server can bear.
    """
    if url.startswith("postgresql://"):
        # The psycopg 3 driver is what billops installs; plain "postgresql://" means psycopg2.
        url = "postgresql+psycopg://" + url.removeprefix("postgresql://")
    if not url.startswith("sqlite"):
        return create_engine(url, pool_pre_ping=True, pool_size=10, max_overflow=20)

    engine = create_engine(url, connect_args={"timeout": 30, "check_same_thread": False})

    @event.listens_for(engine, "connect")
    def _on_connect(dbapi_connection, _record):  # type: ignore[no-untyped-def]
        dbapi_connection.isolation_level = None  # let the "begin" hook below issue BEGIN
        cursor = dbapi_connection.cursor()
        if url not in ("sqlite://", "sqlite:///:memory:"):
            cursor.execute("PRAGMA journal_mode=WAL")
        cursor.execute("PRAGMA foreign_keys=ON")
        cursor.close()

    @event.listens_for(engine, "begin")
    def _on_begin(conn):  # type: ignore[no-untyped-def]
        conn.exec_driver_sql("BEGIN IMMEDIATE")

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
