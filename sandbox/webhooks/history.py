"""What the sandbox emitted and how its deliveries went, for the admin API
(``/_sandbox/webhooks``): deliveries with every attempt, and events with their payloads."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.core.timefmt import iso
from sandbox.models import WebhookAttempt, WebhookDelivery, WebhookEvent
from sandbox.webhooks import events


def _time(moment: datetime | None) -> str | None:
    return iso(moment) if moment is not None else None


def _attempt(row: WebhookAttempt) -> dict[str, Any]:
    return {
        "instanceId": row.instance_id,
        "number": row.number,
        "startedTime": iso(row.started_at),
        "durationMs": row.duration_ms,
        "statusCode": row.status_code,
        "error": row.error,
        "succeeded": row.succeeded,
        "signed": row.signed,
        "nextDelaySeconds": row.next_delay_seconds,
    }


def _delivery(
    row: WebhookDelivery, event: WebhookEvent, attempts: list[WebhookAttempt]
) -> dict[str, Any]:
    return {
        "id": row.id,
        "eventId": row.event_id,
        "eventType": event.type,
        "kind": event.kind,
        "billerId": event.biller_id,
        "clientId": row.client_id,
        "webhookId": row.webhook_id,
        "url": row.url,
        "status": row.status,
        "attemptCount": row.attempts,
        "lastStatusCode": row.last_status_code,
        "lastError": row.last_error,
        "createdTime": iso(row.created_at),
        "nextAttemptTime": _time(row.next_attempt_at),
        "finishedTime": _time(row.finished_at),
        "attempts": [_attempt(a) for a in sorted(attempts, key=lambda a: a.number)],
    }


@dataclass(frozen=True)
class DeliveryFilters:
    """Each given filter must match (None: any)."""

    client_id: str | None = None
    biller_id: str | None = None
    webhook_id: str | None = None
    event_id: str | None = None
    event_type: str | None = None
    kind: str | None = None
    status: str | None = None


def deliveries(session: Session, filters: DeliveryFilters, limit: int) -> list[dict[str, Any]]:
    """Deliveries matching every filter given, oldest first, each with its attempts."""
    query = select(WebhookDelivery, WebhookEvent).join(
        WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id
    )
    conditions = {
        WebhookDelivery.client_id: filters.client_id,
        WebhookEvent.biller_id: filters.biller_id,
        WebhookDelivery.webhook_id: filters.webhook_id,
        WebhookDelivery.event_id: filters.event_id,
        WebhookEvent.type: filters.event_type,
        WebhookEvent.kind: filters.kind,
        WebhookDelivery.status: filters.status,
    }
    for column, value in conditions.items():
        if value is not None:
            query = query.where(column == value)
    query = query.order_by(WebhookDelivery.created_at, WebhookEvent.seq, WebhookDelivery.id)
    rows = session.execute(query.limit(limit)).all()
    attempts: dict[str, list[WebhookAttempt]] = defaultdict(list)
    ids = [delivery.id for delivery, _ in rows]
    if ids:
        for attempt in session.scalars(
            select(WebhookAttempt).where(WebhookAttempt.delivery_id.in_(ids))
        ):
            attempts[attempt.delivery_id].append(attempt)
    return [_delivery(d, e, attempts[d.id]) for d, e in rows]


def emitted(
    session: Session, biller_id: str | None, event_type: str | None, kind: str | None, limit: int
) -> list[dict[str, Any]]:
    """Emitted events in the order they were emitted, with the payload each delivery sends."""
    query = select(WebhookEvent)
    if biller_id is not None:
        query = query.where(WebhookEvent.biller_id == biller_id)
    if event_type is not None:
        query = query.where(WebhookEvent.type == event_type)
    if kind is not None:
        query = query.where(WebhookEvent.kind == kind)
    rows = session.scalars(query.order_by(WebhookEvent.seq).limit(limit))
    return [
        {
            "id": row.id,
            "kind": row.kind,
            "type": row.type,
            "billerId": row.biller_id,
            "occurredTime": iso(row.occurred_at),
            "emittedTime": iso(row.emitted_at),
            "payload": events.payload(row),
        }
        for row in rows
    ]
