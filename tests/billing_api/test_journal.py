"""The write-ahead journal and what the refresh procedure does with it, against the sandbox:
the new token set is on disk before the store is written, a worker that stopped between the
grant and the save is recovered by the next lock holder without a new grant, records go once the
store has them, and a refresh that died in flight is named when the token turns out dead."""

from __future__ import annotations

import json
import logging
import os
import stat
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest

from billing_api import (
    FileTokenStore,
    ReauthorizationRequired,
    RecoveryDirectory,
    TokenManager,
    TokenSet,
    read_recovery_file,
    recovery_file_path,
)
from tests.billing_api.oauth_helpers import close_oauth_clients, expired_set, file_store, oauth_for
from tests.support.credentials import token_grants
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

ROOT = Path(__file__).resolve().parents[2]
NOTE_INTENT = """
import os, sys
from pathlib import Path
from billing_api import RecoveryDirectory
RecoveryDirectory(Path(sys.argv[1])).record_intent("acme", from_rotation=0)
print(os.getpid())
"""


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_oauth_clients()


EXPIRES = datetime(2030, 1, 1, 12, 0, tzinfo=UTC)


def _tokens(rotation: int, refresh: str = "v1.journal-refresh") -> TokenSet:
    return TokenSet(f"{refresh}-{rotation}", "access-x", EXPIRES, 3600.0, rotation)


# --- the journal file ---------------------------------------------------------------------------


def test_records_are_private_and_the_newest_token_set_wins(tmp_path: Path) -> None:
    journal = RecoveryDirectory(tmp_path / "recovery")

    journal.record_intent("acme", from_rotation=3)
    journal.record("acme", _tokens(4))
    journal.record("acme", _tokens(5))

    path = journal.path("acme")
    assert path == tmp_path / "recovery" / "acme.journal"
    assert stat.S_IMODE(path.stat().st_mode) == 0o600
    assert stat.S_IMODE(path.parent.stat().st_mode) == 0o700
    state = journal.state("acme")
    assert state.tokens == _tokens(5) and state.intent is None  # the intent was followed
    assert [json.loads(line)["kind"] for line in path.read_text().splitlines()] == [
        "intent",
        "tokens",
        "tokens",
    ]


def test_an_intent_no_token_set_followed_is_reported_with_its_process(tmp_path: Path) -> None:
    journal = RecoveryDirectory(tmp_path)
    journal.record("acme", _tokens(2))
    journal.record_intent("acme", from_rotation=2)

    state = journal.state("acme")

    assert state.tokens == _tokens(2)
    assert state.intent is not None and state.intent.from_rotation == 2
    assert state.intent.pid == os.getpid()
    assert str(state.intent).startswith(f"the refresh from rotation 2 started by pid {os.getpid()}")
    journal.clear_intent("acme")
    assert journal.state("acme").intent is None and journal.state("acme").tokens == _tokens(2)


def test_settle_removes_what_the_store_holds_and_keeps_what_it_does_not(tmp_path: Path) -> None:
    journal = RecoveryDirectory(tmp_path)
    for rotation in (1, 2, 3):
        journal.record("acme", _tokens(rotation))

    journal.settle("acme", stored_rotation=2)
    assert journal.state("acme").tokens == _tokens(3)
    assert len(journal.path("acme").read_text().splitlines()) == 1

    journal.settle("acme", stored_rotation=3)
    assert journal.state("acme").empty
    assert journal.path("acme").stat().st_size == 0  # emptied: no token stays on disk
    journal.settle("nobody", stored_rotation=1)  # nothing recorded: nothing to do


