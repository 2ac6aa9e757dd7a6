"""Waiting for a credential's refresh lock without starving (``docs/credentials.md`` §1 step 2):
the :class:`~billing_api._tokens.TokenManager`'s waiting side, as a base class it inherits.

A waiter re-reads the store on a backing-off, jittered timer and goes on with a usable token
another worker stored meanwhile; between re-reads it looks at the lock (and at the rotation the
lock's record announces) every ``LOCK_POLL_SECONDS``.
"""

from __future__ import annotations

import logging
import random
import time
from abc import ABC, abstractmethod
from typing import Any

from billing_api._exceptions import TokenStoreError
from billing_api._refresh_lock import RefreshLock, lock_timeout
from billing_api._token_set import TokenSet

__all__ = [
    "DEFAULT_REREAD_SECONDS",
    "FIRST_REREAD_SECONDS",
    "LOCK_POLL_SECONDS",
    "LockWaiting",
]

#: How often, at most, a waiting worker re-reads the store for a token another worker rotated.
#: The first re-read comes after ``FIRST_REREAD_SECONDS`` (the holder is usually about to finish);
#: a worker that keeps waiting doubles the interval up to this, and a worker that takes the lock
#: starts again from the first: many waiters must not drown the store in reads.
DEFAULT_REREAD_SECONDS = 5.0
FIRST_REREAD_SECONDS = 0.5
#: How often a waiter looks at the lock (and at its record of the store's rotation).
LOCK_POLL_SECONDS = 0.025


class LockWaiting(ABC):
    """The waiting side of the refresh procedure. The manager provides the attributes and the
    store-reading methods declared here (abstract: a subclass without them cannot be made)."""

    _lock_timeout: float
    _reread: float
    _reread_max: float
    _current: TokenSet | None
    _log: logging.Logger | logging.LoggerAdapter[Any]

    @abstractmethod
    def _store_name(self) -> str: ...

    @abstractmethod
    def _unlock_command(self) -> str | None: ...

    @abstractmethod
    def _read_store(self) -> TokenSet: ...

    @abstractmethod
    def _newer(self, stored: TokenSet) -> TokenSet: ...

    @abstractmethod
    def _reusable(self, tokens: TokenSet, rejected: str | None) -> bool: ...

    def _wait_for_lock(self, lock: RefreshLock, rejected: str | None) -> TokenSet | None:
        """Take ``lock`` (None), or return a usable token set another worker stored meanwhile.

        While waiting, the store is re-read on a backing-off timer (see ``DEFAULT_REREAD_SECONDS``).
        Between re-reads, a worker the lock's record shows to be behind the store (another
        worker saved a rotation this one has not read) does not compete for the lock: under it,
        it would only read the store and leave, keeping the worker that refreshes waiting. Reading
        on the timer rather than at once on every rotation keeps a crowd of waiters from
        drowning the store in reads while the holder saves. A waiter that has read the store is
        no longer behind: if the token it found is spent too, it competes and refreshes.
        """
        start = time.monotonic()
        deadline = start + self._lock_timeout
        next_read = start + self._reread * (0.75 + 0.5 * random.random())
        store_down: TokenStoreError | None = None
        # The newest rotation this waiter knows the store to hold (from memory or a read).
        seen = self._current.rotation if self._current is not None else None
        while True:
            now = time.monotonic()
            if now >= next_read:
                # Jitter: waiters that started together re-read the store at different moments.
                self._reread = min(self._reread * 2, self._reread_max)
                next_read = now + self._reread * (0.75 + 0.5 * random.random())
                try:
                    stored = self._newer(self._read_store())
                except TokenStoreError as error:
                    if store_down is None:  # once per wait: the lock holder meets it too
                        self._log.warning("while waiting for the refresh lock: %s", error)
                    store_down = error
                else:
                    if self._reusable(stored, rejected):
                        return stored
                    # Spent too (or the one rejected): nothing to wait for; compete.
                    seen = stored.rotation if seen is None else max(seen, stored.rotation)
            elif self._behind(lock, seen):
                # Behind stays behind until this waiter re-reads the store (the record only moves
                # on), so it sleeps until then instead of looking again every poll: 31 waiters
                # peeking 40 times a second each took CPU from the holder on 2 cores.
                time.sleep(max(0.0, min(next_read, deadline) - now))
            elif self._try_acquire(lock, min(LOCK_POLL_SECONDS * 10, max(0.0, next_read - now))):
                self._reread = min(FIRST_REREAD_SECONDS, self._reread_max)
                return None
            if time.monotonic() >= deadline:
                raise lock_timeout(
                    lock,
                    timeout=self._lock_timeout,
                    store=self._store_name(),
                    unlock_command=self._unlock_command(),
                )

    @staticmethod
    def _behind(lock: RefreshLock, seen: int | None) -> bool:
        """Whether the lock's record shows the store past rotation ``seen``."""
        if seen is None:
            return False
        try:
            peeked = lock.peek_rotation()
        except Exception:  # only an optimisation: when in doubt, compete for the lock
            return False
        return peeked is not None and peeked > seen

    def _try_acquire(self, lock: RefreshLock, wait: float) -> bool:
        try:
            return lock.try_acquire(wait)
        except TokenStoreError:
            raise
        except Exception as error:
            name = self._store_name()
            raise TokenStoreError(
                name,
                f"the refresh lock of {name} ({lock.description}) could not be "
                f"taken: {type(error).__name__}: {error}",
            ) from error
