"""What ``billops auth`` does to a ``BillerCredentials`` block: save a login, restore a journal's
token set, revoke, look at and free the refresh lock.

Every write happens under the block's refresh lock, so none can interleave with a worker's
refresh, and each moves the rotation counter on, so a worker still holding the old token set is
refused (``StaleTokenSet``) instead of overwriting the new one. Each also settles the block's
recovery journal: a record the block now holds, or that a login made obsolete, is removed.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from dataclasses import dataclass, replace
from pathlib import Path
from typing import TYPE_CHECKING, Any

from billing_api import LockHolder, process_alive, read_recovery_file
from blocks._common import load_named, save_named
from blocks._journal import default_journal
from blocks._lock import LIMIT_PREFIX, PLATFORM_LIMIT_PREFIX, AdvisoryLock, refresh_lock_for
from blocks.credentials import BillerCredentials

if TYPE_CHECKING:
    from billing_api import JournalState, RefreshIntent, TokenJournal, TokenSet

# A rotation above any real one: settling up to it removes every record of a block.
_ALL = sys.maxsize


class RecoveryError(Exception):
    """A recovery record is missing, unreadable, or older than what the block holds."""


def find_block(name: str) -> BillerCredentials | None:
    """The stored block ``name``, or None if there is none."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            client.read_block_document_by_name(
                name, BillerCredentials.get_block_type_slug(), include_secrets=False
            )
        except ObjectNotFound:
            return None
    return load_named(BillerCredentials, name)


def save_login(name: str, settings: dict[str, Any], tokens: TokenSet) -> BillerCredentials:
    """Create block ``name`` from a login, or replace an existing block's app and tokens.

    ``settings`` are the block's non-token fields (environment, base_url, client_id, ...). What
    the journal held for this block belongs to the grant the login replaces: it is removed.
    """
    journal = default_journal()
    existing = find_block(name)
    if existing is None:
        block = BillerCredentials(**settings, refresh_token=tokens.refresh_token)
        block.set_tokens(tokens)
        with block_lock(name):
            journal.settle(name, stored_rotation=_ALL)  # first: a failure leaves nothing saved
            save_named(block, name, overwrite=False)
        return block
    with existing.lock():
        current = existing.read()
        fresh = BillerCredentials(**settings, refresh_token=tokens.refresh_token)
        fresh.set_tokens(replace(tokens, rotation=current.rotation + 1))
        journal.settle(name, stored_rotation=_ALL)
        save_named(fresh, name, overwrite=True)
    return fresh


@contextlib.contextmanager
def block_lock(name: str) -> Iterator[None]:
    """The refresh lock of block ``name`` before the block exists (a first login)."""
    from billing_api import holding
    from blocks._lock import DEFAULT_TIMEOUT_SECONDS

    with holding(
        refresh_lock_for(LIMIT_PREFIX + name),
        timeout=DEFAULT_TIMEOUT_SECONDS,
        store=name,
        unlock_command=f"billops auth unlock --block {name}",
    ):
        yield


def recovery_state(name: str, journal: TokenJournal | None = None) -> JournalState:
    """What the journal holds for block ``name`` (for ``billops auth status``)."""
    return (journal or default_journal()).state(name)


def _recovered(name: str, journal: TokenJournal, path: Path | None) -> TokenSet:
    if path is not None:
        if path.is_dir():
            raise RecoveryError(f"{path} is a folder: give the recovery file in it")
        if not path.is_file():
            raise RecoveryError(f"no recovery file at {path}")
        try:
            found = read_recovery_file(path)
        except OSError as exc:
            raise RecoveryError(f"{path}: cannot read the recovery file ({exc.strerror})") from None
        except ValueError as exc:  # the message names the file and the field, or line and column
            raise RecoveryError(str(exc)) from None
        if found is None:
            raise RecoveryError(f"{path}: holds no token set")
        return found
    try:
        state = journal.state(name)
    except (OSError, ValueError) as exc:
        raise RecoveryError(f"{journal.location(name)}: unreadable ({exc})") from None
    if state.tokens is None:
        raise RecoveryError(f"no recovery record for block {name!r} in {journal.location(name)}")
    return state.tokens


def _ask_the_service(block: BillerCredentials, journal: TokenJournal, intent: RefreshIntent) -> str:
    """What became of a refresh whose process stopped after noting its intent, with no token set
    after it: the service is asked the only way it can be, by refreshing the block's token under
    the lock as any worker would (``docs/credentials.md`` §3). Refused: the service granted the
    lost refresh and its answer never arrived, so a person must log in again. Granted: the
    request never reached the service, and the new token set is saved like any other."""
    from billing_api import ReauthorizationRequired

    what = f"{intent} never finished and no token set was received"
    stored = block.read()
    if stored.rotation > intent.from_rotation:
        return f"{what}, but block {block.name!r} has moved on since (rotation {stored.rotation})"
    manager = block.get_token_manager(journal=journal)
    try:
        manager.force_refresh(stored.access_token or "")
    except ReauthorizationRequired:
        return (
            f"{what}: the service granted that refresh (the block's refresh token is spent) but "
            f"its answer never arrived. Log in again: {block.reauthorize_command}"
        )
    return (
        f"{what}, but it never reached the service: the block's refresh token still worked, "
        f"and block {block.name!r} is now at rotation {block.read().rotation} (no login needed)"
    )


