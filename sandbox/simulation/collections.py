"""Simulation steps: direct-debit collection and overdue invoices (see sandbox/simulation/clock.py).

:func:`run_day` (working days only, Bacs does not move money on others) first answers the debits
whose confirmation or late-failure day has come, then submits the SCHEDULED payment requests whose
submission day has come (:mod:`sandbox.simulation.direct_debit` does each change). A request is
submitted only when its AUTO_COLLECT is not paused (:func:`sandbox.billing.collection.is_paused`:
the request's own setting, else the customer-level pause) and its customer's mandate can collect
(PENDING or ACTIVE [C: MandateStatus]); a paused request waits, and is submitted on the first run
after it is resumed. A due request whose customer has no such mandate falls back to on-demand
(UNPAID).

:func:`mark_overdue` moves UNPAID invoices past their due date to OVERDUE, and announces UNPAID
payment requests whose pay-by date passed yesterday (their status stays UNPAID [C]).

Candidates are found by indexed columns (status, pay-by date, next step dates), in a stable order.
"""

from __future__ import annotations

from datetime import date, datetime, timedelta

from sqlalchemy import and_, or_, select
from sqlalchemy.orm import Session

from sandbox.billing import collection
from sandbox.billing.payment_requests import due_amount as request_due
from sandbox.core.working_days import is_working_day
from sandbox.customers.lookup import DIRECT_DEBIT_READY, current_mandate
from sandbox.models.billing import Invoice, Payment, PaymentRequest
from sandbox.simulation import direct_debit
from sandbox.webhooks import events

# add_working_days(d, -2) is never more than this many calendar days before d (a weekend plus
# the Christmas and Easter bank holidays): a safe window for the SQL filter.
_LEAD_WINDOW = timedelta(days=10)


def run_day(session: Session, day: date, moment: datetime) -> None:
    """Answer the debits due today, then submit the requests due today (working days only)."""
    if not is_working_day(day):
        return
    _answer_debits(session, day, moment)
    _submit_scheduled(session, day, moment)


def _answer_debits(session: Session, day: date, moment: datetime) -> None:
    payments = session.scalars(
        select(Payment)
        .where(Payment.next_step_date <= day)
        .order_by(Payment.next_step_date, Payment.created_at, Payment.id)
    ).all()
    for payment in payments:
        if payment.status == "SUBMITTED":
            direct_debit.answer(session, payment, day, moment)
        elif payment.status in ("SUCCESS", "SETTLED"):
            direct_debit.fail_late(session, payment, moment)
        else:  # changed by other means meanwhile: nothing more happens to it
            payment.next_step_date = None
    session.flush()


def _submit_scheduled(session: Session, day: date, moment: datetime) -> None:
    requests = session.scalars(
        select(PaymentRequest)
        .where(
            PaymentRequest.status == "SCHEDULED",
            or_(
                PaymentRequest.next_collection_date <= day,
                and_(
                    PaymentRequest.next_collection_date.is_(None),
                    or_(
                        PaymentRequest.pay_by_date.is_(None),
                        PaymentRequest.pay_by_date <= day + _LEAD_WINDOW,
                    ),
                ),
            ),
        )
        .order_by(PaymentRequest.created_at, PaymentRequest.id)
    ).all()
    for pr in requests:
        due_on = direct_debit.submission_date(pr)
        if due_on is not None and due_on > day:
            continue
        if collection.is_paused(session, pr, "AUTO_COLLECT", day):
            continue
        if request_due(pr) <= 0:
            continue
        mandate = current_mandate(session, pr.customer_id)
        if mandate is None or mandate.status not in DIRECT_DEBIT_READY:
            direct_debit.fall_back(session, pr, direct_debit.NO_MANDATE, moment)
            continue
        direct_debit.submit(session, pr, mandate, day, moment)


def mark_overdue(session: Session, day: date, moment: datetime) -> None:
    """UNPAID invoices past their due date → OVERDUE (INVOICE_OVERDUE); UNPAID requests whose
    pay-by date was yesterday get PAYMENT_REQUEST_OVERDUE."""
    invoices = session.scalars(
        select(Invoice)
        .where(Invoice.status == "UNPAID", Invoice.due_date < day)
        .order_by(Invoice.created_at, Invoice.id)
    ).all()
    for invoice in invoices:
        invoice.status = "OVERDUE"
        invoice.updated_at = moment
        events.invoice_event(session, invoice, "INVOICE_OVERDUE")
    requests = session.scalars(
        select(PaymentRequest)
        .where(
            PaymentRequest.status == "UNPAID",
            PaymentRequest.pay_by_date == day - timedelta(days=1),
        )
        .order_by(PaymentRequest.created_at, PaymentRequest.id)
    ).all()
    for pr in requests:
        events.payment_request_event(session, pr, "PAYMENT_REQUEST_OVERDUE")
