"""The ledger's plumbing: its engine, its clock, short transactions, portable upserts."""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from contextlib import contextmanager
from datetime import datetime
from typing import Any, Self

from sqlalchemy import Connection, Engine, Table, insert, inspect
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.exc import IntegrityError

from ledger._engine import make_engine, safe_url
from ledger._models import Base
from ledger._types import utcnow
from ledger.errors import LedgerSchemaError
from ledger.migrate import engine_revision, head_revision, sqlite_file_missing, upgrade_engine

Clock = Callable[[], datetime]


class LedgerBase:
    """Holds the engine and the clock; every public method runs in its own short transaction."""

    def __init__(self, url: str, *, create: bool = True, clock: Clock | None = None) -> None:
        """Open the ledger at ``url`` (any SQLAlchemy URL; ``postgresql://`` uses psycopg 3).

        With ``create`` the schema is created or upgraded first (idempotent); without it a
        ledger that does not exist (a SQLite file is then not created), is not at the newest
        schema, or lacks one of its tables is refused with :class:`LedgerSchemaError`.
        ``clock`` (aware UTC ``datetime``) is for tests that need time to pass.
        """
        if not create and sqlite_file_missing(url):
            raise LedgerSchemaError(
                f"there is no ledger at {safe_url(url)}: `billops setup` (or `billops db "
                "upgrade`) creates it; every other command refuses to start a new one"
            )
        self._setup(make_engine(url), create=create, clock=clock, owns_engine=True)

    @classmethod
    def from_engine(
        cls, engine: Engine, *, create: bool = True, clock: Clock | None = None
    ) -> Self:
        """A ledger on an engine the caller made (and disposes of)."""
        ledger = cls.__new__(cls)
        ledger._setup(engine, create=create, clock=clock, owns_engine=False)
        return ledger

    def _setup(
        self, engine: Engine, *, create: bool, clock: Clock | None, owns_engine: bool
    ) -> None:
        self._engine = engine
        self._clock: Clock = clock or utcnow
        self._owns_engine = owns_engine
        try:
            if create:
                upgrade_engine(engine)
            else:
                self._require_head()
        except BaseException:
            if owns_engine:
                engine.dispose()
            raise

    def _require_head(self) -> None:
        current, head = engine_revision(self._engine), head_revision()
        if current != head:
            raise LedgerSchemaError(
                f"the ledger at {self.url} has schema revision {current or 'none'} and this "
                f"billops needs {head}: run `billops db upgrade` first"
            )
        with self._engine.connect() as connection:
            present = set(inspect(connection).get_table_names())
        missing = sorted(set(Base.metadata.tables) - present)
        if missing:
            raise LedgerSchemaError(
                f"the ledger at {self.url} lacks its table(s) {', '.join(missing)}: it was "
                "damaged or replaced; restore it from a backup (nothing was sent)"
            )

    @property
    def url(self) -> str:
        """The ledger's URL with any password hidden (safe to print and log)."""
        return safe_url(self._engine.url)

    @property
    def engine(self) -> Engine:
        """The SQLAlchemy engine (for tests and maintenance; jobs use the methods)."""
        return self._engine

    def close(self) -> None:
        """Release the connections (only those of an engine the ledger created)."""
        if self._owns_engine:
            self._engine.dispose()

    def __enter__(self) -> Self:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"{type(self).__name__}({self.url!r})"

    def _now(self) -> datetime:
        now = self._clock()
        if now.tzinfo is None:
            raise ValueError("the ledger's clock must return timezone-aware datetimes")
        return now

    @contextmanager
    def _begin(self) -> Iterator[Connection]:
        with self._engine.begin() as connection:
            yield connection


def insert_or_ignore(
    connection: Connection, table: Table, values: Mapping[str, Any], conflict: Sequence[str]
) -> bool:
    """Insert ``values`` unless a row with the same ``conflict`` columns exists; True if inserted.

    Uses ``ON CONFLICT DO NOTHING`` where the database has it, so a concurrent insert of the same
    key neither fails nor aborts the transaction; elsewhere a savepoint catches the duplicate.
    """
    dialect = connection.dialect.name
    if dialect in ("sqlite", "postgresql"):
        module: Any = sqlite if dialect == "sqlite" else postgresql
        stmt = module.insert(table).values(**values).on_conflict_do_nothing(index_elements=conflict)
        # RETURNING, not rowcount: drivers disagree on rowcount when nothing was inserted.
        returning = stmt.returning(*table.primary_key.columns)
        return connection.execute(returning).first() is not None
    try:
        with connection.begin_nested():
            connection.execute(insert(table).values(**values))
    except IntegrityError:
        return False
    return True


def upsert(
    connection: Connection,
    table: Table,
    rows: Sequence[Mapping[str, Any]],
    conflict: Sequence[str],
    update: Sequence[str],
) -> None:
    """Insert ``rows``; where one exists with the same ``conflict`` columns, update ``update``."""
    if not rows:
        return
    dialect = connection.dialect.name
    if dialect in ("sqlite", "postgresql"):
        module: Any = sqlite if dialect == "sqlite" else postgresql
        stmt = module.insert(table)
        stmt = stmt.on_conflict_do_update(
            index_elements=conflict, set_={name: stmt.excluded[name] for name in update}
        )
        connection.execute(stmt, list(rows))
        return
    for row in rows:
        if not insert_or_ignore(connection, table, row, conflict):
            where = [table.c[name] == row[name] for name in conflict]
            connection.execute(
                table.update().where(*where).values({name: row[name] for name in update})
            )