def restore_recovery(
    block: BillerCredentials,
    path: Path | None = None,
    *,
    force: bool = False,
    journal: TokenJournal | None = None,
) -> int:
    """Save the journal's newest token set (or the one in ``path``) into ``block``, then remove
    the record. Returns the block's new rotation.

    Refuses (``RecoveryError``) when the block is already at or past the record's rotation,
    unless ``force``. When the journal holds only the intent of a refresh whose process stopped
    (no token set), the service is asked what became of it, and the error says: log in again
    (it was granted and the answer lost), or nothing was lost (the block now holds a new
    rotation).
    """
    journal = journal or default_journal()
    if path is None:
        try:
            state = journal.state(block.name)
        except (OSError, ValueError) as exc:
            raise RecoveryError(f"{journal.location(block.name)}: unreadable ({exc})") from None
        if state.tokens is None and state.intent is not None:
            raise RecoveryError(_ask_the_service(block, journal, state.intent))
    recovered = _recovered(block.name, journal, path)
    with block.lock():
        current = block.read()
        if current.rotation >= recovered.rotation and not force:
            raise RecoveryError(
                f"block {block.name!r} is at rotation {current.rotation} and the recovery record "
                f"holds rotation {recovered.rotation}: the block has it already or has moved on "
                "since (a later refresh or login). Restore anyway with --force"
            )
        rotation = max(recovered.rotation, current.rotation + 1)
        block.write(replace(recovered, rotation=rotation), expected_rotation=current.rotation)
        journal.settle(block.name, stored_rotation=rotation)
    if path is not None:
        os.unlink(path)  # it holds the live refresh token, which is now in the block
    return rotation


def forget_tokens(block: BillerCredentials) -> int:
    """After a revoke: drop the cached access token and move the rotation on. Returns it."""
    with block.lock():
        current = block.read()
        rotation = current.rotation + 1
        cleared = replace(
            current, access_token=None, access_token_expires_at=None, rotation=rotation
        )
        block.write(cleared, expected_rotation=current.rotation)
        default_journal().settle(block.name, stored_rotation=_ALL)
    return rotation


# --- the refresh lock: who holds it, and freeing a holder that is gone -------------------------


@dataclass(frozen=True)
class LockReport:
    """What ``billops auth unlock`` found: the lock, its holder, and what was done."""

    description: str
    holder: LockHolder | None
    outcome: str  # "free", "freed" or "refused"
    reason: str


def lock_name_of(block: str, *, platform: bool = False) -> str:
    """The refresh lock's name of a biller (or platform) block."""
    return (PLATFORM_LIMIT_PREFIX if platform else LIMIT_PREFIX) + block


def lock_holder(lock_name: str) -> tuple[str, LockHolder | None]:
    """The lock's description and its holder (None when free)."""
    lock = refresh_lock_for(lock_name)
    try:
        return lock.description, lock.holder()
    finally:
        if isinstance(lock, AdvisoryLock):
            lock.close()


def _alive(holder: LockHolder) -> bool | None:
    """Whether the holder's process runs: known only for a process on this machine."""
    if holder.pid is not None and holder.is_here():
        return process_alive(holder.pid)
    return None


def unlock(lock_name: str) -> LockReport:
    """Free the lock ``lock_name`` if its holder is provably gone; refuse while it may live.

    A ``flock`` is only ever held by a live process (the kernel frees it at exit), so for a
    SQLite ledger this can only report. A PostgreSQL session can outlive its process for a while
    (a machine that vanished without closing it): when the holder ran on this machine and its
    process is gone, the session is ended, which frees the lock.
    """
    lock = refresh_lock_for(lock_name)
    try:
        if isinstance(lock, AdvisoryLock):
            session = lock.holder_session()
            holder = session[1] if session else None
        else:
            session, holder = None, lock.holder()
        if holder is None:
            return LockReport(lock.description, None, "free", "nobody holds it")
        alive = _alive(holder)
        if isinstance(lock, AdvisoryLock) and session is not None and alive is False:
            lock.terminate(session[0])
            return LockReport(
                lock.description, holder, "freed", f"{holder} is gone; its session was ended"
            )
        if alive:
            reason = f"{holder} is running; the lock is freed when it finishes or stops"
        elif isinstance(lock, AdvisoryLock):
            reason = (
                f"{holder} runs on another machine (or is unknown), so whether it lives cannot "
                "be checked from here; PostgreSQL ends a session whose client stopped answering "
                "within about 25 s, which frees the lock. If that process still runs, stop it"
            )
        else:
            reason = (
                f"the lock is held by a live process ({holder} by its record); the kernel "
                "frees it when that process ends"
            )
        return LockReport(lock.description, holder, "refused", reason)
    finally:
        if isinstance(lock, AdvisoryLock):
            lock.close()
