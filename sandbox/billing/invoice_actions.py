"""Invoice status changes and the payment requests that follow them.

Contract ``InvoiceStatus``: ``:activate`` DRAFT → UNPAID, or SCHEDULED with DIRECT_DEBIT_PAYMENT,
raising one ONE_TO_ONE payment request for the due amount, or one PARTIAL request per instalment
when the invoice has an instalment plan; ``:void`` from DRAFT/UNPAID/SCHEDULED/OVERDUE (its
unpaid requests are voided too); ``:mark-as-paid`` from UNPAID/SCHEDULED/OVERDUE; an edit of an
activated invoice re-spreads what is still due over its open requests (or raises new ones when
the plan changed). Every 400 for a forbidden transition is INVALID_STATE.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from sandbox.billing import instalments
from sandbox.billing.invoice_lines import number
from sandbox.billing.invoices import (
    EDITABLE,
    PAID_STATUSES,
    ZERO,
    apply_input,
    due_amount,
    parse_invoice,
    payment_requests_of,
)
from sandbox.billing.payment_requests import (
    ACTIVATION_METHODS,
    activated_status,
    invalid_state,
    mark_paid,
    new_payment_request,
    parse_activation,
)
from sandbox.billing.payment_requests import EDITABLE as REQUEST_OPEN
from sandbox.billing.payment_requests import due_amount as request_due
from sandbox.core import state
from sandbox.core.bodies import Fields
from sandbox.core.errors import INVALID_STATE, VALIDATION_ERROR, ApiError
from sandbox.core.money import as_string
from sandbox.models.billing import Invoice, PaymentRequest
from sandbox.webhooks import events

FINISHED = frozenset({"SUBMITTED", "PAID", "SETTLED", "VOID"})


def _left(invoice: Invoice) -> Decimal:
    return invoice.total_amount - invoice.paid_amount - invoice.credit_notes_amount


def _distribution(invoice: Invoice) -> dict[str, Any]:
    sent = (invoice.document or {}).get("activation") or {}
    method = sent.get("collectionMethod", "NONE")
    return {
        "collectionMethod": ACTIVATION_METHODS.get(method, "NONE"),
        "customMessage": sent.get("customMessage"),
        "templateId": sent.get("templateId"),
        "approvedForSending": True,
    }


def _parts(invoice: Invoice, amount: Decimal, single: bool) -> list[tuple[Any, Decimal, str]]:
    """``(payBy, amount, description)`` per request: one, or one per instalment of the plan."""
    label = invoice.description or f"Invoice {invoice.invoice_no}"
    cadence = ((invoice.document or {}).get("instalmentPlanDetails") or {}).get("cadence")
    if single or not cadence:
        return [(invoice.due_date, amount, label)]
    try:
        plan = instalments.plan(amount, cadence)
    except instalments.PlanError as exc:
        raise ApiError(422, VALIDATION_ERROR, exc.detail, field="instalmentPlanDetails") from exc
    count = len(plan)
    return [
        (part.due_date, part.amount, f"{label}, instalment {part.sequence} of {count}")
        for part in plan
    ]


def raise_payment_requests(
    session: Session, invoice: Invoice, amount: Decimal, now: datetime, *, single: bool = False
) -> list[PaymentRequest]:
    """The invoice's payment requests for ``amount``, sent the way the invoice was activated."""
    parts = _parts(invoice, amount, single)
    existing = bool(payment_requests_of(session, invoice))
    association = "PARTIAL" if len(parts) > 1 or existing else "ONE_TO_ONE"
    status = "SCHEDULED" if invoice.status == "SCHEDULED" else "UNPAID"
    override = (invoice.document or {}).get("collectionOverride") or {}
    created = []
    for offset, (pay_by, part_amount, description) in enumerate(parts):
        created.append(
            new_payment_request(
                session,
                customer_id=invoice.customer_id,
                biller_id=invoice.biller_id,
                description=description[:4000],
                total=part_amount,
                # Distinct creation times keep the default list order (creationTime) stable.
                now=now + timedelta(microseconds=offset),
                invoice_id=invoice.id,
                association=association,
                pay_by=pay_by,
                distribution=_distribution(invoice),
                status=status,
                distribution_time=now,
                reference=invoice.invoice_no[:255],
                collection_override=dict(override),
                document={"source": "INVOICE"},
            )
        )
    session.flush()
    return created


def activate(session: Session, invoice: Invoice, body: dict[str, Any]) -> None:
    """Send a DRAFT invoice and raise its payment requests; nothing due means PAID at once.
    The status is checked before the body: a sent invoice answers INVALID_STATE whatever it says."""
    if invoice.status != "DRAFT":
        raise invalid_state(f"invoice in status {invoice.status} cannot be activated")
    activation = parse_activation(session, invoice.biller_id, body)
    status = activated_status(session, invoice.customer_id, activation.collection_method)
    now = state.now(session)
    invoice.document = {
        **(invoice.document or {}),
        "activation": {
            "collectionMethod": activation.collection_method,
            "customMessage": activation.custom_message,
            "templateId": activation.template_id,
            "activationTime": now.isoformat(),
        },
    }
    invoice.status_reason_code = None
    invoice.updated_at = now
    events.invoice_event(session, invoice, "INVOICE_ACTIVATED")
    if _left(invoice) <= 0:
        invoice.status = "PAID"
        events.invoice_event(session, invoice, "INVOICE_PAID")
        return
    invoice.status = status
    raise_payment_requests(session, invoice, _left(invoice), now)


