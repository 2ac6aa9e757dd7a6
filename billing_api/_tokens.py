"""The ``TokenStore`` protocol and the refresh procedure of a rotating refresh token
(``docs/credentials.md`` says why each step is there).

The service rotates refresh tokens: every refresh answers a new refresh token and kills the one
used. Two workers refreshing with the same token leave one of them with ``invalid_grant``, and a
new refresh token that is kept nowhere when the process dies is lost for good. So:

1. the fast path uses a still-usable access token without any lock;
2. the slow path takes the store's refresh lock (which the operating system or the database frees
   when its holder dies). While waiting, it re-reads the store and goes on with a token another
   worker rotated meanwhile;
3. under the lock it re-reads the store, adopts a newer token set left in the recovery journal by
   a worker that stopped between a grant and its save, and reuses a usable token if there is one;
4. otherwise it records its intent in the journal, refreshes, writes the new token set to the
   journal (``fsync``) **before anything else**, then to the store (compare-and-swap on the
   rotation counter), then removes the journal's records; only then is the new access token used;
5. a failed refresh is never retried blindly: the store is re-read, and if nothing newer is there
   :class:`ReauthorizationRequired` says which command brings the credential back;
6. if the store cannot be written, the new token set stays in the journal, the run keeps using it,
   the next lock holder saves it into the store, and a CRITICAL log line says so.

The manager talks to the token endpoint through :class:`TokenEndpoint` (``OAuthClient`` is one),
so it depends on the token set, never on the OAuth client.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from typing import Any

from billing_api._exceptions import (
    BillingApiError,
    OAuthError,
    OutcomeUnknown,
    ReauthorizationRequired,
    TokenStoreError,
)
from billing_api._lock_waiting import DEFAULT_REREAD_SECONDS, FIRST_REREAD_SECONDS, LockWaiting
from billing_api._recovery import JournalState, RefreshIntent, TokenJournal
from billing_api._refresh_lock import RefreshLock
from billing_api._token_journaling import JournalKeeper
from billing_api._token_set import StaleTokenSet, TokenSet, scrub, utc_now
from billing_api._token_store import TokenEndpoint, TokenStore, describe, maybe_processed

__all__ = ["TokenEndpoint", "TokenManager", "TokenStore"]

_log = logging.getLogger(__name__)

#: How long a worker waits for the refresh lock before it gives up (re-reading meanwhile).
DEFAULT_LOCK_TIMEOUT = 120.0


class TokenManager(LockWaiting):
    """Hands out access tokens for one credential, refreshing it by the procedure above.

    Thread-safe: threads of one process share one in-memory token set and queue on a
    ``threading.Lock`` before the store's cross-process lock. ``journal`` is where new token sets
    go first (None: straight to the store, for stores that are themselves a local file).
    ``after_grant`` runs right after the journal write, before the store's: tests use it to
    widen that gap.
    """

    def __init__(
        self,
        store: TokenStore,
        endpoint: TokenEndpoint,
        *,
        journal: TokenJournal | None = None,
        lock_timeout: float = DEFAULT_LOCK_TIMEOUT,
        reread_seconds: float = DEFAULT_REREAD_SECONDS,
        now: Callable[[], datetime] = utc_now,
        logger: logging.Logger | logging.LoggerAdapter[Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        write_attempts: int = 3,
        write_backoff: float = 0.5,
        after_grant: Callable[[TokenSet], None] | None = None,
    ) -> None:
        self._store = store
        self._endpoint = endpoint
        self._lock_timeout = lock_timeout
        self._reread_max = reread_seconds
        self._reread = min(FIRST_REREAD_SECONDS, reread_seconds)
        self._now = now
        self._log = logger or _log
        self._journal = JournalKeeper(journal, store, self._log)
        self._sleep = sleep
        self._write_attempts = max(1, write_attempts)
        self._write_backoff = write_backoff
        self._after_grant = after_grant
        self._guard = threading.Lock()
        self._lock: RefreshLock | None = None
        self._current: TokenSet | None = None
        # The rotation the store is known to hold during a lock hold (None: not known).
        self._stored_rotation: int | None = None

    def __repr__(self) -> str:
        return f"TokenManager(store={self._store.name!r})"

    @property
    def name(self) -> str:
        """The store's name (for log lines)."""
        return self._store.name

    @property
    def store(self) -> TokenStore:
        """The store this manager reads and writes."""
        return self._store

    @property
    def journal(self) -> TokenJournal | None:
        """Where new token sets are kept until the store has them."""
        return self._journal.journal

    @property
    def current(self) -> TokenSet | None:
        """The token set last used (may be newer than the store after a save failure)."""
        return self._current

    def access_token(self) -> str:
        """A usable access token: memory, then the store (no lock), then a refresh."""
        current = self._current
        if current is not None and current.access_token_usable(self._now()):
            return self._token_of(current)
        latest = self._newer(self._read_store())
        if latest.access_token_usable(self._now()):
            self._current = latest
            return self._token_of(latest)
        return self._slow_path(rejected=None)

    def force_refresh(self, rejected: str) -> str:
        """After a 401: refresh, unless another worker already replaced the rejected token."""
        return self._slow_path(rejected=rejected)

    # --- the lock ---------------------------------------------------------------------------
    def _slow_path(self, rejected: str | None) -> str:
        with self._guard:
            # Another thread of this process may have refreshed while this one waited.
            current = self._current
            if current is not None and self._reusable(current, rejected):
                return self._token_of(current)
            lock = self._refresh_lock()
            found = self._wait_for_lock(lock, rejected)
            if found is not None:
                self._current = found
                return self._token_of(found)
            self._stored_rotation = None
            try:
                return self._under_lock(lock, rejected)
            finally:
                lock.release(stored_rotation=self._stored_rotation)

    def _refresh_lock(self) -> RefreshLock:
        if self._lock is None:
            self._lock = self._store.refresh_lock()
        return self._lock

    # --- under the lock ---------------------------------------------------------------------
    def _under_lock(self, lock: RefreshLock, rejected: str | None) -> str:
        current, untouched = self._current, lock.untouched_since_release()
        if current is not None and untouched is not None and current.rotation == untouched:
            # Nobody took the lock since this manager released it with the store at this
            # rotation: the store still holds exactly this set (``_refresh_lock.py``).
            stored = current
        else:
            stored = self._read_store()
        self._stored_rotation = stored.rotation
        state = self._journal.state()
        stored = self._adopt(stored, state)
        base = self._newer(stored)
        if self._reusable(base, rejected):
            self._current = base
            return self._token_of(base)
        if not lock.still_held():
            raise TokenStoreError(
                self._store.name,
                f"the refresh lock of {self._store.name} ({lock.description}) was lost before "
                "the refresh; nothing was sent",
            )
        return self._refresh(base, seen=stored, recheck=True, pending=state.intent)

    def _adopt(self, stored: TokenSet, state: JournalState) -> TokenSet:
        """Save into the store a token set newer than it: one the journal kept (a worker stopped
        between a grant and its save) or this process's memory (an earlier save failed)."""
        candidates = [t for t in (state.tokens, self._current) if t is not None]
        newest = max(candidates, key=lambda t: t.rotation, default=None)
        if newest is None or newest.rotation <= stored.rotation:
            if state.tokens is not None:
                self._journal.settle(stored.rotation)
            return stored
        source = (
            f"the recovery journal {self._journal.location()}"
            if newest is state.tokens
            else "this process's memory"
        )
        self._log.warning(
            "%s holds rotation %d but %s has rotation %d (a worker stopped or failed between "
            "a grant and its save); saving it into the store",
            self._store.name,
            stored.rotation,
            source,
            newest.rotation,
        )
        self._current = newest
        if self._persist(newest, expected_rotation=stored.rotation, old=stored):
            return newest
        return stored

    def _refresh(
        self,
        base: TokenSet,
        *,
        seen: TokenSet,
        recheck: bool,
        pending: RefreshIntent | None,
    ) -> str:
        """Refresh ``base`` (lock held); journal, then store, the result before using it.

        ``seen`` is the stored set read under the lock: its rotation is the CAS expectation.
        ``pending`` is an intent an earlier process left in the journal with no token set after
        it: if the refresh token turns out dead, that is why.
        """
        self._journal.intent(base.rotation)
        asked_at, early = self._now(), []

        def on_answer(body: bytes) -> None:  # before the client parses it: §3 of the doc
            journaled = self._journal.record_answer(body, base, asked_at)
            early.extend([journaled] if journaled is not None else [])

        try:
            response = self._endpoint.refresh(base.refresh_token, on_answer=on_answer)
        except (OAuthError, OutcomeUnknown) as error:
            if not maybe_processed(error):
                self._journal.clear_intent()
                raise
            return self._after_failed_refresh(base, seen, error, recheck=recheck, pending=pending)
        except BillingApiError:  # refused before anything was sent (no connection)
            self._journal.clear_intent()
            raise
        new = response.to_token_set(base.rotation + 1, fallback_refresh_token=base.refresh_token)
        if early and early[0].refresh_token == new.refresh_token:
            new, journaled = early[0], True  # the same answer, journaled on arrival
        else:
            journaled = self._journal.record(new)
        self._current = new
        if self._after_grant is not None:
            self._after_grant(new)
        if not self._persist(new, expected_rotation=seen.rotation, old=base):
            self._report_unsaved(new, journaled=journaled)
        return self._token_of(new)

    def _after_failed_refresh(
        self,
        base: TokenSet,
        seen: TokenSet,
        error: BillingApiError,
        *,
        recheck: bool,
        pending: RefreshIntent | None,
    ) -> str:
        """Never retry the same refresh token: use something newer from the store, or give up."""
        stored = self._read_store()
        self._stored_rotation = stored.rotation
        if recheck and stored.refresh_token not in (seen.refresh_token, base.refresh_token):
            self._journal.clear_intent()
            self._log.warning(
                "refresh of %s failed (%s) but the store holds a newer token set (rotation %d); "
                "using it",
                self._store.name,
                describe(error),
                stored.rotation,
            )
            if stored.access_token_usable(self._now()):
                self._current = stored
                return self._token_of(stored)
            return self._refresh(stored, seen=stored, recheck=False, pending=None)
        self._journal.clear_intent()
        name = self._store.name
        if isinstance(error, OAuthError) and error.is_invalid_grant:
            reason = (
                f"the refresh token of {name} (rotation {base.rotation}) was refused with "
                "invalid_grant: it was used or revoked elsewhere"
            )
            if pending is not None and pending.from_rotation == base.rotation:
                reason += (
                    f"; {pending} never finished: that process stopped after sending it, so the "
                    "service rotated the token but its answer was never received"
                )
        else:
            reason = (
                f"the refresh of {name} (rotation {base.rotation}) failed after the service may "
                f"have processed it ({describe(error)}), so the stored refresh token may already "
                "be consumed"
            )
        raise ReauthorizationRequired(reason, command=self._store.reauthorize_command) from error

    # --- the store --------------------------------------------------------------------------
    def _read_store(self) -> TokenSet:
        try:
            return self._store.read()
        except (TokenStoreError, StaleTokenSet):
            raise
        except Exception as error:
            raise TokenStoreError(
                self._store.name,
                f"token store {self._store.name} could not be read: "
                f"{type(error).__name__}: {error}",
            ) from error

    def _persist(self, new: TokenSet, *, expected_rotation: int, old: TokenSet) -> bool:
        """Write ``new`` with a few retries; True once the store holds it (journal settled)."""
        secrets = (new.refresh_token, new.access_token, old.refresh_token, old.access_token)
        for attempt in range(1, self._write_attempts + 1):
            try:
                self._store.write(new, expected_rotation=expected_rotation)
            except StaleTokenSet as error:
                # Under a working lock this cannot happen: the lock is broken or was bypassed.
                self._log.error(
                    "token store %s refused rotation %d as stale (%s): the refresh lock did not "
                    "hold; keeping the new tokens out of the store",
                    self._store.name,
                    new.rotation,
                    scrub(str(error), secrets),
                )
                break
            except Exception as error:  # any storage failure: retry, then leave it journaled
                self._log.warning(
                    "saving rotation %d of %s failed (attempt %d of %d): %s: %s",
                    new.rotation,
                    self._store.name,
                    attempt,
                    self._write_attempts,
                    type(error).__name__,
                    scrub(str(error), secrets),
                )
                if attempt < self._write_attempts:
                    self._sleep(self._write_backoff * 2 ** (attempt - 1))
            else:
                self._stored_rotation = new.rotation
                self._journal.settle(new.rotation)
                return True
        self._stored_rotation = None  # a failed write may or may not have landed
        return False

    def _report_unsaved(self, new: TokenSet, *, journaled: bool) -> None:
        name = self._store.name
        command = self._store.recover_command or "restore it into the store by hand"
        if journaled:
            self._log.critical(
                "the new token set of %s (rotation %d) could not be saved to its store; it is "
                "kept in the recovery journal %s (mode 0600), this run keeps using it, and the "
                "next worker to take the refresh lock saves it into the store. If no worker "
                "runs, run `%s`",
                name,
                new.rotation,
                self._journal.location(),
                command,
            )
        else:
            self._log.critical(
                "the new token set of %s (rotation %d) could not be saved to its store NOR to "
                "the recovery journal; it lives only in this process's memory until the next "
                "successful save",
                name,
                new.rotation,
            )

    # --- small helpers ----------------------------------------------------------------------
    def _store_name(self) -> str:
        return self._store.name

    def _unlock_command(self) -> str | None:
        return self._store.unlock_command

    @staticmethod
    def _token_of(tokens: TokenSet) -> str:
        assert tokens.access_token is not None
        return tokens.access_token

    def _newer(self, stored: TokenSet) -> TokenSet:
        """The stored set, unless memory holds a later rotation the store never received."""
        current = self._current
        if current is not None and current.rotation > stored.rotation:
            return current
        return stored

    def _reusable(self, tokens: TokenSet, rejected: str | None) -> bool:
        if rejected is not None and tokens.access_token == rejected:
            return False
        return tokens.access_token_usable(self._now())
