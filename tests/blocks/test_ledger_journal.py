"""The recovery journal in the ledger's database (SQLite and PostgreSQL), for workers on several
machines: never readable without its key, and a worker on another machine adopts what a worker
killed between the grant and the save left there."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from cryptography.fernet import Fernet
from sqlalchemy import create_engine, text
from sqlalchemy.engine import make_url

from billing_api import TokenSet
from blocks import BillerCredentials
from ledger._engine import parse_url
from ledger.migrate import upgrade_database
from ledger.token_journal import LedgerTokenJournal, TokenJournalKeyError
from tests.support.credentials import (
    refresh_grants,
    register_block_secrets,
    save_connected_block,
    unique_name,
)
from tests.support.ledger_db import ledger_url  # noqa: F401 - fixture
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret, register_tree

KEY = Fernet.generate_key().decode()
EXPIRES = datetime(2030, 1, 1, tzinfo=UTC)


@pytest.fixture
def migrated(ledger_url: str) -> Iterator[str]:  # noqa: F811 - the imported fixture
    upgrade_database(ledger_url)
    yield ledger_url


def _sealed(url: str, store: str) -> bytes:
    engine = create_engine(parse_url(url))
    try:
        with engine.connect() as conn:
            row = conn.execute(
                text("SELECT sealed FROM ledger_token_journal WHERE store = :s"), {"s": store}
            ).scalar_one()
        return bytes(row)
    finally:
        engine.dispose()


def test_records_round_trip_sealed_with_the_key(migrated: str) -> None:
    journal = LedgerTokenJournal(migrated, KEY)
    tokens = TokenSet("v1.ledger-journal-refresh-1", "ledger-journal-access-1", EXPIRES, 60.0, 4)
    try:
        journal.record_intent("acme", from_rotation=3)
        journal.record("acme", tokens)

        assert journal.state("acme").tokens == tokens and journal.state("acme").intent is None
        sealed = _sealed(migrated, "acme")
        assert tokens.refresh_token.encode() not in sealed
        assert tokens.access_token is not None and tokens.access_token.encode() not in sealed
        assert [(store, rotation) for store, rotation, _ in journal.pending()] == [("acme", 4)]
        with pytest.raises(TokenJournalKeyError, match="sealed with another key"):
            LedgerTokenJournal(migrated, Fernet.generate_key().decode()).state("acme")

        journal.settle("acme", stored_rotation=4)
        assert journal.state("acme").empty and journal.pending() == []
    finally:
        journal.close()


@pytest.mark.parametrize(
    ("key", "message"),
    [(None, "set BILLOPS_TOKEN_JOURNAL_KEY to a Fernet key"), ("short", "is not a Fernet key")],
)
def test_a_missing_or_malformed_key_is_refused_naming_the_variable(
    key: str | None, message: str
) -> None:
    with pytest.raises(TokenJournalKeyError, match=message):
        LedgerTokenJournal("sqlite://", key)


def test_a_ledger_without_the_table_says_to_run_setup(tmp_path: Path) -> None:
    journal = LedgerTokenJournal(f"sqlite:///{tmp_path}/empty.db", KEY)
    try:
        with pytest.raises(OSError, match="the table is missing: run billops setup"):
            journal.state("acme")
    finally:
        journal.close()


class Killed(BaseException):
    """Stands for the process dying between the grant and the save."""


def test_a_worker_on_another_machine_adopts_what_a_killed_one_left(
    prefect_api: str,
    admin: SandboxAdmin,
    migrated: str,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setenv("BILLOPS_LEDGER_URL", migrated)
    monkeypatch.setenv("BILLOPS_TOKEN_JOURNAL", "ledger")
    monkeypatch.setenv("BILLOPS_TOKEN_JOURNAL_KEY", KEY)
    name = unique_name("ledgerj")
    block, tokens = save_connected_block(admin, name, with_access_token=False)

    def die(new: TokenSet) -> None:
        register_secret(new.refresh_token)
        register_secret(new.access_token)
        raise Killed

    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path / "machine-a"))
    with pytest.raises(Killed):
        BillerCredentials.load_named(name).get_token_manager(after_grant=die).access_token()
    journal = LedgerTokenJournal(migrated, KEY)
    try:
        pending = journal.state(name).tokens
        assert pending is not None and pending.rotation == 1
        assert BillerCredentials.load_named(name).read().rotation == 0  # only the journal has it

        monkeypatch.setenv("BILLOPS_HOME", str(tmp_path / "machine-b"))
        token = BillerCredentials.load_named(name).get_token_manager().access_token()

        assert token == pending.access_token
        assert BillerCredentials.load_named(name).read() == pending
        assert journal.state(name).empty
        assert refresh_grants(admin, tokens.biller_id) == 1  # adopted, not granted again
        assert not (tmp_path / "machine-a" / "recovery").exists()  # nothing on local disks
    finally:
        journal.close()
        register_block_secrets(block)
    # The tokens are in the block and, sealed, in the ledger: on no disk in the clear, the
    # ledger's own file (and the refresh locks beside it) included.
    register_tree(tmp_path, label="both machines' BILLOPS_HOME")
    database = make_url(migrated).database
    if make_url(migrated).get_backend_name() == "sqlite" and database:
        register_tree(Path(database).parent, label="the SQLite ledger and its locks")
