"""Create or upgrade the ledger's schema with the Alembic migrations shipped in this package.

No ``alembic.ini`` is needed: the configuration is built here, and ``billops db upgrade`` (also run
by ``billops setup``, and by :class:`~ledger.Ledger` on opening) calls :func:`upgrade_database`.

Each job adds its tables in a migration of its own that revises the migration it builds on (most
revise ``0001``), so the migrations may form several independent branches: the schema's revision
is then the sorted set of branch heads joined by ``+`` (``0003+0005``), and an upgrade goes to every
head. A later merge migration may join the branches; nothing here depends on there being one head.

The version table is ``ledger_alembic_version``, not Alembic's default, so the ledger can share a
PostgreSQL database with other Alembic users (a Prefect server keeps its own ``alembic_version``).

Concurrent upgrades (two workers starting at once on a fresh database) are serialised: on
PostgreSQL by a transaction-scoped advisory lock, on SQLite by ``BEGIN IMMEDIATE`` (the write
lock); the second one then finds the schema at head and does nothing. Both databases run DDL in
transactions, so a failed upgrade leaves the schema as it was.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory
from alembic.util import CommandError
from sqlalchemy import Connection, Engine, text
from sqlalchemy.exc import DBAPIError

from ledger._engine import make_engine, parse_url, redact, safe_url
from ledger.errors import LedgerConfigError, LedgerSchemaError

MIGRATIONS = Path(__file__).resolve().parent / "migrations"
VERSION_TABLE = "ledger_alembic_version"
# Arbitrary, but the same in every billops process: the advisory lock that serialises upgrades.
_ADVISORY_LOCK_ID = 7_306_041_981_234_567


def alembic_config(connection: Connection | None = None) -> Config:
    """The Alembic configuration of the ledger, optionally bound to an open connection."""
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    config.attributes["version_table"] = VERSION_TABLE
    if connection is not None:
        config.attributes["connection"] = connection
    return config


REVISION_SEPARATOR = "+"


def _label(heads: tuple[str, ...] | list[str]) -> str | None:
    """One printable revision for a set of branch heads (None for none)."""
    return REVISION_SEPARATOR.join(sorted(heads)) or None


def head_revision() -> str:
    """The newest schema this billops ships: its migrations' heads, joined by ``+``."""
    label = _label(ScriptDirectory.from_config(alembic_config()).get_heads())
    if label is None:
        raise LedgerSchemaError(f"no ledger migrations found in {MIGRATIONS}")
    return label


def upgrade_database(url: str) -> None:
    """Bring the ledger at ``url`` to the newest schema; a no-op when it is there already."""
    engine = make_engine(url)
    try:
        upgrade_engine(engine)
    finally:
        engine.dispose()


def current_revision(url: str) -> str | None:
    """The schema revision of the ledger at ``url`` (None for a database without a ledger).

    A SQLite file that does not exist is reported as None and not created.
    """
    if sqlite_file_missing(url):
        return None
    engine = make_engine(url)
    try:
        return engine_revision(engine)
    finally:
        engine.dispose()


def sqlite_file_missing(url: str) -> bool:
    """True for a SQLite URL whose file does not exist yet (connecting would create it)."""
    parsed = parse_url(url)
    if parsed.get_backend_name() != "sqlite" or parsed.database in (None, "", ":memory:"):
        return False
    return not Path(str(parsed.database)).expanduser().exists()


def engine_revision(engine: Engine) -> str | None:
    """The schema revision of the ledger behind ``engine``."""
    with connect(engine) as connection:
        return _revision(connection)


def upgrade_engine(engine: Engine) -> None:
    """:func:`upgrade_database` on an engine the caller keeps."""
    head = head_revision()
    if engine_revision(engine) == head:
        return
    with connect(engine) as connection:
        _lock_for_migration(connection)
        current = _revision(connection)
        if current == head:
            connection.rollback()
            return
        _check_known(current, engine)
        try:
            command.upgrade(alembic_config(connection), "heads")
        except DBAPIError as exc:
            connection.rollback()
            raise LedgerSchemaError(
                f"upgrading the ledger at {safe_url(engine.url)} failed: "
                f"{redact(str(exc.orig or exc)).splitlines()[0]}"
            ) from None
        connection.commit()


def downgrade_engine(engine: Engine, revision: str = "base") -> None:
    """Take the schema back to ``revision`` (``base`` drops every ledger table). For tests/ops."""
    with connect(engine) as connection:
        _lock_for_migration(connection)
        command.downgrade(alembic_config(connection), revision)
        connection.commit()


@contextmanager
def connect(engine: Engine) -> Iterator[Connection]:
    """A connection, with "cannot connect" turned into an error naming the (safe) URL."""
    try:
        connection = engine.connect()
    except DBAPIError as exc:
        reason = redact(str(exc.orig or exc)).strip().splitlines()
        raise LedgerConfigError(
            f"cannot connect to the ledger at {safe_url(engine.url)}: "
            f"{reason[0] if reason else type(exc).__name__}"
        ) from None
    with connection:
        yield connection


def _revision(connection: Connection) -> str | None:
    context = MigrationContext.configure(connection, opts={"version_table": VERSION_TABLE})
    return _label(context.get_current_heads())


def _lock_for_migration(connection: Connection) -> None:
    if connection.dialect.name == "postgresql":
        connection.execute(text("SELECT pg_advisory_xact_lock(:id)"), {"id": _ADVISORY_LOCK_ID})
    elif connection.dialect.name == "sqlite":
        connection.exec_driver_sql("BEGIN IMMEDIATE")


def _check_known(current: str | None, engine: Engine) -> None:
    if current is None:
        return
    try:
        script = ScriptDirectory.from_config(alembic_config())
        for revision in current.split(REVISION_SEPARATOR):
            script.get_revision(revision)
    except CommandError:
        raise LedgerSchemaError(
            f"the ledger at {safe_url(engine.url)} is at schema revision {current!r}, which this "
            "billops does not know: it was upgraded by a newer billops (upgrade billops itself)"
        ) from None
