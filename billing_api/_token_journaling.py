"""The refresh procedure's side of the write-ahead journal (``docs/credentials.md`` §3): every
journal call the :class:`~billing_api._tokens.TokenManager` makes, with the rule that a failing
journal never stops a refresh. Each failure is logged on the manager's logger instead, at the
level its consequence deserves (a token set that reached neither the journal nor the store is
CRITICAL).
"""

from __future__ import annotations

import json
import logging
from datetime import datetime
from typing import Any, Protocol

from billing_api._recovery import JournalState, TokenJournal
from billing_api._token_set import TokenResponse, TokenSet

__all__ = ["JournalKeeper"]


class _Named(Protocol):
    @property
    def name(self) -> str: ...


class JournalKeeper:
    """One credential's journal as the refresh procedure uses it (``journal`` None: no journal,
    every call a no-op, for stores that are themselves a local file)."""

    def __init__(
        self,
        journal: TokenJournal | None,
        store: _Named,
        log: logging.Logger | logging.LoggerAdapter[Any],
    ) -> None:
        self.journal = journal
        self._store = store
        self._log = log

    @property
    def _name(self) -> str:
        # Read on use, as the store's name is (a block that was never saved has none yet).
        return self._store.name

    def location(self) -> str:
        """Where the records are kept, for messages."""
        return self.journal.location(self._name) if self.journal else "(none)"

    def state(self) -> JournalState:
        """What the journal holds; an unreadable journal is logged and read as empty."""
        if self.journal is None:
            return JournalState()
        try:
            return self.journal.state(self._name)
        except Exception as error:  # the journal's failures never stop a refresh
            self._log.error(
                "recovery journal %s of %s is unreadable (%s: %s); going on without it",
                self.location(),
                self._name,
                type(error).__name__,
                error,
            )
            return JournalState()

    def intent(self, from_rotation: int) -> None:
        """Note a refresh about to be sent (no secret)."""
        if self.journal is None:
            return
        try:
            self.journal.record_intent(self._name, from_rotation=from_rotation)
        except Exception as error:  # logged; the refresh goes on
            self._log.warning(
                "could not note the refresh of %s in %s (%s)",
                self._name,
                self.location(),
                type(error).__name__,
            )

    def record(self, new: TokenSet) -> bool:
        """Keep ``new`` durably; False (and a CRITICAL line) when it could not be."""
        if self.journal is None:
            return False
        try:
            self.journal.record(self._name, new)
        except Exception as error:  # logged; the refresh goes on
            self._log.critical(
                "rotation %d of %s could not be written to the recovery journal %s (%s); "
                "saving it to the store directly",
                new.rotation,
                self._name,
                self.location(),
                type(error).__name__,
            )
            return False
        return True

    def record_answer(self, body: bytes, base: TokenSet, asked_at: datetime) -> TokenSet | None:
        """Journal the token set in a refresh grant's raw answer the instant it arrives, before
        the client parses it: a kill from here on keeps it (measured, ``docs/credentials.md``
        §3). The token set journaled, or None when the body does not plainly hold a new one
        (the parsed answer is journaled then, as before)."""
        if self.journal is None:
            return None
        try:
            data = json.loads(body)
            access, refresh = data["access_token"], data["refresh_token"]
            expires = data.get("expires_in")
        except (ValueError, TypeError, KeyError):
            return None
        plain = isinstance(expires, int | float) and not isinstance(expires, bool)
        if not (isinstance(access, str) and access and isinstance(refresh, str) and refresh):
            return None
        if not plain and expires is not None:  # anything odder is left to the client's parser
            return None
        lifetime = float(expires) if expires is not None else None
        answer = TokenResponse(access, refresh, lifetime, None, "Bearer", asked_at)
        tokens = answer.to_token_set(base.rotation + 1)
        return tokens if self.record(tokens) else None

    def clear_intent(self) -> None:
        """Forget this process's intents (its refresh ended without a token set)."""
        if self.journal is None:
            return
        try:
            self.journal.clear_intent(self._name)
        except Exception as error:  # logged; the refresh goes on
            self._log.warning(
                "could not clear the refresh intent of %s (%s)", self._name, type(error).__name__
            )

    def settle(self, stored_rotation: int) -> None:
        """Remove what the store now holds (up to ``stored_rotation``)."""
        if self.journal is None:
            return
        try:
            self.journal.settle(self._name, stored_rotation=stored_rotation)
        except Exception as error:  # logged; the refresh goes on
            self._log.warning(
                "the store of %s holds rotation %d but its recovery records could not be "
                "removed from %s (%s); the next lock holder removes them",
                self._name,
                stored_rotation,
                self.location(),
                type(error).__name__,
            )
