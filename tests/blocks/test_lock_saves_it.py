"""The lock is what saves the credential (deterministic): two workers released together by a
barrier, the first save delayed by a hook. Without the lock a worker replays a consumed refresh
token (``invalid_grant``); with the block's lock and its compare-and-swap, neither happens."""

from __future__ import annotations

import threading

from billing_api import ReauthorizationRequired, RefreshLock, TokenManager, TokenSet, TokenStore
from blocks import BillerCredentials
from tests.billing_api.oauth_helpers import NoLock
from tests.support.credentials import (
    invalid_grants,
    refresh_grants,
    register_block_secrets,
    save_connected_block,
    unique_name,
)
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret

# Long enough for the other worker to finish when nothing stops it (a refresh on loopback takes
# milliseconds); when the lock stops it, the delayed save simply goes ahead after this.
SAVE_DELAY_SECONDS = 2.0


class HookedStore:
    """The block as a ``TokenStore``, with the lock switchable off and the first save delayed."""

    def __init__(self, block: BillerCredentials, hooks: _Hooks, *, real_lock: bool) -> None:
        self.block = block
        self.hooks = hooks
        self.real_lock = real_lock

    @property
    def name(self) -> str:
        return self.block.name

    @property
    def reauthorize_command(self) -> str | None:
        return self.block.reauthorize_command

    def read(self) -> TokenSet:
        return self.block.read()

    @property
    def recover_command(self) -> str | None:
        return self.block.recover_command

    @property
    def unlock_command(self) -> str | None:
        return self.block.unlock_command

    def refresh_lock(self) -> RefreshLock:
        return self.block.refresh_lock() if self.real_lock else NoLock()

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        register_secret(tokens.refresh_token)
        register_secret(tokens.access_token)
        if self.hooks.claim_first_write():
            self.hooks.other_done.wait(SAVE_DELAY_SECONDS)
        self.block.write(tokens, expected_rotation=expected_rotation)


class _Hooks:
    def __init__(self) -> None:
        self.barrier = threading.Barrier(2)
        self.other_done = threading.Event()
        self._first = threading.Lock()
        self._claimed = False

    def claim_first_write(self) -> bool:
        with self._first:
            first, self._claimed = not self._claimed, True
            return first


def _two_workers(name: str, *, real_lock: bool) -> list[object]:
    hooks = _Hooks()
    outcomes: list[object] = []
    managers = [
        TokenManager(
            HookedStore(BillerCredentials.load(name), hooks, real_lock=real_lock),
            BillerCredentials.load(name).get_oauth_client(),
        )
        for _ in range(2)
    ]

    def work(manager: TokenManager) -> None:
        hooks.barrier.wait(10)
        try:
            outcomes.append(manager.access_token())
        except ReauthorizationRequired as exc:
            outcomes.append(exc)
        finally:
            if not hooks.claim_first_write():  # the worker that is not delayed
                hooks.other_done.set()

    threads = [threading.Thread(target=work, args=(m,)) for m in managers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(60)
    return outcomes


def _outcome(real_lock: bool, admin: SandboxAdmin) -> tuple[list[object], int, int, int]:
    name = unique_name("lock")
    block, tokens = save_connected_block(admin, name, with_access_token=False)
    outcomes = _two_workers(name, real_lock=real_lock)
    register_block_secrets(block)
    stored = BillerCredentials.load(name).read()
    return (
        outcomes,
        invalid_grants(admin, tokens.biller_id),
        refresh_grants(admin, tokens.biller_id),
        stored.rotation,
    )


def test_without_the_lock_a_worker_replays_a_consumed_refresh_token(
    prefect_api: str, admin: SandboxAdmin
) -> None:
    outcomes, invalid, _, _ = _outcome(False, admin)
    failures = [o for o in outcomes if isinstance(o, ReauthorizationRequired)]
    assert len(outcomes) == 2
    assert invalid == 1
    assert len(failures) == 1
    assert "billops auth login --block lock-" in str(failures[0])


def test_with_the_lock_and_the_counter_check_nothing_is_lost(
    prefect_api: str, admin: SandboxAdmin
) -> None:
    # Day-long access tokens here: the second worker must find the first one's still usable.
    outcomes, invalid, granted, rotation = _outcome(True, admin)
    assert len(outcomes) == 2
    assert not [o for o in outcomes if isinstance(o, Exception)]
    same_token = outcomes[0] == outcomes[1]
    assert same_token, "the second worker did not reuse the first one's access token"
    assert invalid == 0
    assert rotation == granted == 1


def test_the_block_and_the_hooked_store_are_token_stores(
    prefect_api: str, admin: SandboxAdmin
) -> None:
    block, _ = save_connected_block(admin, unique_name("proto"))
    register_block_secrets(block)
    assert isinstance(block, TokenStore)
    assert isinstance(HookedStore(block, _Hooks(), real_lock=True), TokenStore)
