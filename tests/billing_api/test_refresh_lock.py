"""The refresh lock and waiting for it: a file lock the kernel frees when its holder is killed,
waiters that go on with a token another worker rotated instead of starving, a timeout that names
the holder and the command, and a store failure that is reported as such, never as the billing
service's transport error."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from dataclasses import replace
from datetime import timedelta
from pathlib import Path

import httpx
import pytest

from billing_api import (
    BillingClient,
    FileLock,
    FileTokenStore,
    RefreshingAuth,
    RefreshLockTimeout,
    TokenManager,
    TokenSet,
    TokenStoreError,
    TransportError,
    utc_now,
)
from tests.billing_api.oauth_helpers import (
    close_oauth_clients,
    expired_set,
    file_store,
    held,
    oauth_for,
)
from tests.support.clocks import Sleeps
from tests.support.credentials import token_grants
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin
from tests.support.secret_scan import register_secret

ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
from billing_api import FileLock
lock = FileLock(sys.argv[1])
assert lock.try_acquire(10)
print("held", flush=True)
time.sleep(120)
"""


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_oauth_clients()


@pytest.fixture
def holder_process(tmp_path: Path) -> Iterator[subprocess.Popen[str]]:
    """Another process holding ``tmp_path/acme.json.lock`` (killed after the test)."""
    process = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(tmp_path / "acme.json.lock")],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert process.stdout is not None and process.stdout.readline().strip() == "held"
    yield process
    process.kill()
    process.wait(10)


def test_a_lock_held_by_another_process_is_freed_the_instant_it_is_killed(
    tmp_path: Path, holder_process: subprocess.Popen[str]
) -> None:
    lock = FileLock(tmp_path / "acme.json.lock")

    holder = lock.holder()
    assert holder is not None and (holder.pid, holder.host) == (
        holder_process.pid,
        socket.gethostname(),
    )
    assert holder.since is not None and abs((utc_now() - holder.since).total_seconds()) < 60
    assert not lock.try_acquire(0.2)

    os.kill(holder_process.pid, signal.SIGKILL)
    holder_process.wait(10)

    assert lock.holder() is None
    assert lock.try_acquire(0)
    assert lock.still_held()
    lock.release()
    assert not lock.still_held() and lock.holder() is None


def test_a_program_started_by_the_holder_does_not_inherit_the_lock(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "x.lock")
    assert lock.try_acquire(0)
    child = subprocess.Popen([sys.executable, "-c", "import time; time.sleep(60)"])
    try:
        lock.release()
        assert FileLock(tmp_path / "x.lock").try_acquire(0)  # the child holds nothing
    finally:
        child.kill()
        child.wait(10)


def test_the_lock_file_records_the_last_clean_release_and_its_rotation(tmp_path: Path) -> None:
    path = tmp_path / "acme.lock"
    mine, other = FileLock(path), FileLock(path)

    assert mine.try_acquire(0)
    mine.release(stored_rotation=5)
    assert other.peek_rotation() == 5
    assert mine.try_acquire(0) and mine.untouched_since_release() == 5  # nobody in between
    mine.release(stored_rotation=6)
    assert other.try_acquire(0) and other.untouched_since_release() is None  # not its release
    assert mine.peek_rotation() == 6  # readable while the other holds it
    other.release()  # a holder that does not say what the store holds now
    assert mine.peek_rotation() is None
    assert mine.try_acquire(0) and mine.untouched_since_release() is None
    mine.release(stored_rotation=7)


def test_a_holder_that_died_holding_the_lock_voids_the_record(tmp_path: Path) -> None:
    lock = FileLock(tmp_path / "acme.json.lock")
    assert lock.try_acquire(0)
    lock.release(stored_rotation=3)
    # Another process takes the lock (it may change the store) and is killed holding it.
    other = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(lock.path)],
        cwd=ROOT,
        env={**os.environ, "PYTHONPATH": str(ROOT)},
        stdout=subprocess.PIPE,
        text=True,
    )
    assert other.stdout is not None and other.stdout.readline().strip() == "held"
    os.kill(other.pid, signal.SIGKILL)
    other.wait(10)

    assert lock.try_acquire(0)
    assert lock.untouched_since_release() is None  # its own release is no longer the last word
    lock.release(stored_rotation=4)


# --- waiting ------------------------------------------------------------------------------------


