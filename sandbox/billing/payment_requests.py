"""Payment requests: rendering, creation and the status rules every path shares.

:func:`public_payment_request` is the one rendering of the contract's ``PaymentRequest`` (routes,
bulk import and the simulation all use it); :func:`new_payment_request` the one way to create a
row. Statuses (contract ``PaymentRequestStatus``): DRAFT → UNPAID or SCHEDULED → SUBMITTED → PAID →
SETTLED, VOID from DRAFT/UNPAID/SCHEDULED. Every 400 for a forbidden transition is INVALID_STATE.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.billing import collection
from sandbox.billing.invoice_lines import number
from sandbox.core import ids, state
from sandbox.core.bodies import Fields
from sandbox.core.errors import INVALID_STATE, VALIDATION_ERROR, ApiError, not_found
from sandbox.core.money import round_penny
from sandbox.core.numbering import next_number
from sandbox.core.timefmt import iso
from sandbox.customers.lookup import direct_debit_available
from sandbox.models.billing import Customer, PaymentRequest
from sandbox.models.customers import Workflow
from sandbox.webhooks import events

STATUSES = ("DRAFT", "UNPAID", "SCHEDULED", "SUBMITTED", "PAID", "SETTLED", "VOID")
LEGACY_STATUSES = {"REQUESTED": "UNPAID", "CANCELLED": "VOID"}
ASSOCIATION_TYPES = ("SINGLE", "ONE_TO_ONE", "PARTIAL", "BATCH")
DISTRIBUTION_METHODS = ("AUTO_COLLECT", "ON_DEMAND", "NONE")
ACTIVATION_METHODS = {
    "DIRECT_DEBIT_PAYMENT": "AUTO_COLLECT",
    "ONE_TIME_PAYMENT": "ON_DEMAND",
    "NONE": "NONE",
}
EDITABLE = frozenset({"DRAFT", "UNPAID", "SCHEDULED"})
PAID_STATUSES = frozenset({"PAID", "SETTLED"})
# RFC 9745 date of the :cancel deprecation (2025-11-11, the REQUESTED/CANCELLED rename).
CANCEL_DEPRECATED = "@1762819200"


def invalid_state(detail: str) -> ApiError:
    return ApiError(400, INVALID_STATE, detail)


def get_payment_request(session: Session, biller_id: str, pr_id: str) -> PaymentRequest:
    """The biller's payment request, or 404 (another biller's does not exist for this one)."""
    pr = None if "\x00" in pr_id else session.get(PaymentRequest, pr_id)
    if pr is None or pr.biller_id != biller_id:
        raise not_found("payment request")
    return pr


def resolve_customer(session: Session, biller_id: str, ref: Fields) -> Customer:
    """A ``CustomerRef`` (``id``, else ``externalId``): the customer, or 422 naming the field."""
    customer_id = ref.text("id", max_length=255)
    if customer_id is not None:
        customer = session.get(Customer, customer_id)
        if customer is None or customer.biller_id != biller_id:
            ref.fail("id", "no customer of the biller has this id")
        return customer
    external_id = ref.text("externalId", max_length=255)
    if external_id is None:
        ref.fail("id", "name the customer by id or externalId")
    found = session.scalars(
        select(Customer).where(Customer.biller_id == biller_id, Customer.external_id == external_id)
    ).first()
    if found is None:
        ref.fail("externalId", "no customer of the biller has this externalId")
    return found


def tax_amount(pr: PaymentRequest) -> Decimal:
    """``round_half_up(total × rate / (100 + rate))``; 0 without a rate."""
    if not pr.tax_rate:
        return Decimal("0.00")
    return round_penny(pr.total_amount * pr.tax_rate / (100 + pr.tax_rate))


def due_amount(pr: PaymentRequest) -> Decimal:
    """What is still to collect: nothing once paid (also when marked paid), else total − paid."""
    if pr.status in PAID_STATUSES:
        return Decimal("0.00")
    return max(pr.total_amount - pr.paid_amount, Decimal("0.00"))


def payment_link(root: str, pr: PaymentRequest) -> dict[str, str]:
    """The hosted payment page (the simulation serves ``/pay/<id>``)."""
    return {"url": f"{root}/pay/{pr.id}"}


def _distribution(pr: PaymentRequest) -> dict[str, Any]:
    stored = pr.distribution or {}
    shown: dict[str, Any] = {
        "customMessage": stored.get("customMessage"),
        "templateId": stored.get("templateId"),
        "approvedForSending": bool(stored.get("approvedForSending", False)),
    }
    if stored.get("collectionMethod"):
        shown["collectionMethod"] = stored["collectionMethod"]
    return shown


def _source(pr: PaymentRequest) -> str:
    document = pr.document or {}
    if document.get("source"):
        return str(document["source"])
    if pr.import_job_id:
        return "BULK_IMPORT"
    return "INVOICE" if pr.invoice_id else "API"


def _time(moment: datetime | None) -> str | None:
    return iso(moment) if moment else None


def _date(day: date | None) -> str | None:
    return day.isoformat() if day else None


def public_payment_request(
    session: Session, pr: PaymentRequest, root: str, today: date | None = None
) -> dict[str, Any]:
    """The contract's ``PaymentRequest``, as every path renders it. ``today`` (default: the
    sandbox clock's date) decides whether the customer's pause is still on."""
    today = today or state.now(session).date()
    customer = session.get(Customer, pr.customer_id)
    assert customer is not None
    document = pr.document or {}
    method = (pr.distribution or {}).get("collectionMethod")
    return {
        "id": pr.id,
        "paymentRequestNo": pr.payment_request_no,
        "externalId": pr.external_id,
        "reference": pr.reference,
        "description": pr.description,
        "customer": {"id": customer.id, "name": customer.name, "externalId": customer.external_id},
        "invoiceIds": [pr.invoice_id] if pr.invoice_id else [],
        "totalAmount": number(pr.total_amount),
        "taxAmount": number(tax_amount(pr)),
        "paidAmount": number(pr.paid_amount),
        "dueAmount": number(due_amount(pr)),
        "currencyCode": pr.currency_code,
        "taxRate": None if pr.tax_rate is None else number(pr.tax_rate),
        "payByDate": _date(pr.pay_by_date),
        "status": pr.status,
        "statusReasonCode": pr.status_reason_code,
        "source": _source(pr),
        "creditControlStatus": document.get("creditControlStatus"),
        "associationType": pr.association_type,
        "workflowType": method if method in ("AUTO_COLLECT", "ON_DEMAND") else None,
        "distribution": _distribution(pr),
        "paymentLink": payment_link(root, pr),
        "redirectUrl": document.get("redirectUrl"),
        "collection": collection.collection_state(session, pr, today),
        "cancelCollectionOnFailure": pr.cancel_collection_on_failure,
        "directDebitInitiationDate": document.get("directDebitInitiationDate"),
        "customFields": document.get("customFields") or [],
        "creationTime": iso(pr.created_at),
        "lastUpdatedTime": iso(pr.updated_at),
        "distributionTime": _time(pr.distribution_time),
        "lastNotificationSentTime": document.get("lastNotificationSentTime"),
        "paidTime": _time(pr.paid_time),
    }


def embedded_payment_request(
    session: Session, pr: PaymentRequest, root: str, today: date
) -> dict[str, Any]:
    """The contract's ``InvoicePaymentRequest`` (a payment request inside its invoice)."""
    full = public_payment_request(session, pr, root, today)
    keys = ["id", "paymentRequestNo", "description", "payByDate", "status", "statusReasonCode"]
    keys += ["paymentLink", "collection", "creationTime", "lastUpdatedTime"]
    return {**{key: full[key] for key in keys}, "amount": full["totalAmount"]}


