"""``FileTokenStore`` and the rotation under concurrency: real processes, real locks, the sandbox
counting every ``invalid_grant``; and the deterministic proof that the lock is what saves it."""

from __future__ import annotations

import multiprocessing
import os
import stat
import threading
from collections.abc import Iterator
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path
from typing import Any

import pytest

from billing_api import (
    FileLock,
    FileTokenStore,
    ReauthorizationRequired,
    StaleTokenSet,
    TokenManager,
    TokenStore,
)
from tests.billing_api.oauth_helpers import (
    LOGIN_COMMAND,
    GatedWriteStore,
    NoLockGatedStore,
    close_oauth_clients,
    expired_set,
    file_store,
    held,
    oauth_for,
    race_once,
)
from tests.billing_api.oauth_worker import hammer
from tests.support.credentials import token_grants
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_oauth_clients()


# --- the file store ---------------------------------------------------------------------------


def test_round_trip_private_file_and_protocol(tmp_path: Path) -> None:
    tokens = expired_set("v1.refresh", rotation=4)
    store = file_store(tmp_path / "creds" / "acme.json", tokens)

    assert isinstance(store, TokenStore)
    assert store.read() == tokens
    assert stat.S_IMODE(os.stat(store.path).st_mode) == 0o600
    assert (store.name, store.reauthorize_command) == ("acme", "billops auth login --block acme")
    assert "v1.refresh" not in repr(store) + repr(store.read())


def test_write_is_a_compare_and_swap_on_the_rotation(tmp_path: Path) -> None:
    store = file_store(tmp_path / "acme.json", expired_set("v1.a", rotation=2))

    store.write(expired_set("v1.b", rotation=3), expected_rotation=2)
    with pytest.raises(StaleTokenSet, match="at rotation 3, expected 2"):
        store.write(expired_set("v1.c", rotation=3), expected_rotation=2)

    assert store.read().refresh_token == "v1.b"


@pytest.mark.parametrize(
    ("content", "expected"),
    [
        ("{not json", r"acme.json: not valid JSON \(line 1, column 2\)"),
        ("[]", "expected a JSON object, got list"),
        ('{"access_token": "a"}', "field 'refresh_token' is missing"),
        ('{"refresh_token": "r", "rotation": -1}', "field 'rotation' must be a non-negative"),
        ('{"refresh_token": "r", "access_token_lifetime": "x"}', "'access_token_lifetime' must"),
        (
            '{"refresh_token": "r", "access_token_expires_at": "2026-11-22T10:00:00"}',
            "'access_token_expires_at' has no timezone",
        ),
    ],
)
def test_bad_token_file_names_the_file_and_field(
    tmp_path: Path, content: str, expected: str
) -> None:
    path = tmp_path / "acme.json"
    path.write_text(content, encoding="utf-8")

    with pytest.raises(ValueError, match=expected) as bad:
        FileTokenStore(path).read()
    assert str(path) in str(bad.value)


def test_missing_token_file_says_to_log_in(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="does not exist: log in first"):
        FileTokenStore(tmp_path / "none.json").read()


def test_the_refresh_lock_is_a_file_lock_beside_the_file(tmp_path: Path) -> None:
    store = file_store(tmp_path / "acme.json", expired_set("v1.a"))
    lock, other = store.refresh_lock(), FileTokenStore(store.path).refresh_lock()

    assert isinstance(lock, FileLock) and lock.path == tmp_path / "acme.json.lock"
    with held(lock):
        assert not other.try_acquire(0.05)
    assert other.try_acquire(0)  # released: free again
    other.release()


# --- concurrency ------------------------------------------------------------------------------


def test_processes_sharing_one_file_store_never_lose_the_token(tmp_path: Path) -> None:
    workers, seconds = 4, 6.0
    with running_sandbox(f"sqlite:///{tmp_path}/s.db", accessTokenTtl=2) as admin:
        tokens = admin.connect_biller()
        store = file_store(tmp_path / "shared.json", expired_set(tokens.refresh_token))
        api = f"{admin.root}/api"
        context = multiprocessing.get_context("spawn")
        with ProcessPoolExecutor(workers, mp_context=context) as pool:
            futures = [
                pool.submit(
                    hammer,
                    str(store.path),
                    api,
                    tokens.app.client_id,
                    tokens.app.client_secret,
                    seconds,
                )
                for _ in range(workers)
            ]
            outcomes: list[dict[str, Any]] = [f.result(timeout=120) for f in futures]

        counts = token_grants(admin, tokens.biller_id)
        final = store.read()
        # The stored refresh token is the live one: it rotates once more.
        renewed = oauth_for(admin, tokens).refresh(final.refresh_token)
        assert renewed.refresh_token not in (None, final.refresh_token)

    assert all(o["failed"] == 0 for o in outcomes), outcomes
    assert sum(o["ok"] for o in outcomes) > workers * 10
    assert counts["invalid_grant"] == 0
    assert counts["refresh_token"] == final.rotation >= 3  # ~2 s tokens over ~6 s


def _race(admin: SandboxAdmin, tmp_path: Path, cls: type[GatedWriteStore]) -> dict[str, Any]:
    """Two workers (threads with a manager and store each, as two processes would have) are
    released together on an expired token; the first store write waits until the other worker
    is done (at most a second)."""
    tokens = admin.connect_biller()
    path = tmp_path / f"{cls.__name__}.json"
    file_store(path, expired_set(tokens.refresh_token))
    gate, other_done = threading.Lock(), threading.Event()
    stores = [
        cls(
            path,
            name="acme",
            reauthorize_command=LOGIN_COMMAND,
            gate=gate,
            other_done=other_done,
            hold=1,
        )
        for _ in range(2)
    ]
    managers = [TokenManager(store, oauth_for(admin, tokens)) for store in stores]
    barrier = threading.Barrier(2)
    results: list[Any] = [None, None]

    def run(index: int) -> None:
        results[index] = race_once(managers[index], barrier)
        if not stores[index].gated:
            other_done.set()  # the worker that did not save first is done: release the other

    threads = [threading.Thread(target=run, args=(i,)) for i in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=30)
    final = FileTokenStore(path).read()
    return {
        "results": results,
        "grants": token_grants(admin, tokens.biller_id),
        "final": final,
        "tokens": tokens,
    }


def test_without_the_lock_the_credential_is_lost(admin: SandboxAdmin, tmp_path: Path) -> None:
    race = _race(admin, tmp_path, NoLockGatedStore)

    dead = [r for r in race["results"] if isinstance(r, ReauthorizationRequired)]
    assert len(dead) == 1, race["results"]
    assert "invalid_grant" in str(dead[0]) and dead[0].command == LOGIN_COMMAND
    assert race["grants"]["invalid_grant"] == 1


def test_with_the_lock_and_cas_both_workers_share_one_rotation(
    admin: SandboxAdmin, tmp_path: Path
) -> None:
    race = _race(admin, tmp_path, GatedWriteStore)

    first, second = race["results"]
    assert isinstance(first, str) and first == second, race["results"]
    assert race["grants"]["invalid_grant"] == 0
    assert race["grants"]["refresh_token"] == 1
    final = race["final"]
    assert final.rotation == 1 and final.access_token == first
    renewed = oauth_for(admin, race["tokens"]).refresh(final.refresh_token)
    assert renewed.refresh_token not in (None, final.refresh_token)
