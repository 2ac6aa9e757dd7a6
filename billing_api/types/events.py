"""Webhook event payloads (contract convention 14, docs/service.md §11.3 Payloads).

Payloads are thin (ids only) and come in two shapes: the documented one names the entity
(``{type, eventId, billerId, userId, invoiceId}``), a newer one sends ``sourceEntityId`` instead,
and some real examples omit ``eventId``. Each model accepts both: the named id and
``source_entity_id`` are filled from each other, and :func:`billing_api.webhooks.parse_event`
falls back to the ``adfin-webhook-id`` header for a missing ``eventId``.
"""

from __future__ import annotations

from typing import Any, ClassVar

from pydantic import model_validator

from billing_api.types._base import ApiModel, Timestamp
from billing_api.types.billing import Payout
from billing_api.types.enums import WebhookEventKind

__all__ = [
    "BillerEvent",
    "CustomerEvent",
    "DdMandateEvent",
    "InvoiceEvent",
    "PaymentEvent",
    "PaymentRequestEvent",
    "PayoutEvent",
    "UnknownEvent",
    "WebhookEvent",
]


class WebhookEvent(ApiModel):
    """Fields of every event. ``entity_id`` is the main entity's id in either payload shape."""

    kind: ClassVar[WebhookEventKind | None] = None
    # The contract's name of the main entity's id in the documented shape.
    entity_field: ClassVar[str | None] = None

    type: str
    event_id: str
    biller_id: str
    user_id: str | None = None
    source_entity_id: str | None = None
    occurred_time: Timestamp | None = None

    @model_validator(mode="before")
    @classmethod
    def _fill_entity_ids(cls, data: Any) -> Any:
        name = cls.entity_field
        if not isinstance(data, dict) or name is None:
            return data
        filled = dict(data)
        if filled.get(name) is None and filled.get("sourceEntityId") is not None:
            filled[name] = filled["sourceEntityId"]
        if filled.get("sourceEntityId") is None and filled.get(name) is not None:
            filled["sourceEntityId"] = filled[name]
        return filled

    @property
    def entity_id(self) -> str | None:
        """The id of the resource to re-fetch (payloads never carry its state)."""
        return self.source_entity_id


class PaymentEvent(WebhookEvent):
    """A payment changed (``payment`` kind)."""

    kind = WebhookEventKind.PAYMENT
    entity_field = "paymentId"

    payment_id: str
    payment_request_id: str | None = None
    invoice_id: str | None = None


class DdMandateEvent(WebhookEvent):
    """A direct-debit mandate changed (``dd-mandate`` kind)."""

    kind = WebhookEventKind.DD_MANDATE
    entity_field = "directDebitMandateId"

    direct_debit_mandate_id: str
    customer_id: str | None = None


class InvoiceEvent(WebhookEvent):
    """An invoice changed (``invoice`` kind)."""

    kind = WebhookEventKind.INVOICE
    entity_field = "invoiceId"

    invoice_id: str
    customer_id: str | None = None


class BillerEvent(WebhookEvent):
    """The biller changed (``biller`` kind; the entity is the biller itself)."""

    kind = WebhookEventKind.BILLER
    entity_field = "billerId"


class CustomerEvent(WebhookEvent):
    """A customer changed (``customer`` kind)."""

    kind = WebhookEventKind.CUSTOMER
    entity_field = "customerId"

    customer_id: str
    merged_into_customer_id: str | None = None


class PaymentRequestEvent(WebhookEvent):
    """A payment request changed (``payment-request`` kind)."""

    kind = WebhookEventKind.PAYMENT_REQUEST
    entity_field = "paymentRequestId"

    payment_request_id: str
    invoice_id: str | None = None
    customer_id: str | None = None


class PayoutEvent(WebhookEvent):
    """A payout changed (``payout`` kind; carries the whole payout, nothing can be re-fetched)."""

    kind = WebhookEventKind.PAYOUT
    entity_field = "payoutId"

    payout_id: str
    payout: Payout | None = None


class UnknownEvent(WebhookEvent):
    """An event of a kind this client does not know (kept whole in the model's extras)."""
