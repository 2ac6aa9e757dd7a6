"""The chaos soak's judge of a lost credential (``tests/support/soak_credentials.py``), on a
token lost the way a kill in the service's part of the refresh window loses it
(``docs/credentials.md`` §3): a process notes its refresh's intent and stops, the service has
rotated the token. The next run's failure must name that process in the run's logs, and a login
must bring the credential back."""

from __future__ import annotations

import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect import flow

from billing_api import ReauthorizationRequired, RecoveryDirectory, TokenSet
from blocks import BillerCredentials
from tests.support.credentials import save_connected_block, unique_name
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox
from tests.support.secret_scan import register_secret
from tests.support.soak_credentials import (
    credential_dead,
    log_in_again,
    unfinished_refresh_pids,
)

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[SandboxAdmin, Path]]:
    """A sandbox of this module's own, with its database (where the soak reads which refresh
    tokens are live)."""
    database = tmp_path_factory.mktemp("soak-credentials") / "sandbox.db"
    with running_sandbox(f"sqlite:///{database}") as admin:
        yield admin, database


def _intent_of_a_process_now_gone(journal: RecoveryDirectory, name: str) -> int:
    """The intent a worker notes before its refresh, by a process that then ends; its pid."""
    code = (
        "import os, sys; from pathlib import Path; from billing_api import RecoveryDirectory; "
        "RecoveryDirectory(Path(sys.argv[1])).record_intent(sys.argv[2], from_rotation=0); "
        "print(os.getpid())"
    )
    command = [sys.executable, "-c", code, str(journal.directory), name]
    done = subprocess.run(command, check=True, cwd=ROOT, timeout=60, capture_output=True)
    return int(done.stdout)


def _biller_of(name: str) -> str:
    with BillerCredentials.load_named(name).get_client() as client:
        return str(client.biller.retrieve().id)


@flow
def _a_run_that_needs_the_credential(name: str) -> str:
    return _biller_of(name)


def _pids_named(name: str, timeout: float = 20) -> set[int]:
    """The run's logs reach the API in batches: wait for them."""
    deadline = time.monotonic() + timeout
    while not (found := unfinished_refresh_pids(name)) and time.monotonic() < deadline:
        time.sleep(0.5)
    return found


def _spent(block: BillerCredentials) -> TokenSet:
    """The service rotates the block's token; its answer never reaches the block."""
    with block.get_oauth_client() as oauth:
        granted = oauth.refresh(block.read().refresh_token).to_token_set(1)
    register_secret(granted.refresh_token)
    register_secret(granted.access_token)
    return granted


def test_a_token_lost_in_flight_names_its_process_and_a_login_brings_it_back(
    prefect_api: str, sandbox: tuple[SandboxAdmin, Path], billops_home: Path
) -> None:
    admin, database = sandbox
    name = unique_name("inflight")
    block, tokens = save_connected_block(admin, name, with_access_token=False)
    other = unique_name("inflight-other")
    save_connected_block(admin, other, with_access_token=False)
    journal = RecoveryDirectory(billops_home / "recovery")
    pid = _intent_of_a_process_now_gone(journal, name)
    _spent(block)

    state = _a_run_that_needs_the_credential(name, return_state=True)

    assert state.is_failed()
    assert isinstance(state.result(raise_on_failure=False), ReauthorizationRequired)
    assert _pids_named(name) == {pid}
    assert unfinished_refresh_pids(other) == set()  # another block's logs name nothing
    assert credential_dead(database, name)
    assert not credential_dead(database, other)
    log_in_again(admin, name, tokens.biller_id)
    assert journal.state(name).empty  # the login settled what the journal held
    assert not credential_dead(database, name)
    assert _biller_of(name) == tokens.biller_id


def test_a_token_set_kept_by_the_journal_is_not_lost(
    prefect_api: str, sandbox: tuple[SandboxAdmin, Path], billops_home: Path
) -> None:
    """A worker killed between a grant and the block's save: the journal has the new set."""
    admin, database = sandbox
    name = unique_name("kept")
    block, _ = save_connected_block(admin, name, with_access_token=False)
    granted = _spent(block)

    assert credential_dead(database, name)  # the block's token is spent, nothing kept
    RecoveryDirectory(billops_home / "recovery").record(name, granted)
    assert not credential_dead(database, name)
