"""Simulation step: payouts (docs/service.md §6; contract ``Payout``, ``PayoutItem``).

On each working day, per biller, one payout arrives (``arrivalDate`` that day) holding:

- every ``SUCCESS`` card payment (CARD, APPLE_PAY, GOOGLE_PAY, AMEX) paid 2 working days or more
  before, and every ``SUCCESS`` direct debit paid 4 working days or more before (the payment's
  date is its ``paymentTime`` in Europe/London; weekends and England-and-Wales bank holidays do
  not count, so a bank holiday moves the payout to the next working day), at their gross amount;
- minus every late failure not yet deducted: a payment that was paid out (a ``PAYMENT`` item names
  it) and is now ``FAILED`` becomes a negative ``DEDUCTION`` item.

Items are ordered payments first (by payment time, then id), deductions after; they sum exactly to
the amount. A payout is never zero or negative [I: the contract is silent]: when the deductions
reach or exceed the credits, no payout is made that day and the negative balance is carried
forward, the day's payments (still ``SUCCESS``) and deductions waiting together for the next
working day whose payments outweigh them.

The payout is created ``IN_TRANSIT`` (``PAYOUT_CREATED``) and arrives the same morning (``PAID``,
``PAYOUT_PAID``); each event carries the payout as it was then. Paid-out payments become
``SETTLED`` (``PAYMENT_SETTLED``); a payment request or invoice that is ``PAID`` becomes
``SETTLED`` (``..._SETTLED``) once none of its payments is still waiting to be paid out.
Ids and bank references derive from (biller, date): the same data gives the same payouts.
"""

from __future__ import annotations

import hashlib
import uuid
from collections import defaultdict
from datetime import date, datetime
from decimal import Decimal
from typing import Any
from zoneinfo import ZoneInfo

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.core.money import as_number
from sandbox.core.timefmt import iso
from sandbox.core.working_days import add_working_days, is_working_day
from sandbox.models.billing import Invoice, Payment, PaymentRequest
from sandbox.models.payouts import DEDUCTION, PAYMENT, Payout, PayoutItem
from sandbox.webhooks import events

CARD_METHODS = frozenset({"CARD", "APPLE_PAY", "GOOGLE_PAY", "AMEX"})
DIRECT_DEBIT = "DIRECT_DEBIT"
# Working days between the payment and the payout that pays it out (docs/service.md §6).
DELAY_DAYS = {**dict.fromkeys(CARD_METHODS, 2), DIRECT_DEBIT: 4}
PAID_OUT_METHODS = frozenset(DELAY_DAYS)
LONDON = ZoneInfo("Europe/London")
ZERO = Decimal("0.00")
_NAMESPACE = uuid.UUID("6f1c1f8e-52b9-4d4e-9a55-2b8f4a3c0d17")
_ALPHABET = "0123456789ABCDEFGHJKLMNPQRSTUVWXYZ"


def payout_date(payment: Payment) -> date:
    """The first day ``payment`` can be paid out on."""
    paid_on = payment.payment_time.astimezone(LONDON).date()
    return add_working_days(paid_on, DELAY_DAYS[payment.payment_method])


def payout_id(biller_id: str, day: date) -> str:
    return str(uuid.uuid5(_NAMESPACE, f"payout:{biller_id}:{day.isoformat()}"))


def bank_reference(biller_id: str, day: date) -> str:
    """``ADFIN-PO-`` and six characters (15 in all: fits the 18 of a Faster Payments reference)."""
    value = int.from_bytes(hashlib.sha256(f"{biller_id}:{day.isoformat()}".encode()).digest()[:8])
    code = ""
    for _ in range(6):
        value, digit = divmod(value, len(_ALPHABET))
        code += _ALPHABET[digit]
    return f"ADFIN-PO-{code}"


def run_day(session: Session, day: date, moment: datetime) -> None:
    """Pay out what is due on ``day`` (a working day), one payout per biller."""
    if not is_working_day(day):
        return
    credits = _due_payments(session, day)
    deductions = _pending_deductions(session)
    for biller_id in sorted(set(credits) | set(deductions)):
        _pay_out(session, biller_id, day, moment, credits[biller_id], deductions[biller_id])


def _paid_out_ids(session: Session, kind: str) -> set[str]:
    rows = session.scalars(select(PayoutItem.payment_id).where(PayoutItem.type == kind))
    return {row for row in rows if row is not None}


def _due_payments(session: Session, day: date) -> defaultdict[str, list[Payment]]:
    done = _paid_out_ids(session, PAYMENT)
    rows = session.scalars(
        select(Payment).where(
            Payment.status == "SUCCESS", Payment.payment_method.in_(PAID_OUT_METHODS)
        )
    )
    found: defaultdict[str, list[Payment]] = defaultdict(list)
    for payment in rows:
        if payment.id not in done and payout_date(payment) <= day:
            found[payment.biller_id].append(payment)
    for payments in found.values():
        payments.sort(key=lambda p: (p.payment_time, p.id))
    return found


