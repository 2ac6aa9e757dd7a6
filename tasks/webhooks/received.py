"""A verified delivery as the event to store: kind, name, biller, the ids it names, a dedup key.

Payloads are thin and come in two shapes (``docs/service.md`` §11.3 Payloads):
``{type, eventId, billerId, userId, <entity>Id...}`` and ``{eventId, type, sourceEntityId,
billerId, userId}``; some have no ``eventId``. ``billing_api.parse_event`` reads both (taking a
missing ``eventId`` from the ``adfin-webhook-id`` header). An event without any event id is
deduplicated by the SHA-256 of its body, which is the same on every retry (the service sends the
same bytes each attempt).
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping
from typing import Any

from billing_api.webhooks import EVENT_ID_HEADER, WebhookPayloadError, parse_event
from ledger.webhooks import NewWebhookEvent
from tasks.webhooks.verify import DeliveryRefused

MAX_BODY_BYTES = 256 * 1024
# The role of the entity an event is about, by kind (for the new shape's ``sourceEntityId``).
ENTITY_ROLE = {
    "payment": "payment",
    "dd-mandate": "direct-debit-mandate",
    "invoice": "invoice",
    "biller": "biller",
    "customer": "customer",
    "payment-request": "payment-request",
    "payout": "payout",
}
_NOT_ENTITIES = frozenset({"eventId", "billerId", "userId", "sourceEntityId"})
_CAMEL = re.compile(r"(?<!^)(?=[A-Z])")


def read_delivery(body: bytes, headers: Mapping[str, str]) -> NewWebhookEvent:
    """The event a verified delivery carries; :class:`DeliveryRefused` (400) if it has none."""
    if len(body) > MAX_BODY_BYTES:
        raise DeliveryRefused(413, f"body of {len(body)} bytes is over {MAX_BODY_BYTES}")
    try:
        value = json.loads(body)
    except (ValueError, UnicodeDecodeError):
        raise DeliveryRefused(400, "malformed event: the body is not JSON") from None
    except RecursionError:  # "[[[[...": json gives up deep inside; the sender's fault, not ours
        raise DeliveryRefused(400, "malformed event: the body is nested too deeply") from None
    if not isinstance(value, dict):
        raise DeliveryRefused(400, "malformed event: the body is not a JSON object")
    lowered = {name.lower(): text for name, text in headers.items()}
    has_id = bool(value.get("eventId") or lowered.get(EVENT_ID_HEADER))
    body_key = "body:" + hashlib.sha256(body).hexdigest()
    if not has_id:  # parse_event needs an id; the body's hash stands in for it
        lowered[EVENT_ID_HEADER] = body_key
    try:
        event = parse_event(value, lowered)
    except WebhookPayloadError as exc:
        raise DeliveryRefused(400, f"malformed event: {exc}") from None
    payload = event.model_dump(mode="json", by_alias=True, exclude_none=True)
    kind = str(event.kind) if event.kind is not None else "unknown"
    if not has_id:
        payload.pop("eventId", None)
    return NewWebhookEvent(
        dedup_key=f"event:{event.event_id}" if has_id else body_key,
        event_id=event.event_id if has_id else None,
        biller_id=event.biller_id,
        kind=kind,
        type=event.type,
        payload=payload,
    )


def entity_ids(kind: str, payload: Mapping[str, Any]) -> dict[str, str]:
    """Role -> id of every entity a payload names (``customerId`` -> ``customer``)."""
    found: dict[str, str] = {}
    for name, value in payload.items():
        if name in _NOT_ENTITIES or not name.endswith("Id") or not isinstance(value, str):
            continue
        found[_CAMEL.sub("-", name[:-2]).lower()] = value
    source = payload.get("sourceEntityId")
    role = ENTITY_ROLE.get(kind)
    if isinstance(source, str) and role and role not in found:
        found[role] = source
    return found
