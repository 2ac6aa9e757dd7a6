"""``BillerCredentials`` as a ``TokenStore``: settings checked, reads fresh, writes compare-and-
swap, the refresh lock lives on the ledger's database (a file lock beside a SQLite ledger), and a
wait for it that runs out names the holder and ``billops auth unlock``."""

from __future__ import annotations

import os
import socket
from dataclasses import replace
from datetime import datetime
from pathlib import Path

import pytest
from pydantic import SecretStr, ValidationError

from billing_api import FileLock, RefreshLockTimeout, StaleTokenSet, TokenManager
from blocks import BillerCredentials
from blocks._common import CredentialsConfigError
from tests.billing_api.oauth_helpers import held
from tests.support.credentials import (
    refresh_grants,
    register_block_secrets,
    save_connected_block,
    unique_name,
)
from tests.support.sandbox_admin import SandboxAdmin


def _minimal(**fields: object) -> BillerCredentials:
    base: dict[str, object] = {
        "client_id": "sbx_ci_1",
        "client_secret": SecretStr("client-secret-value-1"),
        "refresh_token": SecretStr("refresh-token-value-1"),
    }
    return BillerCredentials(**{**base, **fields})


def test_production_and_staging_default_to_the_real_hosts() -> None:
    assert _minimal().api_url == "https://api.adfin.com/api"
    assert _minimal(environment="staging").api_url == "https://api.staging.adfin.com/api"
    assert _minimal(environment="production").login_url is None


def test_a_sandbox_needs_its_base_url_and_gets_its_login_page() -> None:
    with pytest.raises(ValidationError, match="base_url is required for environment 'sandbox'"):
        _minimal(environment="sandbox")
    block = _minimal(environment="sandbox", base_url="http://127.0.0.1:8765/api/")
    assert block.api_url == "http://127.0.0.1:8765/api"
    assert block.login_url == "http://127.0.0.1:8765/auth/login"


@pytest.mark.parametrize(
    ("base_url", "message"),
    [("ftp://host/api", "is not an http"), ("https://api.adfin.com/v1", "must be the API root")],
)
def test_a_bad_base_url_is_refused_naming_it(base_url: str, message: str) -> None:
    with pytest.raises(ValidationError, match=message):
        _minimal(base_url=base_url)


def test_a_naive_timestamp_is_refused() -> None:
    with pytest.raises(ValidationError, match="access_token_expires_at must be timezone-aware"):
        _minimal(access_token_expires_at=datetime(2026, 1, 1, 12, 0))


def test_no_secret_in_repr_str_or_json_dump() -> None:
    block = _minimal(access_token=SecretStr("access-token-value-1"))
    shown = " ".join([repr(block), str(block), block.model_dump_json()])
    for secret in ("client-secret-value-1", "refresh-token-value-1", "access-token-value-1"):
        assert secret not in shown
    assert "sbx_ci_1" in shown


def test_an_unsaved_block_says_to_save_it_first() -> None:
    with pytest.raises(ValueError, match="has not been saved: save it under a name first"):
        _minimal().read()


def test_read_is_fresh_and_write_is_compare_and_swap(prefect_api: str, admin: SandboxAdmin) -> None:
    name = unique_name()
    block, _ = save_connected_block(admin, name)
    other = BillerCredentials.load(name)
    first = block.read()
    assert first.rotation == 0

    moved = replace(first, refresh_token="moved-refresh-token-x", rotation=1)
    other.write(moved, expected_rotation=0)
    assert block.read() == moved  # the first instance sees the other's write: no cache

    with pytest.raises(StaleTokenSet, match="at rotation 1, expected 0"):
        block.write(replace(first, rotation=1), expected_rotation=0)
    assert BillerCredentials.load(name).read() == moved


def test_the_lock_is_a_file_lock_beside_a_sqlite_ledger(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLOPS_LEDGER_URL", f"sqlite:///{tmp_path}/books/ledger.db")
    block = _minimal()
    block._block_document_name = "acme"

    lock = block.refresh_lock()

    assert isinstance(lock, FileLock)
    assert lock.path == tmp_path / "books" / "ledger.db.locks" / "billops-token-refresh-acme.lock"
    assert block.unlock_command == "billops auth unlock --block acme"


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("sqlite://", "in-memory SQLite database"),
        ("mysql://u@h/db", "refresh locks support SQLite and PostgreSQL"),
        ("not a url", "not a database URL"),
    ],
)
def test_a_ledger_that_cannot_hold_the_lock_is_refused_naming_why(
    url: str, message: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLOPS_LEDGER_URL", url)
    block = _minimal()
    block._block_document_name = "acme"
    with pytest.raises(CredentialsConfigError, match=message):
        block.refresh_lock()


def test_the_lock_excludes_a_second_holder_and_the_timeout_names_it(prefect_api: str) -> None:
    block = _minimal()
    block._block_document_name = unique_name("lock")
    first, second = block.refresh_lock(), block.refresh_lock()

    with held(first), pytest.raises(RefreshLockTimeout) as timed_out, block.lock(timeout=0.2):
        pytest.fail("two holders of one refresh lock")

    message = str(timed_out.value)
    assert f"pid {os.getpid()} on host {socket.gethostname()}" in message
    assert f"billops auth unlock --block {block.name}" in message
    assert timed_out.value.command == f"billops auth unlock --block {block.name}"
    assert second.try_acquire(0)  # released: free again
    second.release()


def test_the_token_manager_refreshes_through_the_block(
    prefect_api: str, admin: SandboxAdmin
) -> None:
    name = unique_name()
    block, tokens = save_connected_block(admin, name, with_access_token=False)
    manager = block.get_token_manager()
    assert isinstance(manager, TokenManager)

    access = manager.access_token()
    journal = manager.journal

    stored = BillerCredentials.load(name).read()
    register_block_secrets(block)
    assert stored.rotation == 1 == refresh_grants(admin, tokens.biller_id)
    assert stored.access_token == access
    assert stored.refresh_token != tokens.refresh_token
    assert stored.last_refreshed_at is not None
    # A second manager (another worker) reuses the stored token (day-long here): no refresh.
    assert BillerCredentials.load(name).get_token_manager().access_token() == access
    assert refresh_grants(admin, tokens.biller_id) == 1
    # The journal held the new set only until the block had it.
    assert journal is not None and journal.state(name).empty


def test_get_client_calls_the_service_and_refreshes_through_the_block(
    prefect_api: str, short_admin: SandboxAdmin
) -> None:
    name = unique_name("client")
    block, tokens = save_connected_block(short_admin, name, with_access_token=False)

    client = BillerCredentials.load(name).get_client()
    with client:
        biller = client.biller.retrieve()

    register_block_secrets(block)
    assert biller.id == tokens.biller_id
    assert block.read().rotation == 1 == refresh_grants(short_admin, tokens.biller_id)