def _pending_deductions(session: Session) -> defaultdict[str, list[Payment]]:
    """Paid-out payments that failed afterwards and were not deducted yet, oldest first."""
    deducted = _paid_out_ids(session, DEDUCTION)
    paid_out = _paid_out_ids(session, PAYMENT) - deducted
    found: defaultdict[str, list[Payment]] = defaultdict(list)
    if not paid_out:
        return found
    rows = session.scalars(select(Payment).where(Payment.status == "FAILED"))
    for payment in rows:
        if payment.id in paid_out:
            found[payment.biller_id].append(payment)
    for payments in found.values():
        payments.sort(key=lambda p: (p.updated_at, p.id))
    return found


def _label(session: Session, payment: Payment) -> str | None:
    """The document number a deduction names (contract example: "... for invoice INV-17")."""
    if payment.invoice_id and (invoice := session.get(Invoice, payment.invoice_id)):
        return f"Failed payment deduction for invoice {invoice.invoice_no}"
    pr_id = payment.payment_request_id
    if pr_id and (pr := session.get(PaymentRequest, pr_id)):
        return f"Failed payment deduction for payment request {pr.payment_request_no}"
    return "Failed payment deduction"


def _pay_out(
    session: Session,
    biller_id: str,
    day: date,
    moment: datetime,
    credits: list[Payment],
    deductions: list[Payment],
) -> None:
    amount = sum((p.amount for p in credits), ZERO) - sum((p.amount for p in deductions), ZERO)
    if amount <= 0:
        return  # the negative balance is carried: credits and deductions wait together
    payout = Payout(
        id=payout_id(biller_id, day),
        biller_id=biller_id,
        reference=bank_reference(biller_id, day),
        arrival_date=day,
        amount=amount,
        currency_code="GBP",
        status="IN_TRANSIT",
        created_at=moment,
        updated_at=moment,
    )
    session.add(payout)
    lines: list[tuple[str, Decimal, Payment, str | None]]
    lines = [(PAYMENT, p.amount, p, None) for p in credits]
    lines += [(DEDUCTION, -p.amount, p, _label(session, p)) for p in deductions]
    for position, (kind, signed, payment, description) in enumerate(lines):
        session.add(
            PayoutItem(
                id=str(uuid.uuid5(_NAMESPACE, f"{payout.id}:{position}")),
                payout_id=payout.id,
                biller_id=biller_id,
                position=position,
                type=kind,
                amount=signed,
                payment_id=payment.id,
                payment_request_id=payment.payment_request_id,
                invoice_id=payment.invoice_id,
                description=description,
            )
        )
    session.flush()
    _emit(session, payout, "PAYOUT_CREATED")
    payout.status = "PAID"
    _emit(session, payout, "PAYOUT_PAID")
    for payment in credits:
        _settle(session, payment, moment)


def items_of(session: Session, payout: Payout) -> list[PayoutItem]:
    return list(
        session.scalars(
            select(PayoutItem)
            .where(PayoutItem.payout_id == payout.id)
            .order_by(PayoutItem.position)
        )
    )


def public_payout(session: Session, payout: Payout) -> dict[str, Any]:
    """The contract's ``Payout``."""
    return {
        "id": payout.id,
        "reference": payout.reference,
        "arrivalDate": payout.arrival_date.isoformat(),
        "amount": as_number(payout.amount),
        "currencyCode": payout.currency_code,
        "status": payout.status,
        "items": [
            {
                "type": item.type,
                "amount": as_number(item.amount),
                "paymentId": item.payment_id,
                "paymentRequestId": item.payment_request_id,
                "invoiceId": item.invoice_id,
                "description": item.description,
            }
            for item in items_of(session, payout)
        ],
        "creationTime": iso(payout.created_at),
        "lastUpdatedTime": iso(payout.updated_at),
    }


def _emit(session: Session, payout: Payout, name: str) -> None:
    events.emit(
        session,
        biller_id=payout.biller_id,
        kind="payout",
        type=name,
        ids={"payoutId": payout.id},
        extra={"payout": public_payout(session, payout)},
    )


def _settle(session: Session, payment: Payment, moment: datetime) -> None:
    payment.status = "SETTLED"
    payment.updated_at = moment
    events.payment_event(session, payment, "PAYMENT_SETTLED")
    session.flush()
    if payment.payment_request_id:
        pr = session.get(PaymentRequest, payment.payment_request_id)
        if pr is not None and pr.status == "PAID" and _all_paid_out(session, pr_id=pr.id):
            pr.status = "SETTLED"
            pr.updated_at = moment
            events.payment_request_event(session, pr, "PAYMENT_REQUEST_SETTLED")
    if payment.invoice_id:
        invoice = session.get(Invoice, payment.invoice_id)
        if (
            invoice is not None
            and invoice.status == "PAID"
            and _all_paid_out(session, invoice_id=invoice.id)
        ):
            invoice.status = "SETTLED"
            invoice.updated_at = moment
            events.invoice_event(session, invoice, "INVOICE_SETTLED")


def _all_paid_out(
    session: Session, *, pr_id: str | None = None, invoice_id: str | None = None
) -> bool:
    """No payment of the request (or invoice) is still waiting to be paid out."""
    query = select(Payment.id).where(
        Payment.status == "SUCCESS", Payment.payment_method.in_(PAID_OUT_METHODS)
    )
    if pr_id is not None:
        query = query.where(Payment.payment_request_id == pr_id)
    else:
        query = query.where(Payment.invoice_id == invoice_id)
    return session.scalars(query.limit(1)).first() is None