def test_a_line_cut_short_is_ignored_with_a_warning(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    journal = RecoveryDirectory(tmp_path)
    journal.record("acme", _tokens(1))
    with journal.path("acme").open("a") as handle:
        handle.write('{"kind": "tokens", "refresh_tok')  # a power loss before the fsync

    with caplog.at_level(logging.WARNING):
        assert journal.state("acme").tokens == _tokens(1)
    assert "line 2 is not a complete record" in caplog.text


def test_recovery_files_of_any_name_and_the_earlier_format_are_read(tmp_path: Path) -> None:
    journal = RecoveryDirectory(tmp_path)
    journal.record("../acme/prod", _tokens(7))
    path = recovery_file_path(tmp_path, "../acme/prod")
    assert path.name == "_acme_prod.journal" and path.parent == tmp_path
    assert read_recovery_file(path) == _tokens(7)

    legacy = tmp_path / "acme.json"  # one JSON object, as earlier versions wrote
    legacy.write_text(json.dumps({"refresh_token": "v1.old-format-token", "rotation": 4}))
    assert read_recovery_file(legacy) == TokenSet("v1.old-format-token", rotation=4)
    (tmp_path / "bad.json").write_text("{not json")
    with pytest.raises(ValueError, match=r"bad.json: not valid JSON \(line 1, column 2\)"):
        read_recovery_file(tmp_path / "bad.json")


# --- the refresh procedure with the journal -----------------------------------------------------


class JournalCheckingStore(FileTokenStore):
    """Records, at each write, whether the journal already held the token set being written."""

    journal: RecoveryDirectory
    seen_in_journal: list[bool]

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        self.seen_in_journal.append(self.journal.state(self.name).tokens == tokens)
        super().write(tokens, expected_rotation=expected_rotation)


def test_the_journal_has_the_new_set_before_the_store_is_written_and_not_after(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    journal = RecoveryDirectory(tmp_path / "recovery")
    store = file_store(tmp_path / "acme.json", expired_set(biller_token.refresh_token))
    checking = JournalCheckingStore(store.path, name="acme")
    checking.journal, checking.seen_in_journal = journal, []
    manager = TokenManager(checking, oauth_for(admin, biller_token), journal=journal)

    token = manager.access_token()

    assert checking.seen_in_journal == [True]
    assert checking.read().access_token == token and checking.read().rotation == 1
    assert journal.state("acme").empty


class Killed(BaseException):
    """Stands for the process dying: nothing after it runs (not even ``except Exception``)."""


def test_a_worker_that_died_between_grant_and_save_is_recovered_by_the_next_one(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    journal = RecoveryDirectory(tmp_path / "recovery")
    store = file_store(tmp_path / "acme.json", expired_set(biller_token.refresh_token))

    def die(new: TokenSet) -> None:
        raise Killed

    dying = TokenManager(store, oauth_for(admin, biller_token), journal=journal, after_grant=die)
    with pytest.raises(Killed):
        dying.access_token()
    granted = journal.state("acme").tokens
    assert granted is not None and granted.rotation == 1
    assert store.read().rotation == 0  # the old refresh token is consumed: only the journal has it

    survivor = TokenManager(store, oauth_for(admin, biller_token), journal=journal)
    assert survivor.access_token() == granted.access_token

    assert store.read() == granted
    assert journal.state("acme").empty
    assert token_grants(admin, biller_token.biller_id)["refresh_token"] == 1  # no second grant
    assert token_grants(admin, biller_token.biller_id)["invalid_grant"] == 0


def test_a_refresh_that_died_in_flight_is_named_by_every_worker_that_meets_it(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    journal = RecoveryDirectory(tmp_path / "recovery")
    store = file_store(tmp_path / "acme.json", expired_set(biller_token.refresh_token))
    # Another worker noted its intent and sent the refresh; the service rotated the token; the
    # worker was killed before the answer arrived.
    dead_worker = subprocess.run(
        [sys.executable, "-c", NOTE_INTENT, str(tmp_path / "recovery")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert dead_worker.returncode == 0, dead_worker.stderr
    dead_pid = int(dead_worker.stdout)
    oauth_for(admin, biller_token).refresh(biller_token.refresh_token)

    for _ in range(2):  # the first worker to meet it, and the next one
        manager = TokenManager(store, oauth_for(admin, biller_token), journal=journal)
        with pytest.raises(ReauthorizationRequired) as dead:
            manager.access_token()
        message = str(dead.value)
        assert "invalid_grant" in message
        assert f"the refresh from rotation 0 started by pid {dead_pid}" in message
        assert "never finished" in message
        assert dead.value.command == "billops auth login --block acme"

    intent = journal.state("acme").intent
    assert intent is not None and intent.pid == dead_pid  # still there for billops auth status
    assert token_grants(admin, biller_token.biller_id)["invalid_grant"] == 2
