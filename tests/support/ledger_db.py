"""A clean ledger database per test, on SQLite and PostgreSQL, and a clock the test moves.

The PostgreSQL database of ``database_url`` is shared by the whole pytest session, so each test
drops the ledger's own tables first (and only those) and starts from an empty schema. Fixtures
for the ledger and CLI suites (their conftests import them).
"""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime, timedelta

import pytest
from sqlalchemy import create_engine, inspect, text

from ledger import Ledger
from ledger._engine import parse_url

LEDGER_TABLES = ("ledger_audit", "ledger_files", "ledger_items", "ledger_operations")


def drop_ledger_tables(url: str) -> None:
    """Remove every ledger table (all are named ``ledger_*``) and the version table, if present."""
    engine = create_engine(parse_url(url))
    try:
        with engine.begin() as connection:
            names = [n for n in inspect(connection).get_table_names() if n.startswith("ledger_")]
            cascade = " CASCADE" if connection.dialect.name == "postgresql" else ""
            for table in names:
                connection.execute(text(f"DROP TABLE IF EXISTS {table}{cascade}"))
    finally:
        engine.dispose()


@pytest.fixture
def ledger_url(database_url: str) -> str:
    """A database URL with no ledger in it yet."""
    if database_url.startswith("postgresql"):
        drop_ledger_tables(database_url)
    return database_url


class FakeClock:
    """A clock the test moves by hand (aware UTC), so time passes without sleeping."""

    def __init__(self, start: datetime | None = None) -> None:
        self.now = start or datetime(2026, 11, 22, 9, 0, tzinfo=UTC)

    def __call__(self) -> datetime:
        return self.now

    def advance(self, **delta: float) -> None:
        self.now += timedelta(**delta)


@pytest.fixture
def clock() -> FakeClock:
    return FakeClock()


@pytest.fixture
def ledger(ledger_url: str, clock: FakeClock) -> Iterator[Ledger]:
    """A freshly migrated, empty ledger whose time the test controls."""
    opened = Ledger(ledger_url, clock=clock)
    yield opened
    opened.close()