def new_payment_request(
    session: Session,
    *,
    customer_id: str,
    biller_id: str,
    description: str,
    total: Decimal,
    now: datetime,
    invoice_id: str | None = None,
    association: str = "SINGLE",
    pay_by: date | None = None,
    distribution: dict[str, Any] | None = None,
    **columns: Any,
) -> PaymentRequest:
    """A new DRAFT payment request numbered ``PR-n`` (added to the session). ``columns`` sets any
    other column (``reference``, ``tax_rate``, ``external_id``, ``document``...)."""
    values: dict[str, Any] = {
        "status": "DRAFT",
        "currency_code": "GBP",
        "paid_amount": Decimal("0.00"),
        "collection_override": {},
        "document": {},
        "cancel_collection_on_failure": False,
        **columns,
    }
    pr = PaymentRequest(
        id=ids.new_uuid(),
        biller_id=biller_id,
        customer_id=customer_id,
        invoice_id=invoice_id,
        payment_request_no=next_number(session, biller_id, "payment_request"),
        association_type=association,
        description=description,
        total_amount=total,
        pay_by_date=pay_by,
        distribution=distribution or {},
        created_at=now,
        updated_at=now,
        **values,
    )
    session.add(pr)
    events.payment_request_event(session, pr, "PAYMENT_REQUEST_CREATED")
    return pr


