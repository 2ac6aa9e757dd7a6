"""What the ledger hands out about webhook events: frozen dataclasses, never ORM rows."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import Any


@dataclass(frozen=True)
class NewWebhookEvent:
    """A verified delivery to store. ``dedup_key`` is ``event:<eventId>``, or ``body:<sha256>``
    for a payload without an event id (``docs/service.md`` §11.3 Payloads)."""

    dedup_key: str
    event_id: str | None
    biller_id: str
    kind: str
    type: str
    payload: dict[str, Any]


@dataclass(frozen=True)
class WebhookEventRecord:
    """A stored event: how often it was delivered, and whether (and how often) it was emitted."""

    id: int
    dedup_key: str
    event_id: str | None
    biller_id: str
    kind: str
    type: str
    payload: dict[str, Any]
    deliveries: int
    received_at: datetime
    last_delivery_at: datetime
    emitted_at: datetime | None
    emissions: int


@dataclass(frozen=True)
class StoredDelivery:
    """What storing one delivery found: the event, and whether this delivery was its first."""

    event: WebhookEventRecord
    first: bool
