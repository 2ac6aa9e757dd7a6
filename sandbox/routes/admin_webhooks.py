"""``/_sandbox/webhooks``: what the sandbox emitted and how its deliveries went.

Not part of the contract; no authentication, loopback clients only (like ``/_sandbox``).
``GET /_sandbox/webhooks/deliveries`` lists deliveries (oldest first) with every attempt;
``GET /_sandbox/webhooks/events`` lists emitted events with their payloads.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query

from sandbox.core.deps import AdminGuard, SessionDep
from sandbox.webhooks import history

router = APIRouter(prefix="/_sandbox/webhooks", dependencies=[AdminGuard], include_in_schema=False)

Limit = Annotated[int, Query(ge=1, le=1000)]
BillerIdQuery = Annotated[str | None, Query(alias="billerId")]
EventTypeQuery = Annotated[str | None, Query(alias="eventType")]


@router.get("/deliveries")
def list_deliveries(  # noqa: PLR0913 - one parameter per filter
    session: SessionDep,
    client_id: Annotated[str | None, Query(alias="clientId")] = None,
    biller_id: BillerIdQuery = None,
    webhook_id: Annotated[str | None, Query(alias="webhookId")] = None,
    event_id: Annotated[str | None, Query(alias="eventId")] = None,
    event_type: EventTypeQuery = None,
    kind: str | None = None,
    status: str | None = None,
    limit: Limit = 200,
) -> dict[str, Any]:
    """Deliveries matching every filter given (``eventType``: an event name such as
    ``INVOICE_PAID``; ``status``: PENDING, RETRYING, SUCCEEDED, FAILED or CANCELLED)."""
    filters = history.DeliveryFilters(
        client_id=client_id,
        biller_id=biller_id,
        webhook_id=webhook_id,
        event_id=event_id,
        event_type=event_type,
        kind=kind,
        status=status,
    )
    return {"deliveries": history.deliveries(session, filters, limit)}


@router.get("/events")
def list_events(
    session: SessionDep,
    biller_id: BillerIdQuery = None,
    event_type: EventTypeQuery = None,
    kind: str | None = None,
    limit: Limit = 200,
) -> dict[str, Any]:
    """Emitted events, in the order they were emitted, with the payload each delivery sends."""
    return {"events": history.emitted(session, biller_id, event_type, kind, limit)}
