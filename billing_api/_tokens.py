"""Token sets, the ``TokenStore`` protocol and the refresh procedure (ARCHITECTURE rule 4).

The service rotates refresh tokens: every refresh answers a new refresh token and kills the one
used. Two workers refreshing with the same token leave one of them with ``invalid_grant``, and a
new refresh token that is not stored before the process dies is lost for good. So:

1. the fast path uses a still-usable access token without any lock;
2. the slow path takes the store's lock (which spans processes and machines), re-reads the store,
   reuses what another worker just obtained, otherwise refreshes and **persists the new token set
   before handing out the new access token** (compare-and-swap on the rotation counter);
3. a failed refresh is never retried blindly: the store is re-read, and if nothing newer is there
   :class:`ReauthorizationRequired` says which command brings the credential back;
4. if persisting keeps failing, the new token set goes to a recovery file only its owner can read,
   the run keeps using it, and a CRITICAL log line names the command that restores it.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from billing_api._exceptions import (
    BillingApiError,
    OAuthError,
    OutcomeUnknown,
    ReauthorizationRequired,
)
from billing_api._token_set import (
    MARGIN_FRACTION,
    MAX_MARGIN_SECONDS,
    RECOVERY_DIR_ENV,
    StaleTokenSet,
    TokenSet,
    TokenStore,
    default_recovery_dir,
    read_recovery_file,
    recovery_file_path,
    scrub,
    token_set_from_dict,
    token_set_to_dict,
    utc_now,
    write_recovery_file,
)

if TYPE_CHECKING:
    from billing_api.oauth import OAuthClient

__all__ = [
    "MARGIN_FRACTION",
    "MAX_MARGIN_SECONDS",
    "RECOVERY_DIR_ENV",
    "StaleTokenSet",
    "TokenManager",
    "TokenSet",
    "TokenStore",
    "default_recovery_dir",
    "read_recovery_file",
    "recovery_file_path",
    "scrub",
    "token_set_from_dict",
    "token_set_to_dict",
    "utc_now",
    "write_recovery_file",
]

_log = logging.getLogger(__name__)


# --- the refresh procedure ------------------------------------------------------------------


def _maybe_processed(error: BillingApiError) -> bool:
    """Whether the token endpoint may have consumed the refresh token despite the error."""
    if isinstance(error, OutcomeUnknown):
        return True
    if isinstance(error, OAuthError):
        return error.is_invalid_grant or error.status_code >= 500 or error.status_code == 200
    return False


class TokenManager:
    """Hands out access tokens for one credential, refreshing it by the procedure above.

    Thread-safe: threads of one process share one in-memory token set and queue on a
    ``threading.Lock`` before the store's cross-process lock.
    """

    def __init__(
        self,
        store: TokenStore,
        oauth: OAuthClient,
        *,
        recovery_dir: Path | None = None,
        now: Callable[[], datetime] = utc_now,
        logger: logging.Logger | logging.LoggerAdapter[Any] | None = None,
        sleep: Callable[[float], None] = time.sleep,
        write_attempts: int = 3,
        write_backoff: float = 0.5,
    ) -> None:
        self._store = store
        self._oauth = oauth
        self._recovery_dir = recovery_dir
        self._now = now
        self._log = logger or _log
        self._sleep = sleep
        self._write_attempts = max(1, write_attempts)
        self._write_backoff = write_backoff
        self._guard = threading.Lock()
        self._current: TokenSet | None = None
        self._recovery_file: Path | None = None

    @property
    def store(self) -> TokenStore:
        """The store this manager reads and writes."""
        return self._store

    @property
    def current(self) -> TokenSet | None:
        """The token set last used (may be newer than the store after a persist failure)."""
        return self._current

    @property
    def recovery_file(self) -> Path | None:
        """The recovery file written in this run, if persisting a rotation failed."""
        return self._recovery_file

    def access_token(self) -> str:
        """A usable access token: memory, then the store (no lock), then a refresh."""
        current = self._current
        if current is not None and current.access_token_usable(self._now()):
            return self._token_of(current)
        latest = self._newer(self._store.read())
        if latest.access_token_usable(self._now()):
            self._current = latest
            return self._token_of(latest)
        return self._slow_path(rejected=None)

    def force_refresh(self, rejected_access_token: str) -> str:
        """After a 401: refresh, unless another worker already replaced the rejected token."""
        return self._slow_path(rejected=rejected_access_token)

    # --- internals ------------------------------------------------------------------------
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

    def _slow_path(self, rejected: str | None) -> str:
        with self._guard:
            # Another thread of this process may have refreshed while this one waited.
            current = self._current
            if current is not None and self._reusable(current, rejected):
                return self._token_of(current)
            with self._store.lock():
                stored = self._store.read()
                base = self._newer(stored)
                if self._reusable(base, rejected):
                    self._current = base
                    return self._token_of(base)
                return self._refresh(base, seen=stored, recheck=True)

    def _refresh(self, base: TokenSet, *, seen: TokenSet, recheck: bool) -> str:
        """Refresh ``base`` (lock held) and persist the result before returning its token.

        ``seen`` is the stored set read under the lock: its rotation is the CAS expectation.
        """
        try:
            response = self._oauth.refresh(base.refresh_token)
        except (OAuthError, OutcomeUnknown) as error:
            if not _maybe_processed(error):
                raise
            return self._after_failed_refresh(base, seen, error, recheck=recheck)
        new = response.to_token_set(base.rotation + 1, fallback_refresh_token=base.refresh_token)
        self._persist(new, expected_rotation=seen.rotation, old=base)
        self._current = new
        return self._token_of(new)

    def _after_failed_refresh(
        self, base: TokenSet, seen: TokenSet, error: BillingApiError, *, recheck: bool
    ) -> str:
        """Never retry the same refresh token: use something newer from the store, or give up."""
        stored = self._store.read()
        if recheck and stored.refresh_token not in (seen.refresh_token, base.refresh_token):
            self._log.warning(
                "refresh of %s failed (%s) but the store holds a newer token set (rotation %d); "
                "using it",
                self._store.name,
                _describe(error),
                stored.rotation,
            )
            if stored.access_token_usable(self._now()):
                self._current = stored
                return self._token_of(stored)
            return self._refresh(stored, seen=stored, recheck=False)
        if isinstance(error, OAuthError) and error.is_invalid_grant:
            reason = (
                f"the refresh token of {self._store.name} (rotation {base.rotation}) was refused "
                f"with invalid_grant: it was used or revoked elsewhere"
            )
        else:
            reason = (
                f"the refresh of {self._store.name} (rotation {base.rotation}) failed after the "
                f"service may have processed it ({_describe(error)}), so the stored refresh "
                f"token may already be consumed"
            )
        raise ReauthorizationRequired(reason, command=self._store.reauthorize_command) from error

    def _persist(self, new: TokenSet, *, expected_rotation: int, old: TokenSet) -> None:
        """Write ``new`` with a few retries; on failure fall back to the recovery file."""
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
            except Exception as error:  # any storage failure: retry, then recover
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
                self._recovery_file = None
                return
        self._recover(new)

    def _recover(self, new: TokenSet) -> None:
        name = self._store.name
        command = getattr(self._store, "recover_command", None) or (
            f"billops auth recover --block {name}"
        )
        directory = self._recovery_dir or default_recovery_dir()
        try:
            path = write_recovery_file(directory, name, new)
        except OSError as error:
            self._log.critical(
                "the new token set of %s (rotation %d) could not be saved to the store NOR to "
                "the recovery directory %s (%s); it lives only in this process's memory until "
                "the next successful refresh",
                name,
                new.rotation,
                directory,
                type(error).__name__,
            )
            return
        self._recovery_file = path
        self._log.critical(
            "the new token set of %s (rotation %d) could not be saved to its store; it was "
            "written to %s (mode 0600) and this run keeps using it. Run `%s` now, or the "
            "credential is lost",
            name,
            new.rotation,
            path,
            command,
        )


def _describe(error: BillingApiError) -> str:
    if isinstance(error, OAuthError):
        return f"HTTP {error.status_code} {error.error}"
    return type(error).__name__
