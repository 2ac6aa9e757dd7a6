"""The schema: created from nothing, upgraded idempotently, the same as the models, in-package."""

from __future__ import annotations

import multiprocessing
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

import ledger
from ledger import Ledger, LedgerSchemaError, current_revision, head_revision, upgrade_database
from ledger._engine import parse_url
from ledger._models import Base
from ledger.migrate import MIGRATIONS, VERSION_TABLE, downgrade_engine
from tests.ledger.conftest import LEDGER_TABLES


def tables(url: str) -> set[str]:
    engine = create_engine(parse_url(url))
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_creates_the_schema_and_is_idempotent(ledger_url: str) -> None:
    assert current_revision(ledger_url) is None
    upgrade_database(ledger_url)
    assert current_revision(ledger_url) == head_revision() == "0001"
    assert {*LEDGER_TABLES, VERSION_TABLE} <= tables(ledger_url)
    with Ledger(ledger_url) as opened:
        opened.record_intent(key="k", kind="x", biller="b", request_digest="d")
    upgrade_database(ledger_url)  # again: nothing changes, nothing is lost
    with Ledger(ledger_url, create=False) as reopened:
        assert reopened.get("k") is not None


def test_the_migrations_build_exactly_the_models(ledger_url: str) -> None:
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    try:
        with engine.connect() as connection:
            context = MigrationContext.configure(
                connection, opts={"compare_type": True, "version_table": VERSION_TABLE}
            )
            diff = compare_metadata(context, Base.metadata)
    finally:
        engine.dispose()
    assert [d for d in diff if "ledger_" in repr(d)] == []


def test_downgrade_to_base_and_up_again(ledger_url: str) -> None:
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    try:
        downgrade_engine(engine, "base")
    finally:
        engine.dispose()
    assert not set(LEDGER_TABLES) & tables(ledger_url)
    upgrade_database(ledger_url)
    assert current_revision(ledger_url) == head_revision()


def test_opening_without_create_refuses_a_database_without_schema(ledger_url: str) -> None:
    with pytest.raises(LedgerSchemaError, match=r"schema revision none .* `billops db upgrade`"):
        Ledger(ledger_url, create=False)


def test_a_schema_from_a_newer_billops_is_refused(ledger_url: str) -> None:
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    try:
        with engine.begin() as connection:
            connection.execute(text(f"UPDATE {VERSION_TABLE} SET version_num = '9999'"))
        with pytest.raises(LedgerSchemaError, match="revision '9999'.*newer billops"):
            Ledger.from_engine(engine)
    finally:
        engine.dispose()


def test_status_of_a_missing_sqlite_file_does_not_create_it(tmp_path: Path) -> None:
    path = tmp_path / "never.db"
    assert current_revision(f"sqlite:///{path}") is None
    assert not path.exists()


def test_processes_upgrading_at_once_both_succeed(ledger_url: str) -> None:
    context = multiprocessing.get_context("spawn")
    processes = [context.Process(target=upgrade_database, args=(ledger_url,)) for _ in range(2)]
    for process in processes:
        process.start()
    for process in processes:
        process.join(timeout=120)
    assert [p.exitcode for p in processes] == [0, 0]
    assert current_revision(ledger_url) == head_revision()


def test_the_migrations_live_inside_the_package() -> None:
    package = Path(ledger.__file__).parent
    assert MIGRATIONS.parent == package
    assert (MIGRATIONS / "env.py").is_file()
    assert list((MIGRATIONS / "versions").glob("r0001_*.py"))
    assert not list(package.rglob("alembic.ini")), "configured in code, no ini file"
