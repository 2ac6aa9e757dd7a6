"""``BillerCredentials`` as a ``TokenStore``: settings checked, reads fresh, writes compare-and-
swap, the lock is a global concurrency limit of 1 that is created (or repaired) when missing."""

from __future__ import annotations

import threading
from dataclasses import replace
from datetime import datetime

import pytest
from pydantic import SecretStr, ValidationError

from billing_api._tokens import StaleTokenSet, TokenManager
from blocks import BillerCredentials
from blocks._lock import ensure_limit, refresh_lock
from tests.blocks.helpers import (
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


def test_lock_creates_a_missing_limit_and_repairs_a_wrong_one(prefect_api: str) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitUpdate

    name = f"billops-token-refresh-{unique_name()}"
    with refresh_lock(name, timeout_seconds=10), get_client(sync_client=True) as client:
        limit = client.read_global_concurrency_limit_by_name(name)
        assert (limit.limit, limit.active, limit.active_slots) == (1, True, 1)
        client.update_global_concurrency_limit(name, GlobalConcurrencyLimitUpdate(limit=5))
    assert ensure_limit(name) is True  # repaired back to 1
    with get_client(sync_client=True) as client:
        assert client.read_global_concurrency_limit_by_name(name).limit == 1
        client.delete_global_concurrency_limit_by_name(name)
    # Deleted after this process checked it: strict acquisition fails, the lock recreates it.
    with refresh_lock(name, timeout_seconds=10), get_client(sync_client=True) as client:
        assert client.read_global_concurrency_limit_by_name(name).active_slots == 1


def test_the_lock_excludes_a_second_holder(prefect_api: str) -> None:
    name = f"billops-token-refresh-{unique_name()}"
    held, release = threading.Event(), threading.Event()

    def holder() -> None:
        with refresh_lock(name, timeout_seconds=10):
            held.set()
            release.wait(20)

    thread = threading.Thread(target=holder)
    thread.start()
    try:
        assert held.wait(20)
        with pytest.raises(TimeoutError), refresh_lock(name, timeout_seconds=1):
            pytest.fail("acquired a lock another holder has")
    finally:
        release.set()
        thread.join(20)
    with refresh_lock(name, timeout_seconds=10):
        assert not thread.is_alive()


def test_the_token_manager_refreshes_through_the_block(
    prefect_api: str, short_admin: SandboxAdmin
) -> None:
    name = unique_name()
    block, tokens = save_connected_block(short_admin, name, with_access_token=False)
    manager = block.get_token_manager()
    assert isinstance(manager, TokenManager)

    access = manager.access_token()

    stored = BillerCredentials.load(name).read()
    register_block_secrets(block)
    assert stored.rotation == 1 == refresh_grants(short_admin, tokens.biller_id)
    assert stored.access_token == access
    assert stored.refresh_token != tokens.refresh_token
    assert stored.last_refreshed_at is not None
    # A second manager (another worker) reuses the stored token: no second refresh.
    assert BillerCredentials.load(name).get_token_manager().access_token() == access
    assert refresh_grants(short_admin, tokens.biller_id) == 1


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