@dataclass(frozen=True)
class Activation:
    """The contract's ``ActivationRequest``, checked."""

    collection_method: str
    custom_message: str | None
    template_id: str | None

    @property
    def distribution_method(self) -> str:
        return ACTIVATION_METHODS[self.collection_method]


def check_template(session: Session, biller_id: str, fields: Fields) -> str | None:
    """``templateId``: null or one of the biller's workflows (422 otherwise)."""
    template_id = fields.text("templateId", max_length=255)
    if template_id is not None:
        workflow = session.get(Workflow, template_id)
        if workflow is None or workflow.biller_id != biller_id:
            fields.fail("templateId", "no workflow of the biller has this id")
    return template_id


def parse_activation(session: Session, biller_id: str, body: dict[str, Any]) -> Activation:
    fields = Fields(body)
    method = fields.choice("collectionMethod", ACTIVATION_METHODS, required=True)
    assert method is not None
    return Activation(
        method,
        fields.text("customMessage", max_length=1000),
        check_template(session, biller_id, fields),
    )


def activated_status(session: Session, customer_id: str, method: str) -> str:
    """The status an activation leads to: SCHEDULED for a direct debit (422 without a mandate
    that is PENDING or ACTIVE), else UNPAID."""
    if method != "DIRECT_DEBIT_PAYMENT":
        return "UNPAID"
    if not direct_debit_available(session, customer_id):
        raise ApiError(
            422,
            VALIDATION_ERROR,
            "DIRECT_DEBIT_PAYMENT needs a direct debit mandate that is PENDING or ACTIVE",
            field="collectionMethod",
        )
    return "SCHEDULED"


def send(pr: PaymentRequest, status: str, now: datetime, **distribution: Any) -> None:
    """Send a DRAFT: it becomes ``status`` and its distribution is approved."""
    pr.status = status
    pr.distribution = {**(pr.distribution or {}), **distribution, "approvedForSending": True}
    pr.distribution_time = now
    pr.updated_at = now
    events.payment_request_event(events.session_of(pr), pr, "PAYMENT_REQUEST_ACTIVATED")


def void(pr: PaymentRequest, now: datetime) -> None:
    """VOID from DRAFT, UNPAID or SCHEDULED; a VOID one stays as it is; otherwise INVALID_STATE."""
    if pr.status == "VOID":
        return
    if pr.status not in EDITABLE:
        raise invalid_state(f"payment request in status {pr.status} cannot be voided")
    pr.status = "VOID"
    pr.updated_at = now
    events.payment_request_event(events.session_of(pr), pr, "PAYMENT_REQUEST_VOIDED")


def mark_paid(pr: PaymentRequest, now: datetime) -> None:
    """PAID outside the service: collection stops, nothing is due, no payment is created."""
    if pr.status in PAID_STATUSES:
        return
    pr.status = "PAID"
    pr.paid_time = now
    pr.updated_at = now
    events.payment_request_event(events.session_of(pr), pr, "PAYMENT_REQUEST_PAID")
