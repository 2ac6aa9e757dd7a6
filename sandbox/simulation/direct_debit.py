"""Direct-debit collection as the simulation runs it (contract ``InvoiceStatus``,
``PaymentRequestStatus``, ``PaymentStatus``; docs/service.md §7.1).

A SCHEDULED payment request is submitted to Bacs two working days before its pay-by date (at once
when that is past; a retry on its ``next_collection_date``): a ``DIRECT_DEBIT`` payment is created
``SUBMITTED`` for what is due, the request becomes SUBMITTED and its invoice too once the submitted
debits cover what the invoice has due. On the third working day after submission the bank answers,
as the mandate's documented test account says (:mod:`sandbox.pages.test_accounts`):

- paid: the payment is ``SUCCESS``; the request and invoice amounts move and they become PAID
  through ``payment_requests.mark_paid`` and ``invoice_actions.settle_if_paid``;
  a ``LATE_FAILURE`` account's payment then fails 10 working days later (``FAILED``,
  ``lateFailure``): the amount is due again and the request and invoice go back to UNPAID;
- failed (``INSUFFICIENT_FUNDS``): the payment is ``FAILED``; the request goes back to SCHEDULED
  for a retry 7 working days later, up to the customer's ``ddRetryCount`` retries, or to UNPAID
  (the on-demand fallback) after the last one or when ``cancelCollectionOnFailure`` is set.

Payment ids derive from the request and the attempt, so the same data gives the same payments.
Every change emits the contract's events; the PAID events come from the functions reused.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sandbox.billing.invoice_actions import settle_if_paid
from sandbox.billing.invoices import due_amount as invoice_due
from sandbox.billing.invoices import payment_requests_of
from sandbox.billing.payment_requests import PAID_STATUSES, mark_paid
from sandbox.billing.payment_requests import due_amount as request_due
from sandbox.core.timefmt import iso
from sandbox.core.working_days import add_working_days
from sandbox.customers.settings import dd_retry_count
from sandbox.models.billing import Customer, Invoice, Mandate, Payment, PaymentRequest
from sandbox.pages.test_accounts import INSUFFICIENT_FUNDS, LATE_FAILURE, SUCCEEDS
from sandbox.webhooks import events

DIRECT_DEBIT = "DIRECT_DEBIT"
SUBMISSION_LEAD = 2  # working days before the pay-by date [C: about 2]
CONFIRMATION_DELAY = 3  # working days from submission to the bank's answer (Bacs cycle)
RETRY_INTERVAL = 7  # working days between a failure and the retry [C]
LATE_FAILURE_DELAY = 10  # working days from success to a late failure
INSUFFICIENT = "INSUFFICIENT_FUNDS"
LATE_REASON = "REFER_TO_PAYER"  # the Bacs ARUDD reason a late return most often carries
NO_MANDATE = "DIRECT_DEBIT_NOT_AVAILABLE"
COLLECTION_FAILED = "COLLECTION_FAILED"
_NAMESPACE = uuid.UUID("0b7c4a52-3f7e-4d7b-9a4e-5d2f1c8e6a90")


def submission_date(pr: PaymentRequest) -> date | None:
    """The day the request's next debit is due to be submitted (None: at once)."""
    if pr.next_collection_date is not None:
        return pr.next_collection_date
    if pr.pay_by_date is None:
        return None
    return add_working_days(pr.pay_by_date, -SUBMISSION_LEAD)


def _attempts(session: Session, pr: PaymentRequest) -> int:
    count = session.scalar(
        select(func.count())
        .select_from(Payment)
        .where(Payment.payment_request_id == pr.id, Payment.payment_method == DIRECT_DEBIT)
    )
    return int(count or 0)


def failed_attempts(session: Session, pr: PaymentRequest) -> int:
    """Collections of ``pr`` the bank refused (late failures are not attempts to retry)."""
    rows = session.scalars(
        select(Payment).where(
            Payment.payment_request_id == pr.id,
            Payment.payment_method == DIRECT_DEBIT,
            Payment.status == "FAILED",
        )
    )
    return sum(1 for row in rows if not (row.document or {}).get("lateFailure"))


