"""Helpers of the OAuth / refresh / token-store tests (importable by spawned worker processes).

The store subclasses below only add test hooks (a gate on ``write``, no lock at all, failing writes,
a stale first read); every token still goes through the real sandbox over HTTP.
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Iterator
from datetime import timedelta
from pathlib import Path
from typing import Any

from billing_api import (
    BillingApiError,
    ClientCredentials,
    FileTokenStore,
    LockHolder,
    OAuthClient,
    RefreshLock,
    StaleTokenSet,
    TokenManager,
    TokenSet,
    utc_now,
)
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

LOGIN_COMMAND = "billops auth login --block acme"
RECOVER_COMMAND = "billops auth recover --block acme"


_OPEN: list[OAuthClient] = []


def oauth_for(admin: SandboxAdmin, tokens: BillerTokens, **options: Any) -> OAuthClient:
    """An ``OAuthClient`` of the biller's app on ``admin``'s sandbox (closed after the test)."""
    credentials = ClientCredentials(tokens.app.client_id, tokens.app.client_secret)
    return tracked(OAuthClient(f"{admin.root}/api", credentials, **options))


def tracked(client: OAuthClient) -> OAuthClient:
    """Remember ``client`` so that :func:`close_oauth_clients` closes it."""
    _OPEN.append(client)
    return client


def close_oauth_clients() -> None:
    """Close every client made through :func:`tracked` (no unclosed sockets after a test)."""
    while _OPEN:
        _OPEN.pop().close()


def expired_set(refresh_token: str, *, rotation: int = 0, access: str = "expired") -> TokenSet:
    """A token set whose access token ran out an hour ago."""
    now = utc_now()
    return TokenSet(
        refresh_token=refresh_token,
        access_token=access,
        access_token_expires_at=now - timedelta(hours=1),
        access_token_lifetime=86400.0,
        rotation=rotation,
        last_refreshed_at=now - timedelta(days=1),
    )


def file_store(
    path: Path, tokens: TokenSet, cls: type[FileTokenStore] = FileTokenStore, **kw: Any
) -> FileTokenStore:
    """A ``cls`` store at ``path`` (name ``acme``) holding ``tokens``."""
    store = cls(
        path, name="acme", reauthorize_command=LOGIN_COMMAND, recover_command=RECOVER_COMMAND, **kw
    )
    store.initialize(tokens)
    return store


# --- store hooks ----------------------------------------------------------------------------


class GatedWriteStore(FileTokenStore):
    """The first ``write`` among the stores sharing ``gate`` waits until ``other_done`` is set
    (or ``hold`` seconds pass): the slow save of the worker that refreshed first."""

    def __init__(
        self,
        *args: Any,
        gate: threading.Lock,
        other_done: threading.Event,
        hold: float,
        **kw: Any,
    ) -> None:
        super().__init__(*args, **kw)
        self.gate = gate
        self.other_done = other_done
        self.hold = hold
        self.gated = False

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        if self.gate.acquire(blocking=False):
            self.gated = True
            self.other_done.wait(self.hold)
        super().write(tokens, expected_rotation=expected_rotation)


class NoLock:
    """A refresh lock that never excludes anyone (what a bare block save gives)."""

    description = "no lock"

    def try_acquire(self, wait: float) -> bool:
        return True

    def still_held(self) -> bool:
        return True

    def release(self, stored_rotation: int | None = None) -> None:
        """Nothing to give back."""

    def holder(self) -> LockHolder | None:
        return None

    def untouched_since_release(self) -> int | None:
        return None

    def peek_rotation(self) -> int | None:
        return None


class NoLockGatedStore(GatedWriteStore):
    """The same, with the refresh lock replaced by nothing."""

    def refresh_lock(self) -> NoLock:  # type: ignore[override]
        return NoLock()


class FailingWriteStore(FileTokenStore):
    """Every ``write`` fails with ``error`` (a store that is down, or a broken CAS)."""

    def __init__(self, *args: Any, error: Exception, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.error = error
        self.attempts = 0

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        self.attempts += 1
        raise self.error


def stale_error() -> StaleTokenSet:
    return StaleTokenSet("rotation moved")


class StaleReadStore(FileTokenStore):
    """The first ``stale_reads`` reads answer ``stale`` (an older token set) instead of the file."""

    def __init__(self, *args: Any, stale: TokenSet, stale_reads: int, **kw: Any) -> None:
        super().__init__(*args, **kw)
        self.stale = stale
        self.stale_reads = stale_reads

    def read(self) -> TokenSet:
        if self.stale_reads > 0:
            self.stale_reads -= 1
            return self.stale
        return super().read()


# --- workers --------------------------------------------------------------------------------


def race_once(manager: TokenManager, barrier: threading.Barrier) -> Any:
    """Wait for the other worker, ask for a token; return it or the exception raised."""
    barrier.wait(timeout=10)
    try:
        return manager.access_token()
    except BillingApiError as error:
        return error


@contextlib.contextmanager
def held(lock: RefreshLock) -> Iterator[None]:
    """Hold ``lock`` for the duration of the block."""
    assert lock.try_acquire(5), f"{lock.description} is held by {lock.holder()}"
    try:
        yield
    finally:
        lock.release()
