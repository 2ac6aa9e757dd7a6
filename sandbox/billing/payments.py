"""``POST /payments:import``: a payment made outside the service, recorded against an invoice.

The amount is allocated to the invoice's open payment requests, earliest pay-by date first; one
``IMPORTED`` payment (status ``SUCCESS``) is recorded per request it reaches, and one without a
request for any rest (an invoice whose requests were voided), so ``{payments: [...]}`` sums to
the amount imported. The invoice's ``paidAmount`` moves and it becomes PAID when nothing is due.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from sandbox.billing.invoice_actions import settle_if_paid
from sandbox.billing.invoice_lines import number
from sandbox.billing.invoices import due_amount, payment_requests_of
from sandbox.billing.payment_requests import EDITABLE, invalid_state, mark_paid
from sandbox.billing.payment_requests import due_amount as request_due
from sandbox.core import ids, state
from sandbox.core.bodies import Fields
from sandbox.core.timefmt import iso
from sandbox.models.billing import Invoice, Payment, PaymentRequest
from sandbox.webhooks import events


def public_payment(payment: Payment) -> dict[str, Any]:
    """The contract's ``Payment``."""
    document = payment.document or {}
    return {
        "id": payment.id,
        "paymentRequestId": payment.payment_request_id,
        "invoiceId": payment.invoice_id,
        "amount": number(payment.amount),
        "currencyCode": payment.currency_code,
        "status": payment.status,
        "paymentMethod": payment.payment_method,
        "reference": payment.reference,
        "failureReason": document.get("failureReason"),
        "channelPaymentId": document.get("channelPaymentId"),
        "channelPaymentUrl": document.get("channelPaymentUrl"),
        "channelReferenceId": document.get("channelReferenceId"),
        "externalData": document.get("externalData") or [],
        "paymentTime": iso(payment.payment_time),
        "creationTime": iso(payment.created_at),
        "lastUpdatedTime": iso(payment.updated_at),
    }


def _allocation(
    session: Session, invoice: Invoice, amount: Decimal
) -> list[tuple[PaymentRequest | None, Decimal]]:
    """How ``amount`` spreads over the open requests, earliest pay-by date first (no date last)."""
    requests = [pr for pr in payment_requests_of(session, invoice) if pr.status in EDITABLE]
    requests.sort(key=lambda pr: (pr.pay_by_date is None, pr.pay_by_date, pr.created_at))
    parts: list[tuple[PaymentRequest | None, Decimal]] = []
    left = amount
    for pr in requests:
        take = min(left, request_due(pr))
        if take > 0:
            parts.append((pr, take))
            left -= take
    if left > 0:
        parts.append((None, left))
    return parts


def _record(
    session: Session, invoice: Invoice, pr: PaymentRequest | None, amount: Decimal, **how: Any
) -> Payment:
    now: datetime = how.pop("now")
    payment = Payment(
        id=ids.new_uuid(),
        biller_id=invoice.biller_id,
        invoice_id=invoice.id,
        payment_request_id=pr.id if pr else None,
        amount=amount,
        currency_code=invoice.currency_code,
        document={},
        payment_time=now,
        created_at=now,
        updated_at=now,
        **how,
    )
    session.add(payment)
    events.payment_event(session, payment, "PAYMENT_IMPORTED")
    if pr is not None:
        pr.paid_amount += amount
        pr.updated_at = now
        if request_due(pr) == 0:
            mark_paid(pr, now)
    return payment


def import_payment(session: Session, biller_id: str, body: dict[str, Any]) -> list[Payment]:
    """Check the body (422 naming the field; 400 INVALID_STATE for a DRAFT or VOID invoice),
    then record the payment(s) and move the invoice."""
    fields = Fields(body)
    invoice_id = fields.text("invoiceId", required=True, max_length=255)
    amount = fields.money("amount", required=True)
    reference = fields.text("reference", required=True, max_length=255, blank=False)
    assert invoice_id is not None and amount is not None
    invoice = session.get(Invoice, invoice_id)
    if invoice is None or invoice.biller_id != biller_id:
        fields.fail("invoiceId", "no invoice of the biller has this id")
    if invoice.status in ("DRAFT", "VOID"):
        raise invalid_state(f"a payment cannot be imported against a {invoice.status} invoice")
    due = due_amount(invoice)
    if amount > due:
        fields.fail("amount", f"exceeds the invoice's due amount ({due})")
    now = state.now(session)
    payments = [
        _record(
            session,
            invoice,
            pr,
            part,
            now=now,
            status="SUCCESS",
            payment_method="IMPORTED",
            reference=reference,
        )
        for pr, part in _allocation(session, invoice, amount)
    ]
    invoice.paid_amount += amount
    invoice.updated_at = now
    settle_if_paid(session, invoice, now)
    return payments
