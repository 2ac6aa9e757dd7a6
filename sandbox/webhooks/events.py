"""Webhook events: :func:`emit` writes one into the outbox, inside the caller's transaction.

The event is a row of the same transaction as the state change that causes it, so it exists
exactly when that change committed: a request that fails (and rolls back) emits nothing. The
delivery worker (:mod:`sandbox.webhooks.delivery`) sends it afterwards.

Who emits what (the contract's ``x-emitted-by`` catalogue, for the changes the API makes):

- ``customer``: CUSTOMER_CREATED / CUSTOMER_UPDATED in :mod:`sandbox.customers.records`.
- ``biller``: BILLER_UPDATED in ``PATCH /biller`` (:mod:`sandbox.routes.biller`).
- ``invoice``: INVOICE_CREATED (:func:`sandbox.billing.invoices.create_invoice`); ACTIVATED, VOIDED,
  PAID, UPDATED (:mod:`sandbox.billing.invoice_actions`; PAID from ``settle_if_paid`` and
  ``mark_invoice_paid``, so imports and edits that pay the invoice emit it too);
  COLLECTION_PAUSED / RESUMED (``:pause_collection`` / ``:resume_collection`` routes).
- ``payment-request``: CREATED (:func:`sandbox.billing.payment_requests.new_payment_request`, every
  path that creates one), ACTIVATED (``send``), VOIDED (``void``, and an invoice's void), PAID
  (``mark_paid``), UPDATED (:mod:`sandbox.billing.payment_request_actions`), COLLECTION_PAUSED /
  RESUMED (:mod:`sandbox.billing.collection`).
- ``dd-mandate``: INITIATED / CANCELLED / REINSTATED (:mod:`sandbox.customers.mandates`); the admin
  endpoint that forces a state emits the event of the state it forces.
- ``payment``: PAYMENT_IMPORTED (:mod:`sandbox.billing.payments`).

Code that moves state by other means (the clock simulation) calls :func:`emit` itself; it must
not emit again what the functions above already emit.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from functools import lru_cache
from typing import Any

from sqlalchemy.orm import Session, object_session

from sandbox.core import ids as id_source
from sandbox.core import state
from sandbox.core.contract import load_contract
from sandbox.core.timefmt import iso
from sandbox.models.billing import Invoice, Mandate, Payment, PaymentRequest
from sandbox.models.webhooks import WebhookEvent
from sandbox.webhooks.settings import EVENT_KINDS

# The contract's schema holding the event names of each kind.
_TYPE_SCHEMAS = {
    "payment": "PaymentEventType",
    "dd-mandate": "DdMandateEventType",
    "invoice": "InvoiceEventType",
    "biller": "BillerEventType",
    "customer": "CustomerEventType",
    "payment-request": "PaymentRequestEventType",
    "payout": "PayoutEventType",
}
# The payload field naming each kind's main entity (also sent as ``sourceEntityId``).
ENTITY_FIELDS = {
    "payment": "paymentId",
    "dd-mandate": "directDebitMandateId",
    "invoice": "invoiceId",
    "biller": "billerId",
    "customer": "customerId",
    "payment-request": "paymentRequestId",
    "payout": "payoutId",
}


@lru_cache(maxsize=1)
def event_types() -> dict[str, frozenset[str]]:
    """The event names of each kind, as the contract lists them."""
    schemas = load_contract()["components"]["schemas"]
    return {kind: frozenset(schemas[name]["enum"]) for kind, name in _TYPE_SCHEMAS.items()}


def emit(
    session: Session,
    *,
    biller_id: str,
    kind: str,
    type: str,  # noqa: A002 - the contract's name for the event name
    ids: Mapping[str, str | None],
    extra: dict[str, Any] | None = None,
) -> None:
    """Record event ``type`` of ``kind`` for ``biller_id``, with the payload's entity ``ids``
    (``None`` values are left out). ``extra`` adds payload fields beyond ids (a payout's whole
    ``payout``). A kind or name the contract does not list is a programming error."""
    if kind not in EVENT_KINDS:
        raise ValueError(f"unknown webhook event kind {kind!r}")
    if type not in event_types()[kind]:
        raise ValueError(f"{type!r} is not an event name of kind {kind!r}")
    entity = ENTITY_FIELDS[kind]
    if kind != "biller" and not ids.get(entity):
        raise ValueError(f"an event of kind {kind!r} needs {entity}")
    session.add(
        WebhookEvent(
            id=id_source.new_uuid(),
            biller_id=biller_id,
            kind=kind,
            type=type,
            ids={key: value for key, value in ids.items() if value is not None},
            extra=extra,
            occurred_at=state.now(session),
            emitted_at=datetime.now(UTC),
            fanned_out=False,
        )
    )


def session_of(row: object) -> Session:
    """The session a loaded row belongs to (for status helpers that take no session)."""
    session = object_session(row)
    if session is None:
        raise RuntimeError("the row is not attached to a session: cannot emit its event")
    return session


def payload(event: WebhookEvent) -> dict[str, Any]:
    """The thin JSON payload of ``event`` (contract ``WebhookEventBase`` and the kind's ids)."""
    ids = dict(event.ids or {})
    source = event.biller_id if event.kind == "biller" else ids.get(ENTITY_FIELDS[event.kind])
    body: dict[str, Any] = {
        "type": event.type,
        "eventId": event.id,
        "billerId": event.biller_id,
        "userId": None,
        **ids,
        "sourceEntityId": source,
        "occurredTime": iso(event.occurred_at),
    }
    body.update(event.extra or {})
    return body


# --- one call per state change: the ids of each kind's payload, from the row ----------------------


def invoice_event(session: Session, invoice: Invoice, name: str) -> None:
    ids = {"invoiceId": invoice.id, "customerId": invoice.customer_id}
    emit(session, biller_id=invoice.biller_id, kind="invoice", type=name, ids=ids)


def payment_request_event(session: Session, pr: PaymentRequest, name: str) -> None:
    ids = {"paymentRequestId": pr.id, "invoiceId": pr.invoice_id, "customerId": pr.customer_id}
    emit(session, biller_id=pr.biller_id, kind="payment-request", type=name, ids=ids)


def mandate_event(session: Session, mandate: Mandate, name: str) -> None:
    ids = {"customerId": mandate.customer_id, "directDebitMandateId": mandate.id}
    emit(session, biller_id=mandate.biller_id, kind="dd-mandate", type=name, ids=ids)


def payment_event(session: Session, payment: Payment, name: str) -> None:
    ids = {
        "paymentId": payment.id,
        "paymentRequestId": payment.payment_request_id,
        "invoiceId": payment.invoice_id,
    }
    emit(session, biller_id=payment.biller_id, kind="payment", type=name, ids=ids)
