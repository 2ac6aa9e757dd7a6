"""The schema: created from nothing, upgraded idempotently, the same as the models, in-package."""

from __future__ import annotations

import multiprocessing
import shutil
from pathlib import Path

import pytest
from alembic.autogenerate import compare_metadata
from alembic.runtime.migration import MigrationContext
from sqlalchemy import create_engine, inspect, text

import ledger
from ledger import (
    Ledger,
    LedgerReplaced,
    LedgerSchemaError,
    current_revision,
    head_revision,
    upgrade_database,
)
from ledger._engine import parse_url
from ledger._models import Base
from ledger.migrate import MIGRATIONS, VERSION_TABLE, downgrade_engine
from tests.support.ledger_db import LEDGER_TABLES


def tables(url: str) -> set[str]:
    engine = create_engine(parse_url(url))
    try:
        return set(inspect(engine).get_table_names())
    finally:
        engine.dispose()


def test_upgrade_creates_the_schema_and_is_idempotent(ledger_url: str) -> None:
    assert current_revision(ledger_url) is None
    upgrade_database(ledger_url)
    assert current_revision(ledger_url) == head_revision()
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
    if ledger_url.startswith("sqlite"):
        Path(ledger_url.removeprefix("sqlite:///")).touch()  # a database, with no ledger in it
    with pytest.raises(LedgerSchemaError, match=r"schema revision none .* `billops db upgrade`"):
        Ledger(ledger_url, create=False)


def test_opening_without_create_refuses_a_missing_file_and_creates_none(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'absent.db'}"
    with pytest.raises(LedgerSchemaError, match=r"there is no ledger at .*`billops setup`"):
        Ledger(url, create=False)
    assert not (tmp_path / "absent.db").exists()


def test_opening_without_create_refuses_a_ledger_missing_a_table(ledger_url: str) -> None:
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    try:
        with engine.begin() as connection:
            connection.execute(text("DROP TABLE ledger_items"))
    finally:
        engine.dispose()
    with pytest.raises(LedgerSchemaError, match=r"lacks its table\(s\) ledger_items"):
        Ledger(ledger_url, create=False)


def test_each_ledger_has_an_identity_and_a_run_notices_a_swap(tmp_path: Path) -> None:
    path = tmp_path / "ledger.db"
    url = f"sqlite:///{path}"

    def remove() -> None:
        for suffix in ("", "-wal", "-shm"):
            Path(f"{path}{suffix}").unlink(missing_ok=True)

    with Ledger(url) as opened:
        identity = opened.ledger_id()
        opened.check_unchanged(identity)
        remove()
        with pytest.raises(LedgerReplaced, match="was deleted during the run"):
            opened.check_unchanged(identity)
        with Ledger(url) as fresh:  # somebody started a new ledger in its place
            assert fresh.ledger_id() != identity
        with pytest.raises(LedgerReplaced, match="not the one this run started with"):
            opened.check_unchanged(identity)


def test_a_schema_from_a_newer_billops_is_refused(ledger_url: str) -> None:
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    try:
        with engine.begin() as connection:
            # One row per branch head: replace them all by one unknown revision.
            connection.execute(text(f"DELETE FROM {VERSION_TABLE}"))
            connection.execute(text(f"INSERT INTO {VERSION_TABLE} VALUES ('9999')"))
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


def test_independent_branches_of_migrations_upgrade_to_every_head(
    ledger_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Jobs add their tables in branches of their own; the ledger goes to every head."""
    migrations = tmp_path / "migrations"
    shutil.copytree(MIGRATIONS, migrations, ignore=shutil.ignore_patterns("__pycache__"))
    for revision in ("9998", "9999"):
        (migrations / "versions" / f"r{revision}_branch.py").write_text(
            "import sqlalchemy as sa\nfrom alembic import op\n"
            f"revision = {revision!r}\ndown_revision = '0001'\n"
            "branch_labels = None\ndepends_on = None\n"
            f"def upgrade():\n    op.create_table('ledger_tmp_{revision}', "
            "sa.Column('id', sa.Integer, primary_key=True))\n"
            f"def downgrade():\n    op.drop_table('ledger_tmp_{revision}')\n"
        )
    shipped = set(head_revision().split("+"))
    monkeypatch.setattr("ledger.migrate.MIGRATIONS", migrations)
    expected = "+".join(sorted(shipped - {"0001"} | {"9998", "9999"}))
    assert head_revision() == expected
    upgrade_database(ledger_url)
    assert current_revision(ledger_url) == expected
    assert {"ledger_tmp_9998", "ledger_tmp_9999"} <= tables(ledger_url)
    with Ledger(ledger_url, create=False) as reopened:  # at head: no upgrade needed
        assert reopened.url
    monkeypatch.undo()  # this billops again: it does not know 9998 or 9999
    with pytest.raises(LedgerSchemaError, match="does not know"):
        Ledger(ledger_url)