def test_a_waiter_goes_on_with_a_token_another_worker_rotated_meanwhile(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    old = expired_set(biller_token.refresh_token, access="old-access-token")
    store = file_store(tmp_path / "acme.json", old)
    manager = TokenManager(store, oauth_for(admin, biller_token), reread_seconds=0.2)
    rotated = replace(
        old,
        access_token="another-workers-token",
        access_token_expires_at=utc_now() + timedelta(hours=1),
        rotation=1,
    )

    # Another worker holds the lock and has already stored its rotation: the waiter does not need
    # the lock at all.
    with held(store.refresh_lock()):
        store.write(rotated, expected_rotation=0)
        started = time.monotonic()
        token = manager.force_refresh("old-access-token")
        waited = time.monotonic() - started

    assert token == "another-workers-token"
    assert waited < 5
    assert token_grants(admin, biller_token.biller_id).get("refresh_token", 0) == 0


def test_a_waiter_behind_a_rotation_that_is_already_spent_refreshes_it(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    oauth = oauth_for(admin, biller_token)
    first = replace(
        expired_set(biller_token.refresh_token),
        access_token="first-access-token",
        access_token_expires_at=utc_now() + timedelta(hours=1),
    )
    store = file_store(tmp_path / "acme.json", first)
    manager = TokenManager(store, oauth, lock_timeout=5, reread_seconds=0.2)
    assert manager.access_token() == "first-access-token"  # this worker holds rotation 0
    # Another worker rotated and saved rotation 1, whose access token has run out since (2-second
    # tokens, or a worker that waited long): the lock's record says the store is ahead.
    granted = oauth.refresh(biller_token.refresh_token)
    register_secret(granted.refresh_token)
    register_secret(granted.access_token)
    assert granted.refresh_token is not None
    other = store.refresh_lock()
    assert other.try_acquire(5)
    store.write(expired_set(granted.refresh_token, rotation=1), expected_rotation=0)
    other.release(stored_rotation=1)

    # Reading rotation 1 gives nothing usable, so the waiter must compete and refresh it, not
    # stay behind until its wait runs out.
    token = manager.force_refresh("first-access-token")

    stored = store.read()
    register_secret(stored.refresh_token)
    register_secret(stored.access_token)
    assert (stored.rotation, stored.access_token) == (2, token)
    grants = token_grants(admin, biller_token.biller_id)
    assert (grants.get("refresh_token", 0), grants["invalid_grant"]) == (2, 0)


def test_a_wait_that_runs_out_names_the_holder_and_the_command(
    admin: SandboxAdmin,
    biller_token: BillerTokens,
    tmp_path: Path,
    holder_process: subprocess.Popen[str],
) -> None:
    store = file_store(
        tmp_path / "acme.json",
        expired_set(biller_token.refresh_token),
        unlock_command="billops auth unlock --block acme",
    )
    manager = TokenManager(
        store, oauth_for(admin, biller_token), lock_timeout=0.6, reread_seconds=0.2
    )

    with pytest.raises(RefreshLockTimeout) as timed_out:
        manager.access_token()

    message = str(timed_out.value)
    assert (
        f"the refresh lock of acme (file lock {store.lock_path}) was still held after 0.6 s"
        in message
    )
    assert f"pid {holder_process.pid} on host {socket.gethostname()}" in message
    assert "run: billops auth unlock --block acme (it refuses while the holder lives)" in message
    assert isinstance(timed_out.value, TokenStoreError) and timed_out.value.store == "acme"
    assert token_grants(admin, biller_token.biller_id).get("refresh_token", 0) == 0


# --- store failures -----------------------------------------------------------------------------


class UnreachableStore(FileTokenStore):
    """A store whose backend cannot be reached: reads raise what an HTTP client raises."""

    reads = 0

    def read(self) -> TokenSet:
        UnreachableStore.reads += 1
        raise httpx.ConnectError("All connection attempts failed")


def test_a_store_failure_is_its_own_error_and_is_not_retried_as_the_services(
    admin: SandboxAdmin, biller_token: BillerTokens, tmp_path: Path
) -> None:
    store = UnreachableStore(tmp_path / "acme.json", name="acme")
    manager = TokenManager(store, oauth_for(admin, biller_token))
    sleeps = Sleeps()
    UnreachableStore.reads = 0

    with (
        BillingClient(f"{admin.root}/api", RefreshingAuth(manager), sleep=sleeps) as client,
        pytest.raises(TokenStoreError) as failed,
    ):
        client.biller.retrieve()

    assert not isinstance(failed.value, TransportError)
    assert str(failed.value) == (
        "token store acme could not be read: ConnectError: All connection attempts failed"
    )
    assert (UnreachableStore.reads, sleeps.delays) == (1, [])  # no retry by the client
    stats = admin.biller_stats(biller_token.biller_id)
    assert stats.get("requests", {}).get("biller.retrieve", 0) == 0  # the service was not asked
