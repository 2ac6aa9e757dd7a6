"""Invoices: checking bodies, creating, and rendering the contract's ``Invoice``.

Totals are computed from the lines (:mod:`sandbox.billing.invoice_lines`); ``dueAmount = total −
paid − credit notes`` (never below 0, and 0 once PAID or SETTLED, which covers :mark-as-paid).
Status rules live in :mod:`sandbox.billing.invoice_actions`. ``document`` keeps the fields not
filtered on: ``instalmentPlanDetails``, ``externalData``, ``voidReason``, ``source``,
``activation`` (how it was sent) and ``collectionOverride`` (what invoice-level pause/resume set,
for requests raised later).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sandbox.billing import collection, instalments
from sandbox.billing.invoice_lines import (
    MAX_TOTAL,
    TAX_TYPES,
    external_data,
    parse_lines,
    public_line,
    totals,
)
from sandbox.billing.payment_requests import embedded_payment_request, resolve_customer
from sandbox.core import ids, state
from sandbox.core.bodies import Fields
from sandbox.core.errors import not_found
from sandbox.core.money import as_string
from sandbox.core.numbering import next_number
from sandbox.core.timefmt import iso
from sandbox.customers.lookup import public_customer
from sandbox.models.billing import Customer, Invoice, PaymentRequest
from sandbox.webhooks import events

STATUSES = ("DRAFT", "UNPAID", "SCHEDULED", "SUBMITTED", "OVERDUE", "PAID", "SETTLED", "VOID")
EDITABLE = frozenset({"DRAFT", "UNPAID", "SCHEDULED", "OVERDUE"})
PAID_STATUSES = frozenset({"PAID", "SETTLED"})
DEFAULT_TERM = timedelta(days=30)
ZERO = Decimal("0.00")


@dataclass
class InvoiceInput:
    """A create or update body, checked, with its lines computed."""

    customer: Customer
    description: str | None
    issue_date: date
    due_date: date
    tax_type: str
    lines: list[dict[str, Any]]
    total: Decimal
    tax: Decimal
    plan: dict[str, Any] | None
    external_data: list[dict[str, Any]]


def get_invoice(session: Session, biller_id: str, invoice_id: str) -> Invoice:
    """The biller's invoice, or 404 (another biller's does not exist for this one)."""
    invoice = None if "\x00" in invoice_id else session.get(Invoice, invoice_id)
    if invoice is None or invoice.biller_id != biller_id:
        raise not_found("invoice")
    return invoice


def _dates(fields: Fields, today: date, current: Invoice | None) -> tuple[date, date]:
    issue = fields.date("issueDate") or (current.issue_date if current else today)
    due = fields.date("dueDate") or (current.due_date if current else None)
    if due is None:
        try:
            due = issue + DEFAULT_TERM
        except OverflowError:
            fields.fail("issueDate", "is too late for the default 30-day term")
    if due < issue:
        fields.fail("dueDate", "must not be before issueDate")
    return issue, due


def parse_plan(fields: Fields, amount: Decimal) -> dict[str, Any] | None:
    """``instalmentPlanDetails``: null, or a cadence that splits ``amount`` into a usable plan."""
    details = fields.obj("instalmentPlanDetails")
    if details is None:
        return None
    cadence_fields = details.obj("cadence")
    if cadence_fields is None:
        return None
    cadence = instalments.parse_cadence(cadence_fields)
    try:
        instalments.plan(amount, cadence)
    except instalments.PlanError as exc:
        details.fail("cadence", exc.detail)
    return {"cadence": cadence}


def parse_invoice(
    session: Session, biller_id: str, body: dict[str, Any], today: date, current: Invoice | None
) -> InvoiceInput:
    """A create body (``current`` None) or the full-object update of ``current``; 422 naming
    the first broken rule. On update, absent dates, tax type and customer keep their values."""
    fields = Fields(body)
    ref = fields.obj("customer", required=current is None)
    if ref is not None:
        customer = resolve_customer(session, biller_id, ref)
    else:
        assert current is not None
        found = session.get(Customer, current.customer_id)
        assert found is not None
        customer = found
    if fields.has("currencyCode") and fields.data["currencyCode"] != "GBP":
        fields.fail("currencyCode", "only GBP is accepted")
    issue, due = _dates(fields, today, current)
    tax_type = fields.choice("itemsTaxType", TAX_TYPES) or (
        current.items_tax_type if current else "EXCLUSIVE"
    )
    lines = parse_lines(session, biller_id, fields, tax_type)
    total, tax = totals(lines)
    if total < 0 or total > MAX_TOTAL:
        fields.fail("items", f"the invoice total must be between 0 and {MAX_TOTAL}")
    amount = fields.money("amount", positive=False)
    if amount is not None and amount != total:
        fields.fail("amount", f"differs from the total computed from the lines ({total})")
    return InvoiceInput(
        customer=customer,
        description=fields.text("description", max_length=4000),
        issue_date=issue,
        due_date=due,
        tax_type=tax_type,
        lines=lines,
        total=total,
        tax=tax,
        plan=parse_plan(fields, total),
        external_data=external_data(fields),
    )


def find_by_number(session: Session, biller_id: str, invoice_no: str) -> Invoice | None:
    return session.scalars(
        select(Invoice).where(Invoice.biller_id == biller_id, Invoice.invoice_no == invoice_no)
    ).first()


def _generated_number(session: Session, biller_id: str) -> str:
    """``INV-n``, skipping numbers a client already used as its own invoiceNo."""
    while True:
        number = next_number(session, biller_id, "invoice")
        if find_by_number(session, biller_id, number) is None:
            return number


def apply_input(invoice: Invoice, data: InvoiceInput, now: datetime) -> None:
    """Write the checked body's fields onto the invoice."""
    invoice.customer_id = data.customer.id
    invoice.description = data.description
    invoice.issue_date = data.issue_date
    invoice.due_date = data.due_date
    invoice.items_tax_type = data.tax_type
    invoice.items = data.lines
    invoice.total_amount = data.total
    invoice.tax_amount = data.tax
    invoice.document = {
        **(invoice.document or {}),
        "instalmentPlanDetails": data.plan,
        "externalData": data.external_data,
    }
    invoice.updated_at = now


