"""The Prefect event of a stored webhook event: what deployment triggers match on.

- name ``billops.service.<kind>.<name>``, the service's name in lower case
  (``billops.service.payment.dd_payment_failed``);
- resource: the biller (``billops.biller.<billerId>``), labelled with the credential block that
  serves it (``billops.biller.block``) when the ledger knows it — triggers pass that block to
  the job they start;
- related: every entity the payload names (``billops.service.customer.<id>``, role
  ``customer``);
- id: derived from the event's dedup key, so a second emission of the same event (a crash
  between emitting and marking it emitted) carries the same id and Prefect's triggers ignore
  it; a deliberate replay gets a new id per replay.
"""

from __future__ import annotations

import uuid
from typing import Any

from prefect.events import Event

from ledger.webhooks import WebhookEventRecord
from tasks.webhooks.received import entity_ids

EVENT_PREFIX = "billops.service"
BILLER_RESOURCE = "billops.biller"
BLOCK_LABEL = "billops.biller.block"
BILLER_ID_LABEL = "billops.biller.id"
_NAMESPACE = uuid.UUID("6f1d6c1e-3b54-5a2c-9a43-2f0a8f4c1b7e")


def event_name(kind: str, type_: str) -> str:
    """``billops.service.<kind>.<name>``."""
    return f"{EVENT_PREFIX}.{kind}.{type_.strip().lower()}"


def event_uuid(dedup_key: str, replay: int = 0) -> uuid.UUID:
    """The Prefect event id: the same for every emission of one event, new per replay."""
    return uuid.uuid5(_NAMESPACE, dedup_key if replay == 0 else f"{dedup_key}#replay-{replay}")


def prefect_event(record: WebhookEventRecord, block: str | None, replay: int = 0) -> Event:
    """The event to emit for ``record`` (``block``: the biller's credential block, if known)."""
    resource: dict[str, str] = {
        "prefect.resource.id": f"{BILLER_RESOURCE}.{record.biller_id}",
        "prefect.resource.name": block or record.biller_id,
        BILLER_ID_LABEL: record.biller_id,
    }
    if block:
        resource[BLOCK_LABEL] = block
    related = [
        {"prefect.resource.id": f"{EVENT_PREFIX}.{role}.{value}", "prefect.resource.role": role}
        for role, value in sorted(entity_ids(record.kind, record.payload).items())
    ]
    payload: dict[str, Any] = {
        "eventId": record.event_id,
        "type": record.type,
        "kind": record.kind,
        "receivedAt": record.received_at.isoformat(),
        "deliveries": record.deliveries,
        "data": record.payload,
    }
    return Event(
        id=event_uuid(record.dedup_key, replay),
        occurred=record.received_at,
        event=event_name(record.kind, record.type),
        resource=resource,
        related=related,
        payload=payload,
    )
