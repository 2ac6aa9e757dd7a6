"""The webhook receiver's state: every verified event, stored before it is acknowledged, and
the credential block that serves each biller (so an event can start that biller's jobs).

An event is stored once (by ``dedup_key``); a retried delivery only bumps ``deliveries``. It is
handed to Prefect later by the receiver's emitter, which marks it ``emitted_at``: the ledger is
the outbox, so an event acknowledged to the service is never lost if the process dies before
emitting it (``docs/service.md`` §11.4 Retries and ordering).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import datetime
from typing import Any

from sqlalchemy import JSON, Connection, Index, Integer, RowMapping, String, select, update
from sqlalchemy.dialects import postgresql, sqlite
from sqlalchemy.orm import Mapped, mapped_column

from ledger._base import LedgerBase, insert_or_ignore, upsert
from ledger._engine import check_json
from ledger._models import Base
from ledger._types import UTCDateTime
from ledger.webhooks import NewWebhookEvent, StoredDelivery, WebhookEventRecord


class WebhookEventRow(Base):
    """One event the service delivered (however many times it was delivered)."""

    __tablename__ = "ledger_webhook_events"
    __table_args__ = (
        Index("ix_ledger_webhook_events_received_at", "received_at"),
        Index("ix_ledger_webhook_events_emitted_at", "emitted_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    dedup_key: Mapped[str] = mapped_column(String(300), unique=True)
    event_id: Mapped[str | None] = mapped_column(String(200))
    biller_id: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(40))
    type: Mapped[str] = mapped_column(String(100))
    payload: Mapped[dict[str, Any]] = mapped_column(JSON)
    deliveries: Mapped[int] = mapped_column(Integer)
    received_at: Mapped[datetime] = mapped_column(UTCDateTime)
    last_delivery_at: Mapped[datetime] = mapped_column(UTCDateTime)
    emitted_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    emissions: Mapped[int] = mapped_column(Integer)


class WebhookBillerRow(Base):
    """The credential block (by name) that serves a biller (by the service's id)."""

    __tablename__ = "ledger_webhook_billers"

    biller_id: Mapped[str] = mapped_column(String(200), primary_key=True)
    block: Mapped[str] = mapped_column(String(200))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


EVENTS = Base.metadata.tables[WebhookEventRow.__tablename__]
BILLERS = Base.metadata.tables[WebhookBillerRow.__tablename__]
_KEY_LENGTH = 300


class WebhooksMixin(LedgerBase):
    """The webhook half of :class:`~ledger.Ledger`."""

    def store_webhook_event(self, event: NewWebhookEvent) -> StoredDelivery:
        """Store a verified event once; a repeat delivery of it only counts as a delivery."""
        return self.store_webhook_events([event])[0]

    def store_webhook_events(self, events: Sequence[NewWebhookEvent]) -> list[StoredDelivery]:
        """:meth:`store_webhook_event` for many deliveries in one transaction (the receiver
        commits a burst together), in order; a key repeated in the batch counts twice."""
        for event in events:
            if not event.dedup_key or len(event.dedup_key) > _KEY_LENGTH:
                raise ValueError(f"webhook dedup_key must be 1-{_KEY_LENGTH} characters")
            check_json("webhook payload", event.payload)
        if not events:
            return []
        now = self._now()
        occurrences = Counter(event.dedup_key for event in events)
        with self._begin() as connection:
            inserted = _insert_new(connection, events, now)
            extra: dict[int, list[str]] = {}
            for key, count in occurrences.items():
                repeats = count - (1 if key in inserted else 0)
                if repeats:
                    extra.setdefault(repeats, []).append(key)
            for repeats, keys in extra.items():
                connection.execute(
                    update(EVENTS)
                    .where(EVENTS.c.dedup_key.in_(keys))
                    .values(deliveries=EVENTS.c.deliveries + repeats, last_delivery_at=now)
                )
            stmt = select(EVENTS).where(EVENTS.c.dedup_key.in_(list(occurrences)))
            found = {row["dedup_key"]: _record(row) for row in connection.execute(stmt).mappings()}
        stored = []
        for event in events:
            first = event.dedup_key in inserted
            inserted.discard(event.dedup_key)  # a key repeated in the batch is new only once
            stored.append(StoredDelivery(found[event.dedup_key], first))
        return stored

    def webhook_events_to_emit(self, limit: int = 200) -> list[WebhookEventRecord]:
        """Stored events not yet handed to Prefect, oldest first."""
        stmt = select(EVENTS).where(EVENTS.c.emitted_at.is_(None)).order_by(EVENTS.c.id)
        with self._begin() as connection:
            return [_record(r) for r in connection.execute(stmt.limit(limit)).mappings()]

    def mark_webhook_events_emitted(self, ids: Sequence[int]) -> None:
        """Record that these events were handed to Prefect (once more, for a replay)."""
        if not ids:
            return
        now = self._now()
        with self._begin() as connection:
            connection.execute(
                update(EVENTS)
                .where(EVENTS.c.id.in_(list(ids)))
                .values(emitted_at=now, emissions=EVENTS.c.emissions + 1)
            )

    def webhook_events(
        self,
        *,
        since: datetime | None = None,
        biller_id: str | None = None,
        limit: int | None = None,
    ) -> list[WebhookEventRecord]:
        """Stored events received at or after ``since`` (all by default), oldest first."""
        stmt = select(EVENTS).order_by(EVENTS.c.id)
        if since is not None:
            stmt = stmt.where(EVENTS.c.received_at >= since)
        if biller_id is not None:
            stmt = stmt.where(EVENTS.c.biller_id == biller_id)
        if limit is not None:
            stmt = stmt.limit(limit)
        with self._begin() as connection:
            return [_record(r) for r in connection.execute(stmt).mappings()]

    def set_biller_block(self, biller_id: str, block: str) -> None:
        """Remember that credential block ``block`` serves biller ``biller_id``."""
        for name, value in (("biller_id", biller_id), ("block", block)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"{name} must be a non-empty string, got {value!r}")
        row = {"biller_id": biller_id, "block": block, "updated_at": self._now()}
        with self._begin() as connection:
            upsert(connection, BILLERS, [row], ["biller_id"], ["block", "updated_at"])

    def biller_blocks(self) -> dict[str, str]:
        """Every biller id the ledger knows a credential block for: id -> block name."""
        with self._begin() as connection:
            rows = connection.execute(select(BILLERS.c.biller_id, BILLERS.c.block)).all()
        return {str(biller_id): str(block) for biller_id, block in rows}


def _insert_new(
    connection: Connection, events: Sequence[NewWebhookEvent], now: datetime
) -> set[str]:
    """Insert the events whose key is new; returns the keys inserted. One look-up and one
    executemany (a compiled statement reused across batches), not a statement per event."""
    unique = {event.dedup_key: event for event in reversed(events)}  # first occurrence wins
    present = select(EVENTS.c.dedup_key).where(EVENTS.c.dedup_key.in_(list(unique)))
    known = set(connection.execute(present).scalars())
    rows = [_new_row(event, now) for key, event in unique.items() if key not in known]
    if not rows:
        return set()
    dialect = connection.dialect.name
    if dialect in ("sqlite", "postgresql"):
        module: Any = sqlite if dialect == "sqlite" else postgresql
        stmt = module.insert(EVENTS).on_conflict_do_nothing(index_elements=["dedup_key"])
        connection.execute(stmt, rows)
        # A row another process inserted since the look-up was ignored: ask which are ours.
        mine = select(EVENTS.c.dedup_key).where(
            EVENTS.c.dedup_key.in_([row["dedup_key"] for row in rows]),
            EVENTS.c.received_at == now,
            EVENTS.c.deliveries == 1,
        )
        return set(connection.execute(mine).scalars())
    return {
        row["dedup_key"] for row in rows if insert_or_ignore(connection, EVENTS, row, ["dedup_key"])
    }


def _new_row(event: NewWebhookEvent, now: datetime) -> dict[str, Any]:
    return {
        "dedup_key": event.dedup_key,
        "event_id": event.event_id,
        "biller_id": event.biller_id,
        "kind": event.kind,
        "type": event.type,
        "payload": event.payload,
        "deliveries": 1,
        "received_at": now,
        "last_delivery_at": now,
        "emitted_at": None,
        "emissions": 0,
    }


def _record(row: RowMapping) -> WebhookEventRecord:
    return WebhookEventRecord(
        id=int(row["id"]),
        dedup_key=row["dedup_key"],
        event_id=row["event_id"],
        biller_id=row["biller_id"],
        kind=row["kind"],
        type=row["type"],
        payload=dict(row["payload"] or {}),
        deliveries=int(row["deliveries"]),
        received_at=row["received_at"],
        last_delivery_at=row["last_delivery_at"],
        emitted_at=row["emitted_at"],
        emissions=int(row["emissions"]),
    )