def submit(
    session: Session, pr: PaymentRequest, mandate: Mandate, day: date, moment: datetime
) -> Payment:
    """SCHEDULED → SUBMITTED with a new ``SUBMITTED`` direct-debit payment for what is due."""
    attempt = _attempts(session, pr) + 1
    payment = Payment(
        id=str(uuid.uuid5(_NAMESPACE, f"{pr.id}:{attempt}")),
        biller_id=pr.biller_id,
        invoice_id=pr.invoice_id,
        payment_request_id=pr.id,
        amount=request_due(pr),
        currency_code=pr.currency_code,
        status="SUBMITTED",
        payment_method=DIRECT_DEBIT,
        reference=pr.reference or pr.payment_request_no,
        document={"mandateId": mandate.id, "attempt": attempt},
        payment_time=moment,
        created_at=moment,
        updated_at=moment,
        next_step_date=add_working_days(day, CONFIRMATION_DELAY),
    )
    session.add(payment)
    events.payment_event(session, payment, "PAYMENT_CREATED")
    events.payment_event(session, payment, "PAYMENT_SUBMITTED")
    pr.status = "SUBMITTED"
    pr.status_reason_code = None
    pr.next_collection_date = None
    pr.updated_at = moment
    events.payment_request_event(session, pr, "PAYMENT_REQUEST_SUBMITTED")
    session.flush()
    follow_invoice(session, pr, moment)
    return payment


def fall_back(session: Session, pr: PaymentRequest, reason: str, moment: datetime) -> None:
    """Collection stops: the request waits to be paid on demand (UNPAID)."""
    pr.status = "UNPAID"
    pr.status_reason_code = reason
    pr.next_collection_date = None
    pr.updated_at = moment
    if pr.pay_by_date is not None and pr.pay_by_date < moment.date():
        events.payment_request_event(session, pr, "PAYMENT_REQUEST_OVERDUE")
    session.flush()
    follow_invoice(session, pr, moment)


def follow_invoice(session: Session, pr: PaymentRequest, moment: datetime) -> None:
    """The invoice's status after its request moved: SUBMITTED when submitted debits cover what is
    due, SCHEDULED while a debit is scheduled or in flight, else UNPAID (OVERDUE stays)."""
    invoice = session.get(Invoice, pr.invoice_id) if pr.invoice_id else None
    if invoice is None or invoice.status in ("DRAFT", "VOID", *PAID_STATUSES):
        return
    requests = payment_requests_of(session, invoice)
    in_flight = sum((request_due(r) for r in requests if r.status == "SUBMITTED"), Decimal(0))
    if in_flight > 0 and in_flight >= invoice_due(invoice):
        target, event = "SUBMITTED", "INVOICE_SUBMITTED"
    elif any(r.status in ("SCHEDULED", "SUBMITTED") for r in requests):
        target, event = "SCHEDULED", "INVOICE_SCHEDULED"
    else:
        target, event = ("OVERDUE" if invoice.status == "OVERDUE" else "UNPAID"), ""
    if target == invoice.status:
        return
    invoice.status = target
    invoice.updated_at = moment
    if event:
        events.invoice_event(session, invoice, event)


def mandate_kind(session: Session, payment: Payment) -> str:
    """The test-account kind of the mandate that collects ``payment`` (null = succeeds)."""
    mandate_id = (payment.document or {}).get("mandateId")
    mandate = session.get(Mandate, mandate_id) if mandate_id else None
    return (mandate.test_account_kind if mandate else None) or SUCCEEDS


def answer(session: Session, payment: Payment, day: date, moment: datetime) -> None:
    """The bank's answer to a SUBMITTED debit, on its confirmation day."""
    pr = session.get(PaymentRequest, payment.payment_request_id)
    if pr is None or pr.status != "SUBMITTED":
        # The request left collection meanwhile: the debit is stopped, nothing is taken.
        payment.status = "CANCELLED"
        payment.next_step_date = None
        payment.updated_at = moment
        events.payment_event(session, payment, "PAYMENT_CANCELLED")
        return
    kind = mandate_kind(session, payment)
    if kind == INSUFFICIENT_FUNDS:
        _fail(session, payment, pr, day, moment)
    else:
        _succeed(session, payment, pr, day, moment, late=kind == LATE_FAILURE)