def create_invoice(session: Session, biller_id: str, body: dict[str, Any]) -> tuple[Invoice, bool]:
    """``(invoice, created)``: a new DRAFT, or the existing invoice with the same ``invoiceNo``
    (the body is then not compared, and nothing is created)."""
    fields = Fields(body)
    invoice_no = fields.text("invoiceNo", max_length=255, blank=False)
    if invoice_no is not None and (found := find_by_number(session, biller_id, invoice_no)):
        return found, False
    now = state.now(session)
    data = parse_invoice(session, biller_id, body, now.date(), None)
    invoice = Invoice(
        id=ids.new_uuid(),
        biller_id=biller_id,
        invoice_no=invoice_no or _generated_number(session, biller_id),
        status="DRAFT",
        status_reason_code="PENDING_ACTIVATION",
        currency_code="GBP",
        paid_amount=ZERO,
        credit_notes_amount=ZERO,
        document={"source": "API", "collectionOverride": {}},
        created_at=now,
    )
    apply_input(invoice, data, now)
    try:
        # A savepoint: a concurrent create with the same invoiceNo wins, and this one answers it.
        with session.begin_nested():
            session.add(invoice)
    except IntegrityError:
        found = find_by_number(session, biller_id, invoice.invoice_no)
        if found is None:
            raise
        return found, False
    events.invoice_event(session, invoice, "INVOICE_CREATED")
    return invoice, True


def due_amount(invoice: Invoice) -> Decimal:
    if invoice.status in PAID_STATUSES:
        return ZERO
    left = invoice.total_amount - invoice.paid_amount - invoice.credit_notes_amount
    return max(left, ZERO)


def payment_requests_of(session: Session, invoice: Invoice) -> list[PaymentRequest]:
    """The invoice's payment requests, earliest pay-by date first."""
    return list(
        session.scalars(
            select(PaymentRequest)
            .where(PaymentRequest.invoice_id == invoice.id)
            .order_by(PaymentRequest.pay_by_date, PaymentRequest.created_at, PaymentRequest.id)
        )
    )


def public_invoice(
    session: Session, invoice: Invoice, root: str, today: date | None = None
) -> dict[str, Any]:
    """The contract's ``Invoice``: aggregates as strings, lines and requests embedded."""
    today = today or state.now(session).date()
    customer = session.get(Customer, invoice.customer_id)
    assert customer is not None
    requests = payment_requests_of(session, invoice)
    document = invoice.document or {}
    return {
        "id": invoice.id,
        "invoiceNo": invoice.invoice_no,
        "description": invoice.description,
        "currencyCode": invoice.currency_code,
        "totalAmount": as_string(invoice.total_amount),
        "taxAmount": as_string(invoice.tax_amount),
        "dueAmount": as_string(due_amount(invoice)),
        "creditNotesAmount": as_string(invoice.credit_notes_amount),
        "paidAmount": as_string(invoice.paid_amount),
        "issueDate": invoice.issue_date.isoformat(),
        "dueDate": invoice.due_date.isoformat(),
        "status": invoice.status,
        "statusReasonCode": invoice.status_reason_code,
        "source": document.get("source", "API"),
        "itemsTaxType": invoice.items_tax_type,
        "customer": public_customer(session, customer, root),
        "items": [public_line(line) for line in invoice.items],
        "paymentRequests": [embedded_payment_request(session, pr, root, today) for pr in requests],
        "creditNotes": [],
        "externalData": document.get("externalData") or [],
        "creditControlStatus": document.get("creditControlStatus"),
        "instalmentPlanDetails": document.get("instalmentPlanDetails"),
        "collection": collection.invoice_collection_state(session, invoice, requests, today),
        "voidReason": document.get("voidReason"),
        "creationTime": iso(invoice.created_at),
        "lastUpdatedTime": iso(invoice.updated_at),
    }
