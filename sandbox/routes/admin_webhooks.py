"""``/_sandbox/webhooks``: what the sandbox emitted and how its deliveries went.

Not part of the contract; no authentication, loopback clients only (like ``/_sandbox``).
``GET /_sandbox/webhooks/deliveries`` lists deliveries (oldest first) with every attempt;
``GET /_sandbox/webhooks/events`` lists emitted events with their payloads.
"""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Query
from sqlalchemy import select

from sandbox import events
from sandbox.deps import AdminGuard, SessionDep
from sandbox.event_models import WebhookAttempt, WebhookDelivery, WebhookEvent
from sandbox.timefmt import iso

router = APIRouter(prefix="/_sandbox/webhooks", dependencies=[AdminGuard], include_in_schema=False)

Limit = Annotated[int, Query(ge=1, le=1000)]


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


@router.get("/deliveries")
def list_deliveries(  # noqa: PLR0913 - one parameter per filter
    session: SessionDep,
    client_id: Annotated[str | None, Query(alias="clientId")] = None,
    biller_id: Annotated[str | None, Query(alias="billerId")] = None,
    webhook_id: Annotated[str | None, Query(alias="webhookId")] = None,
    event_id: Annotated[str | None, Query(alias="eventId")] = None,
    event_type: Annotated[str | None, Query(alias="eventType")] = None,
    kind: str | None = None,
    status: str | None = None,
    limit: Limit = 200,
) -> dict[str, Any]:
    """Deliveries matching every filter given (``eventType``: an event name such as
    ``INVOICE_PAID``; ``status``: PENDING, RETRYING, SUCCEEDED, FAILED or CANCELLED)."""
    query = select(WebhookDelivery, WebhookEvent).join(
        WebhookEvent, WebhookEvent.id == WebhookDelivery.event_id
    )
    conditions = {
        WebhookDelivery.client_id: client_id,
        WebhookEvent.biller_id: biller_id,
        WebhookDelivery.webhook_id: webhook_id,
        WebhookDelivery.event_id: event_id,
        WebhookEvent.type: event_type,
        WebhookEvent.kind: kind,
        WebhookDelivery.status: status,
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
    return {"deliveries": [_delivery(d, e, attempts[d.id]) for d, e in rows]}


@router.get("/events")
def list_events(
    session: SessionDep,
    biller_id: Annotated[str | None, Query(alias="billerId")] = None,
    event_type: Annotated[str | None, Query(alias="eventType")] = None,
    kind: str | None = None,
    limit: Limit = 200,
) -> dict[str, Any]:
    """Emitted events, in the order they were emitted, with the payload each delivery sends."""
    query = select(WebhookEvent)
    if biller_id is not None:
        query = query.where(WebhookEvent.biller_id == biller_id)
    if event_type is not None:
        query = query.where(WebhookEvent.type == event_type)
    if kind is not None:
        query = query.where(WebhookEvent.kind == kind)
    rows = session.scalars(query.order_by(WebhookEvent.seq).limit(limit))
    return {
        "events": [
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
    }