def _succeed(
    session: Session, payment: Payment, pr: PaymentRequest, day: date, moment: datetime, late: bool
) -> None:
    payment.status = "SUCCESS"
    payment.payment_time = moment  # when the money was collected: payouts count from it
    payment.updated_at = moment
    payment.next_step_date = add_working_days(day, LATE_FAILURE_DELAY) if late else None
    events.payment_event(session, payment, "PAYMENT_SUCCEEDED")
    pr.paid_amount += payment.amount
    pr.updated_at = moment
    if request_due(pr) == 0:
        mark_paid(pr, moment)
    else:  # a partial collection (the request grew meanwhile): the rest is collected again
        pr.status = "SCHEDULED"
    invoice = session.get(Invoice, pr.invoice_id) if pr.invoice_id else None
    if invoice is not None:
        invoice.paid_amount += payment.amount
        invoice.updated_at = moment
        settle_if_paid(session, invoice, moment)
    session.flush()
    follow_invoice(session, pr, moment)


def _fail(
    session: Session, payment: Payment, pr: PaymentRequest, day: date, moment: datetime
) -> None:
    payment.status = "FAILED"
    payment.updated_at = moment
    payment.next_step_date = None
    payment.document = {
        **(payment.document or {}),
        "failureReason": INSUFFICIENT,
        "failedTime": iso(moment),
    }
    events.payment_event(session, payment, "DD_PAYMENT_FAILED")
    session.flush()
    customer = session.get(Customer, pr.customer_id)
    assert customer is not None  # a foreign key
    exhausted = failed_attempts(session, pr) > dd_retry_count(customer)
    events.payment_request_event(session, pr, "PAYMENT_REQUEST_PAYMENT_FAILED")
    if pr.cancel_collection_on_failure:
        events.payment_request_event(session, pr, "PAYMENT_REQUEST_COLLECTION_CANCELLED")
    if pr.cancel_collection_on_failure or exhausted:
        fall_back(session, pr, COLLECTION_FAILED, moment)
        return
    pr.status = "SCHEDULED"
    pr.status_reason_code = COLLECTION_FAILED
    pr.next_collection_date = add_working_days(day, RETRY_INTERVAL)
    pr.updated_at = moment
    events.payment_request_event(session, pr, "PAYMENT_REQUEST_SCHEDULED")
    session.flush()
    follow_invoice(session, pr, moment)


def fail_late(session: Session, payment: Payment, moment: datetime) -> None:
    """A paid debit returned late: the amount is due again (the payouts step deducts it)."""
    payment.status = "FAILED"
    payment.updated_at = moment
    payment.next_step_date = None
    payment.document = {
        **(payment.document or {}),
        "failureReason": LATE_REASON,
        "lateFailure": True,
        "failedTime": iso(moment),
    }
    events.payment_event(session, payment, "DD_PAYMENT_LATE_FAILED")
    pr = session.get(PaymentRequest, payment.payment_request_id)
    if pr is not None:
        pr.paid_amount = max(pr.paid_amount - payment.amount, Decimal("0.00"))
        pr.updated_at = moment
        if pr.status in PAID_STATUSES:
            pr.status = "UNPAID"
            pr.status_reason_code = COLLECTION_FAILED
            pr.paid_time = None
        events.payment_request_event(session, pr, "PAYMENT_REQUEST_PAYMENT_FAILED")
    invoice = session.get(Invoice, payment.invoice_id) if payment.invoice_id else None
    if invoice is not None:
        invoice.paid_amount = max(invoice.paid_amount - payment.amount, Decimal("0.00"))
        invoice.updated_at = moment
        if invoice.status in PAID_STATUSES:
            # Contract: UNPAID, or OVERDUE past the due date (the overdue step does that today).
            invoice.status = "UNPAID"
            events.invoice_event(session, invoice, "INVOICE_PAYMENT_REVERSED")