def void_invoice(session: Session, invoice: Invoice, reason: str | None) -> None:
    if invoice.status == "VOID":
        return
    if invoice.status not in EDITABLE:
        raise invalid_state(f"invoice in status {invoice.status} cannot be voided")
    now = state.now(session)
    for pr in payment_requests_of(session, invoice):
        if pr.status in REQUEST_OPEN:
            pr.status = "VOID"
            pr.updated_at = now
            events.payment_request_event(session, pr, "PAYMENT_REQUEST_VOIDED")
    invoice.status = "VOID"
    events.invoice_event(session, invoice, "INVOICE_VOIDED")
    invoice.status_reason_code = None
    invoice.document = {**(invoice.document or {}), "voidReason": reason}
    invoice.updated_at = now


def settle_if_paid(session: Session, invoice: Invoice, now: datetime) -> None:
    """PAID once nothing is due; its open payment requests are then paid too."""
    if invoice.status in PAID_STATUSES or invoice.status in ("DRAFT", "VOID"):
        return
    if _left(invoice) > 0:
        return
    for pr in payment_requests_of(session, invoice):
        if pr.status in REQUEST_OPEN:
            mark_paid(pr, now)
    invoice.status = "PAID"
    invoice.updated_at = now
    events.invoice_event(session, invoice, "INVOICE_PAID")


def mark_invoice_paid(session: Session, invoice: Invoice) -> None:
    if invoice.status in PAID_STATUSES:
        return
    if invoice.status not in ("UNPAID", "SCHEDULED", "OVERDUE"):
        raise invalid_state(f"invoice in status {invoice.status} cannot be marked as paid")
    now = state.now(session)
    for pr in payment_requests_of(session, invoice):
        if pr.status in REQUEST_OPEN:
            mark_paid(pr, now)
    invoice.status = "PAID"
    events.invoice_event(session, invoice, "INVOICE_PAID")
    invoice.document = {**(invoice.document or {}), "markedAsPaid": True}
    invoice.updated_at = now


def update_invoice(session: Session, invoice: Invoice, body: dict[str, Any]) -> None:
    """The full-object edit; an activated invoice's payment requests follow the new amounts."""
    if invoice.status not in EDITABLE:
        raise invalid_state(f"invoice in status {invoice.status} cannot be edited")
    fields = Fields(body)
    if fields.has("invoiceNo") and body["invoiceNo"] != invoice.invoice_no:
        fields.fail("invoiceNo", "cannot change")
    now = state.now(session)
    data = parse_invoice(session, invoice.biller_id, body, now.date(), invoice)
    if data.customer.id != invoice.customer_id and invoice.status != "DRAFT":
        raise ApiError(
            400, INVALID_STATE, "the customer can change only in DRAFT", field="customer"
        )
    if data.total < invoice.paid_amount + invoice.credit_notes_amount:
        fields.fail("items", "the new total is below what has already been paid")
    plan_changed = data.plan != (invoice.document or {}).get("instalmentPlanDetails")
    requests = payment_requests_of(session, invoice)
    has_payments = invoice.paid_amount > 0 or any(
        pr.status in FINISHED - {"VOID"} for pr in requests
    )
    if plan_changed and invoice.status != "DRAFT" and has_payments:
        raise invalid_state("an invoice with payments cannot change its instalment plan")
    apply_input(invoice, data, now)
    events.invoice_event(session, invoice, "INVOICE_UPDATED")
    if invoice.status == "DRAFT":
        return
    if plan_changed:
        for pr in requests:
            if pr.status in REQUEST_OPEN:
                pr.status = "VOID"
                pr.updated_at = now
        raise_payment_requests(session, invoice, _left(invoice), now)
    else:
        _respread(session, invoice, requests, now)
    if invoice.status == "OVERDUE" and invoice.due_date >= now.date():
        invoice.status = "UNPAID"
    settle_if_paid(session, invoice, now)


def _respread(
    session: Session, invoice: Invoice, requests: list[PaymentRequest], now: datetime
) -> None:
    """Spread what is still due (less what submitted debits cover) over the open requests."""
    open_requests = [pr for pr in requests if pr.status in REQUEST_OPEN]
    in_flight = sum((request_due(pr) for pr in requests if pr.status == "SUBMITTED"), ZERO)
    spread = _left(invoice) - in_flight
    if spread < 0:
        raise ApiError(
            422, VALIDATION_ERROR, "the new total is below what is being collected", field="items"
        )
    if not open_requests:
        if spread > 0:
            raise_payment_requests(session, invoice, spread, now, single=True)
        return
    for pr, share in zip(open_requests, instalments.split(spread, len(open_requests)), strict=True):
        pr.total_amount = pr.paid_amount + share
        if share == 0 and pr.paid_amount > 0:
            mark_paid(pr, now)
        elif share == 0:
            pr.status = "VOID"
        if pr.association_type == "ONE_TO_ONE":
            pr.pay_by_date = invoice.due_date
        pr.updated_at = now


def preview(invoice: Invoice, body: dict[str, Any]) -> dict[str, Any]:
    """The instalments a cadence would make of the due amount (nothing is stored)."""
    if invoice.status in FINISHED or invoice.paid_amount > 0:
        raise invalid_state(
            f"invoice in status {invoice.status} with payments of {invoice.paid_amount} "
            "cannot be converted to instalments"
        )
    fields = Fields(body)
    cadence_fields = fields.obj("cadence", required=True)
    assert cadence_fields is not None
    cadence = instalments.parse_cadence(cadence_fields)
    amount = due_amount(invoice)
    try:
        plan = instalments.plan(amount, cadence)
    except instalments.PlanError as exc:
        fields.fail("cadence", exc.detail)
    return {
        "invoiceId": invoice.id,
        "amount": as_string(amount),
        "currencyCode": invoice.currency_code,
        "instalments": [
            {"sequence": i.sequence, "dueDate": i.due_date.isoformat(), "amount": number(i.amount)}
            for i in plan
        ],
    }
