"""``client.payments``: payments are read through invoices and webhooks; only import exists."""

from __future__ import annotations

from decimal import Decimal

from billing_api.resources._core import (
    Call,
    SyncResource,
    body,
    model_call,
    money,
    sync_op,
)
from billing_api.types import PaymentImportResponse

__all__ = ["Payments"]


def import_payment(
    *, invoice_id: str, amount: Decimal | int | str, reference: str
) -> Call[PaymentImportResponse]:
    """Record a payment received outside the service against an invoice
    (``POST /payments:import``). NOT idempotent: a timeout raises ``OutcomeUnknown`` and is never
    resent; record an intent first and check the invoice's payments before sending again."""
    if not reference:
        raise ValueError("reference: required (it is how the payment is found again)")
    payload = body(invoice_id=invoice_id, amount=money(amount, "amount"), reference=reference)
    return model_call("payments.import_payment", PaymentImportResponse, json=payload)


class Payments(SyncResource):
    """Payments (blocking)."""

    import_payment = sync_op(import_payment)
