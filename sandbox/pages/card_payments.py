"""Paying a payment request by card on its hosted page (``paymentLink.url``).

Only the documented test cards pay (:data:`sandbox.pages.test_accounts.CARDS`); a declined one
changes nothing. A payment takes the whole due amount: one ``CARD`` payment (status ``SUCCESS``) is
recorded, the request becomes PAID and its invoice's paid amount moves (PAID once nothing is
due), all in the caller's transaction. The page (:mod:`sandbox.routes.pages`) only renders.
"""

from __future__ import annotations

import re
from datetime import date, datetime
from decimal import Decimal

from sqlalchemy.orm import Session

from sandbox.billing.invoice_actions import settle_if_paid
from sandbox.billing.payment_requests import PAID_STATUSES, due_amount, mark_paid
from sandbox.core import ids
from sandbox.customers.cards import add_card
from sandbox.models.billing import Customer, Invoice, Payment, PaymentRequest
from sandbox.pages.test_accounts import CARDS, DocumentedCard, find_card
from sandbox.webhooks import events

# Statuses in which the payer can still pay by card: sent and not being collected otherwise. A
# SCHEDULED request (waiting for its direct debit) may be paid by card before it is submitted.
PAYABLE = frozenset({"UNPAID", "SCHEDULED"})
_EXPIRY = re.compile(r"^(\d{1,2})\s*/\s*(\d{2}|\d{4})$")
_CVC = re.compile(r"^\d{3,4}$")


def luhn_ok(digits: str) -> bool:
    total = 0
    for i, char in enumerate(reversed(digits)):
        value = int(char) * (2 if i % 2 else 1)
        total += value - 9 if value > 9 else value
    return total % 10 == 0


def _check_number(number: str) -> DocumentedCard | str:
    digits = re.sub(r"[ -]", "", number)
    if not digits.isdigit() or not 12 <= len(digits) <= 19 or not luhn_ok(digits):
        return "Enter a valid card number."
    card = find_card(digits)
    if card is None:
        return f"The sandbox accepts only its test cards, like {CARDS[0].display}."
    return card


def _check_expiry(expiry: str, card: DocumentedCard | None, today: date) -> str | None:
    match = _EXPIRY.match(expiry.strip())
    if match is None or not 1 <= int(match.group(1)) <= 12:
        return "Enter the expiry date as MM/YY."
    month, year = int(match.group(1)), int(match.group(2))
    year = year + 2000 if year < 100 else year
    if (year, month) < (today.year, today.month):
        return "The card has expired."
    if card is not None and (month, year) != (card.expiry_month, card.expiry_year):
        return "The expiry date does not match the card."
    return None


def parse_card(
    holder: str, number: str, expiry: str, cvc: str, today: date
) -> DocumentedCard | dict[str, str]:
    """The test card the form names, or the error of each bad field (keyed by form field name).
    ``today`` is the sandbox clock's date (a card expires on the sandbox's calendar)."""
    errors: dict[str, str] = {}
    if not holder.strip():
        errors["cardholder_name"] = "Enter the name on the card."
    elif len(holder.strip()) > 100:
        errors["cardholder_name"] = "The name can be at most 100 characters."
    checked = _check_number(number)
    card = checked if isinstance(checked, DocumentedCard) else None
    if isinstance(checked, str):
        errors["card_number"] = checked
    expiry_error = _check_expiry(expiry, card, today)
    if expiry_error:
        errors["expiry"] = expiry_error
    if not _CVC.match(cvc.strip()):
        errors["cvc"] = "Enter the 3 or 4 digit security code."
    elif card is not None and cvc.strip() != card.cvc:
        errors["cvc"] = "The security code does not match the card."
    if errors or card is None:
        return errors
    return card


class NotPayable(Exception):
    """The request cannot be paid now (already paid, void, not sent, being collected)."""

    def __init__(self, pr: PaymentRequest) -> None:
        super().__init__(explain_state(pr))


class CardDeclined(Exception):
    """The card issuer refused the payment (a declined test card)."""


def explain_state(pr: PaymentRequest) -> str:
    """Why a request that is not payable cannot be paid, in words for the payer."""
    if pr.status in PAID_STATUSES or (pr.status in PAYABLE and due_amount(pr) <= 0):
        return f"Payment request {pr.payment_request_no} has already been paid. Thank you."
    if pr.status == "VOID":
        return f"Payment request {pr.payment_request_no} has been cancelled: nothing is due."
    if pr.status == "SUBMITTED":
        return (
            f"Payment request {pr.payment_request_no} is being collected by Direct Debit: "
            "nothing more is needed."
        )
    return f"Payment request {pr.payment_request_no} has not been sent yet."


def check_payable(pr: PaymentRequest) -> None:
    if pr.status not in PAYABLE or due_amount(pr) <= 0:
        raise NotPayable(pr)


def pay_by_card(
    session: Session, pr: PaymentRequest, card: DocumentedCard, save_card: bool, now: datetime
) -> Payment:
    """Pay what is due on ``pr`` with ``card`` (optionally saved as the customer's card on file).
    Raises :class:`NotPayable` or :class:`CardDeclined`, having changed nothing."""
    check_payable(pr)
    if card.declined:
        raise CardDeclined("Your card was declined. No payment was taken.")
    amount = due_amount(pr)
    payment = _record(session, pr, card, amount, now)
    pr.paid_amount += amount
    pr.updated_at = now
    mark_paid(pr, now)
    if pr.invoice_id is not None:
        invoice = session.get(Invoice, pr.invoice_id)
        assert invoice is not None  # a foreign key
        invoice.paid_amount += amount
        invoice.updated_at = now
        settle_if_paid(session, invoice, now)
    if save_card:
        _save(session, pr, card, now)
    return payment


def _record(
    session: Session, pr: PaymentRequest, card: DocumentedCard, amount: Decimal, now: datetime
) -> Payment:
    """The CARD payment (SUCCESS) and its event; the request's and invoice's PAID events come
    from ``mark_paid`` / ``settle_if_paid``."""
    payment = Payment(
        id=ids.new_uuid(),
        biller_id=pr.biller_id,
        invoice_id=pr.invoice_id,
        payment_request_id=pr.id,
        amount=amount,
        currency_code=pr.currency_code,
        status="SUCCESS",
        payment_method="CARD",
        reference=pr.reference or pr.payment_request_no,
        document={
            "channelPaymentId": f"sbx_card_{ids.new_uuid().replace('-', '')[:20]}",
            "card": {"brand": card.brand, "last4": card.number[-4:]},
        },
        payment_time=now,
        created_at=now,
        updated_at=now,
    )
    session.add(payment)
    events.emit(
        session,
        biller_id=pr.biller_id,
        kind="payment",
        type="PAYMENT_SUCCEEDED",
        ids={"paymentId": payment.id, "paymentRequestId": pr.id, "invoiceId": pr.invoice_id},
    )
    return payment


def _save(session: Session, pr: PaymentRequest, card: DocumentedCard, now: datetime) -> None:
    customer = session.get(Customer, pr.customer_id)
    assert customer is not None  # a foreign key
    body = {
        "brand": card.brand,
        "last4": card.number[-4:],
        "expiryMonth": card.expiry_month,
        "expiryYear": card.expiry_year,
    }
    add_card(session, customer, body, now)
