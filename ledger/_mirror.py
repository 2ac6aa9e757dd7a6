"""What billops last saw of a biller's payment requests at the service, and how far it has looked.

The import checks a file against the service without listing every payment request the biller
ever had: the ledger keeps one row per payment request seen (its externalId, reference, customer,
description, amount, pay-by date, status and source), refreshed from the service by what changed
since the last look (a *sync mark* per biller: the service's newest ``lastUpdatedTime`` seen).
A file's rows are then checked against these rows, plus a targeted query for its externalIds.

The ledger's identity (a random id written when the schema is first created) lets a run prove at
its end that the ledger it wrote to is still the one it started with.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from datetime import date, datetime
from typing import Any

from sqlalchemy import BigInteger, Date, Index, String, Text, func, select
from sqlalchemy.exc import DBAPIError
from sqlalchemy.orm import Mapped, mapped_column

from ledger._base import LedgerBase, upsert
from ledger._engine import make_engine
from ledger._models import Base
from ledger._types import UTCDateTime
from ledger.errors import LedgerReplaced, LedgerSchemaError
from ledger.migrate import sqlite_file_missing

BATCH = 500
LEDGER_ID_KEY = "ledger_id"


class PaymentRequestSeenRow(Base):
    """A payment request of a biller, as the service last showed it."""

    __tablename__ = "ledger_payment_requests"
    __table_args__ = (
        Index("ix_ledger_payment_requests_external_id", "biller", "external_id"),
        Index("ix_ledger_payment_requests_reference", "biller", "reference"),
        Index("ix_ledger_payment_requests_customer", "biller", "customer_id"),
    )

    biller: Mapped[str] = mapped_column(String(200), primary_key=True)
    payment_request_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    number: Mapped[str | None] = mapped_column(String(100))
    external_id: Mapped[str | None] = mapped_column(String(300))
    reference: Mapped[str | None] = mapped_column(String(300))
    customer_id: Mapped[str | None] = mapped_column(String(200))
    description: Mapped[str | None] = mapped_column(Text)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    paid_pennies: Mapped[int] = mapped_column(BigInteger)
    pay_by_date: Mapped[date | None] = mapped_column(Date)
    status: Mapped[str] = mapped_column(String(40))
    source: Mapped[str | None] = mapped_column(String(40))
    last_updated: Mapped[datetime | None] = mapped_column(UTCDateTime)


class SyncMarkRow(Base):
    """How far billops has looked at one stream of a biller's data (the service's clock)."""

    __tablename__ = "ledger_sync_marks"

    biller: Mapped[str] = mapped_column(String(200), primary_key=True)
    stream: Mapped[str] = mapped_column(String(100), primary_key=True)
    mark: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class MetaRow(Base):
    """Facts about the ledger itself (its identity)."""

    __tablename__ = "ledger_meta"

    key: Mapped[str] = mapped_column(String(100), primary_key=True)
    value: Mapped[str] = mapped_column(String(300))


SEEN = Base.metadata.tables[PaymentRequestSeenRow.__tablename__]
MARKS = Base.metadata.tables[SyncMarkRow.__tablename__]
META = Base.metadata.tables[MetaRow.__tablename__]
_SEEN_KEY = ("biller", "payment_request_id")
_SEEN_UPDATES = tuple(c.name for c in SEEN.columns if c.name not in _SEEN_KEY)


@dataclass(frozen=True)
class PaymentRequestSeen:
    """A payment request as the service last showed it (amounts in pennies, exact)."""

    biller: str
    payment_request_id: str
    number: str | None
    external_id: str | None
    reference: str | None
    customer_id: str | None
    description: str | None
    amount_pennies: int
    paid_pennies: int
    pay_by_date: date | None
    status: str
    source: str | None
    last_updated: datetime | None


class MirrorMixin(LedgerBase):
    """The payment requests seen, the sync marks and the ledger's identity."""

    def record_payment_requests(self, records: Iterable[PaymentRequestSeen]) -> int:
        """Insert or refresh payment requests seen; returns how many rows were written."""
        rows = [_row(r) for r in records]
        with self._begin() as connection:
            for start in range(0, len(rows), BATCH):
                upsert(
                    connection,
                    SEEN,
                    rows[start : start + BATCH],
                    list(_SEEN_KEY),
                    _SEEN_UPDATES,
                )
        return len(rows)

    def forget_payment_requests(self, biller: str, ids: Sequence[str]) -> None:
        """Drop payment requests the service no longer has (deleted by a full sync)."""
        with self._begin() as connection:
            for start in range(0, len(ids), BATCH):
                part = list(ids[start : start + BATCH])
                connection.execute(
                    SEEN.delete().where(
                        SEEN.c.biller == biller, SEEN.c.payment_request_id.in_(part)
                    )
                )

    def payment_requests_seen(
        self,
        biller: str,
        *,
        external_ids: Sequence[str] | None = None,
        references: Sequence[str] | None = None,
        customer_ids: Sequence[str] | None = None,
        source: str | None = None,
    ) -> list[PaymentRequestSeen]:
        """The biller's payment requests seen, narrowed by any of the filters given (OR-ed within
        one filter, AND-ed across them)."""
        conditions: list[Any] = [SEEN.c.biller == biller]
        if source is not None:
            conditions.append(SEEN.c.source == source)
        stmt = select(SEEN).where(*conditions).order_by(SEEN.c.payment_request_id)
        filters = [
            (SEEN.c.external_id, external_ids),
            (SEEN.c.reference, references),
            (SEEN.c.customer_id, customer_ids),
        ]
        chosen = [(column, list(values)) for column, values in filters if values is not None]
        if not chosen:
            with self._begin() as connection:
                return [_seen(row) for row in connection.execute(stmt).mappings()]
        # One filter drives batched IN queries; the others narrow the result in Python.
        (column, values), rest = chosen[0], chosen[1:]
        found: dict[str, PaymentRequestSeen] = {}
        with self._begin() as connection:
            for start in range(0, len(values), BATCH):
                part = stmt.where(column.in_(values[start : start + BATCH]))
                for row in connection.execute(part).mappings():
                    found[row["payment_request_id"]] = _seen(row)
        for other, wanted in rest:
            allowed = set(wanted)
            found = {k: v for k, v in found.items() if getattr(v, other.name) in allowed}
        return sorted(found.values(), key=lambda r: r.payment_request_id)

    def count_payment_requests_seen(self, biller: str) -> int:
        """How many payment requests of the biller the ledger holds."""
        stmt = select(func.count()).select_from(SEEN).where(SEEN.c.biller == biller)
        with self._begin() as connection:
            return int(connection.execute(stmt).scalar_one())

    def sync_mark(self, biller: str, stream: str) -> datetime | None:
        """How far the stream was looked at last time (None: never)."""
        stmt = select(MARKS.c.mark).where(MARKS.c.biller == biller, MARKS.c.stream == stream)
        with self._begin() as connection:
            return connection.execute(stmt).scalar_one_or_none()

    def set_sync_mark(self, biller: str, stream: str, mark: datetime) -> None:
        """Remember how far the stream has been looked at."""
        row = {"biller": biller, "stream": stream, "mark": mark, "updated_at": self._now()}
        with self._begin() as connection:
            upsert(connection, MARKS, [row], ["biller", "stream"], ("mark", "updated_at"))

    def ledger_id(self) -> str:
        """The identity written when this ledger's schema was created."""
        stmt = select(META.c.value).where(META.c.key == LEDGER_ID_KEY)
        with self._begin() as connection:
            value = connection.execute(stmt).scalar_one_or_none()
        if value is None:
            raise LedgerSchemaError(
                f"the ledger at {self.url} has no identity: run `billops db upgrade` first"
            )
        return str(value)

    def check_unchanged(self, expected_id: str) -> None:
        """Raise :class:`LedgerReplaced` unless the ledger at this URL is still the one
        ``expected_id`` names. A fresh connection is used: a pooled one would keep reading a
        SQLite file that was deleted meanwhile."""
        url = self._engine.url.render_as_string(hide_password=False)
        if sqlite_file_missing(url):
            raise LedgerReplaced(f"the ledger at {self.url} was deleted during the run")
        engine = make_engine(url)
        try:
            with engine.connect() as connection:
                stmt = select(META.c.value).where(META.c.key == LEDGER_ID_KEY)
                found = connection.execute(stmt).scalar_one_or_none()
        except DBAPIError:
            found = None
        finally:
            engine.dispose()
        if found != expected_id:
            raise LedgerReplaced(
                f"the ledger at {self.url} is not the one this run started with (identity "
                f"{expected_id}, now {found or 'none'}): it was replaced or restored during the "
                "run; what this run did is recorded in the one it started with"
            )


def _row(record: PaymentRequestSeen) -> dict[str, Any]:
    return {name: getattr(record, name) for name in SEEN.columns.keys()}  # noqa: SIM118


def _seen(row: Any) -> PaymentRequestSeen:
    return PaymentRequestSeen(**{name: row[name] for name in SEEN.columns.keys()})  # noqa: SIM118
