"""The refresh token's recovery journal in the ledger's database, for workers on several machines
(``docs/credentials.md`` §4): the same records as the local journal (``billing_api._recovery``),
one row per credential block, encrypted with a key from the environment.

Table ``ledger_token_journal`` (migration 0007): ``store`` (the block's name), ``rotation`` (the
newest rotation of a token set held, 0 for none), ``sealed`` (the records, a Fernet token: AES-128
and an HMAC under ``BILLOPS_TOKEN_JOURNAL_KEY``) and ``updated_at``. Without the key the rows say
which blocks have something pending and nothing more; a wrong key is refused, naming the
variable. The key is never stored in the database.

Writes happen under the credential's refresh lock (one writer at a time); each is one short
transaction, committed before it returns, so the database's durability is the journal's.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from datetime import datetime
from typing import TYPE_CHECKING, Any

from sqlalchemy import Integer, LargeBinary, String, delete, select
from sqlalchemy.engine import Connection, Engine
from sqlalchemy.exc import NoSuchTableError, OperationalError, ProgrammingError
from sqlalchemy.orm import Mapped, mapped_column

from ledger._base import upsert
from ledger._engine import make_engine, safe_url
from ledger._models import Base
from ledger._types import UTCDateTime, utcnow

if TYPE_CHECKING:
    from cryptography.fernet import Fernet

    from billing_api import JournalRecords, JournalState, TokenSet

__all__ = ["KEY_ENV", "LedgerTokenJournal", "TokenJournalKeyError"]

KEY_ENV = "BILLOPS_TOKEN_JOURNAL_KEY"


class TokenJournalRow(Base):
    """One credential block's pending records, sealed."""

    __tablename__ = "ledger_token_journal"

    store: Mapped[str] = mapped_column(String(200), primary_key=True)
    rotation: Mapped[int] = mapped_column(Integer)
    sealed: Mapped[bytes] = mapped_column(LargeBinary)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


token_journal = Base.metadata.tables["ledger_token_journal"]


class TokenJournalKeyError(ValueError):
    """The journal's key is missing, malformed, or not the one its rows were sealed with."""


def _fernet(key: str | None) -> Fernet:
    from cryptography.fernet import Fernet

    if not key:
        raise TokenJournalKeyError(
            f"the ledger's token journal needs a key: set {KEY_ENV} to a Fernet key (make one "
            'with: python -c "from cryptography.fernet import Fernet; '
            'print(Fernet.generate_key().decode())")'
        )
    try:
        return Fernet(key.encode("ascii"))
    except (ValueError, UnicodeEncodeError):
        raise TokenJournalKeyError(
            f"{KEY_ENV} is not a Fernet key (32 bytes, URL-safe base64)"
        ) from None


def _records() -> type[JournalRecords]:
    # Imported on first use, not with the module: ``ledger`` loads this module for its table, and
    # the service client (httpx, its pydantic models) would otherwise load with every read-only
    # command such as ``billops ledger status`` (README "Performance").
    from billing_api import JournalRecords

    return JournalRecords


class LedgerTokenJournal:
    """A ``billing_api.TokenJournal`` kept in the ledger's ``ledger_token_journal`` table."""

    def __init__(self, url: str, key: str | None, *, engine: Engine | None = None) -> None:
        self._fernet = _fernet(key)
        self._url = url
        self._engine = engine
        self._where = safe_url(url)

    def __repr__(self) -> str:
        return f"LedgerTokenJournal({self._where!r})"

    def _connect(self) -> Engine:
        if self._engine is None:
            self._engine = make_engine(self._url)
        return self._engine

    def location(self, store_name: str) -> str:
        return f"ledger_token_journal on {self._where} (block {store_name})"

    # --- rows --------------------------------------------------------------------------------
    def _load(self, conn: Connection, store_name: str) -> list[dict[str, Any]]:
        query = select(token_journal.c.sealed).where(token_journal.c.store == store_name)
        if conn.dialect.name == "postgresql":
            query = query.with_for_update()
        try:
            sealed = conn.execute(query).scalar_one_or_none()
        except (OperationalError, ProgrammingError, NoSuchTableError) as error:
            if "ledger_token_journal" in str(error):
                raise OSError(
                    f"{self.location(store_name)}: the table is missing: run billops setup"
                ) from None
            raise
        if sealed is None:
            return []
        from cryptography.fernet import InvalidToken

        try:
            records = json.loads(self._fernet.decrypt(bytes(sealed)))
        except InvalidToken:
            raise TokenJournalKeyError(
                f"{self.location(store_name)}: the row cannot be decrypted with {KEY_ENV} (it "
                "was sealed with another key)"
            ) from None
        return list(records) if isinstance(records, list) else []

    def _save(self, conn: Connection, store_name: str, records: list[dict[str, Any]]) -> None:
        if not records:
            conn.execute(delete(token_journal).where(token_journal.c.store == store_name))
            return
        state = _records().state(records, self.location(store_name))
        row = {
            "store": store_name,
            "rotation": state.tokens.rotation if state.tokens else 0,
            "sealed": self._fernet.encrypt(json.dumps(records).encode("utf-8")),
            "updated_at": utcnow(),
        }
        upsert(conn, token_journal, [row], ["store"], ["rotation", "sealed", "updated_at"])

    def _change(
        self,
        store_name: str,
        change: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    ) -> None:
        with self._connect().begin() as conn:
            records = self._load(conn, store_name)
            changed = change(records)
            if changed != records:
                self._save(conn, store_name, changed)

    # --- the TokenJournal protocol -------------------------------------------------------------
    def record_intent(self, store_name: str, *, from_rotation: int) -> None:
        self._change(store_name, lambda r: [*r, _records().intent(from_rotation)])

    def record(self, store_name: str, tokens: TokenSet) -> None:
        """Committed (so durable as the database is) before it returns."""
        self._change(store_name, lambda r: [*r, _records().tokens(tokens)])

    def state(self, store_name: str) -> JournalState:
        with self._connect().connect() as conn:
            records = self._load(conn, store_name)
        return _records().state(records, self.location(store_name))

    def settle(self, store_name: str, *, stored_rotation: int) -> None:
        self._change(store_name, lambda r: _records().settled(r, stored_rotation))

    def clear_intent(self, store_name: str) -> None:
        self._change(store_name, _records().without_own_intents)

    def pending(self) -> list[tuple[str, int, datetime]]:
        """Every block with something in the journal: name, newest rotation, when (no key
        needed: nothing secret)."""
        query = select(token_journal.c.store, token_journal.c.rotation, token_journal.c.updated_at)
        with self._connect().connect() as conn:
            return [(str(s), int(r), u) for s, r, u in conn.execute(query.order_by("store"))]

    def close(self) -> None:
        """Dispose of the engine this journal made."""
        if self._engine is not None:
            self._engine.dispose()
