"""The hosted pages a payer opens: mandate signing (``/dd-mandate/{id}``, the mandate's ``url``)
and card payment (``/pay/{id}``, a payment request's ``paymentLink.url``).

They live at the sandbox's root, like the real service's console pages, and take HTML form posts.
Bad input re-renders the form with the error next to its field and changes nothing; the rules are
in :mod:`sandbox.mandate_signing` and :mod:`sandbox.card_payments`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query
from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session

from sandbox import card_payments, mandate_signing, page_html, state
from sandbox.billing_models import Customer, Mandate, PaymentRequest
from sandbox.deps import SessionDep
from sandbox.models import Biller
from sandbox.payment_requests import due_amount
from sandbox.test_accounts import BANK_ACCOUNTS, CARDS

router = APIRouter(include_in_schema=False)

FormText = Annotated[str, Form()]
Page = HTMLResponse | RedirectResponse


def _row(
    session: Session, model: type[Mandate] | type[PaymentRequest], key: str, lock: bool
) -> object:
    # A NUL or overlong id is no row (PostgreSQL refuses NUL in text).
    if "\x00" in key or len(key) > 64:
        return None
    # A post locks the row (PostgreSQL) so two submits of one form cannot both pay or sign.
    return session.get(model, key, with_for_update=lock)


def _names(session: Session, biller_id: str, customer_id: str) -> tuple[str, str]:
    biller = session.get(Biller, biller_id)
    customer = session.get(Customer, customer_id)
    biller_name = str(biller.document.get("name", "")) if biller else ""
    return biller_name or "The biller", customer.name if customer else ""


# --- mandate signing --------------------------------------------------------------------------


def _mandate(session: Session, mandate_id: str, lock: bool = False) -> Mandate | None:
    found = _row(session, Mandate, mandate_id, lock)
    return found if isinstance(found, Mandate) else None


# (form field, label, input attributes) of the bank details.
_BANK_FIELDS: page_html.FieldSpecs = (
    ("account_holder", "Account holder name", {"autocomplete": "name"}),
    ("sort_code", "Sort code", {"placeholder": "10-88-00", "inputmode": "numeric"}),
    ("account_number", "Account number", {"placeholder": "00012345", "inputmode": "numeric"}),
)


def _mandate_form(
    session: Session,
    mandate: Mandate,
    mode: str | None,
    values: dict[str, str],
    errors: dict[str, str],
) -> HTMLResponse:
    biller, customer = _names(session, mandate.biller_id, mandate.customer_id)
    accounts = page_html.table(
        "Sandbox test accounts",
        ["Name", "Sort code", "Account number", "What happens"],
        [[a.holder, a.sort_code, a.account_number, a.behaviour] for a in BANK_ACCOUNTS],
    )
    body = (
        f"<p>{page_html.escape_text(biller)} will collect payments from "
        f"<strong>{page_html.escape_text(customer)}</strong> by Direct Debit.</p>"
        f"<form method='post' action='/dd-mandate/{page_html.escape_attr(mandate.id)}'>"
        f"{page_html.hidden('mode', mode)}<fieldset><legend>Your bank account</legend>"
        + page_html.text_fields(_BANK_FIELDS, values, errors)
        + "</fieldset>"
        + page_html.checkbox(
            "confirm",
            "I am the account holder and the only person needed to authorise debits from "
            "this account.",
            values.get("confirm") == "yes",
            errors,
        )
        + "<button type='submit'>Set up Direct Debit</button></form>"
        "<p class='hint'>Payments are protected by the Direct Debit Guarantee.</p>"
        f"{accounts}"
    )
    return page_html.page("Set up a Direct Debit", body, 422 if errors else 200)


def _signed_page(mandate: Mandate, mode: str | None) -> Page:
    if mode != "popup" and mandate.redirect_url:
        return RedirectResponse(mandate.redirect_url, 303)
    closing = " You can close this window." if mode == "popup" else ""
    return page_html.message(
        "Direct Debit set up",
        f"Your Direct Debit mandate is signed and waits for your bank's confirmation.{closing}",
        done=True,
    )


@router.get("/dd-mandate/{mandate_id}", response_model=None)
def mandate_page(
    session: SessionDep,
    mandate_id: str,
    mode: Annotated[str | None, Query()] = None,
) -> HTMLResponse:
    mandate = _mandate(session, mandate_id)
    if mandate is None:
        return page_html.not_found("Direct Debit mandate")
    if mandate.status != "CREATED":
        return page_html.message("Direct Debit mandate", mandate_signing.explain_state(mandate))
    return _mandate_form(session, mandate, _popup(mode), {}, {})


def _popup(mode: str | None) -> str | None:
    return "popup" if mode == "popup" else None


@router.post("/dd-mandate/{mandate_id}", response_model=None)
def sign_mandate(
    session: SessionDep,
    mandate_id: str,
    account_holder: FormText = "",
    sort_code: FormText = "",
    account_number: FormText = "",
    confirm: FormText = "",
    mode: FormText = "",
) -> Page:
    mandate = _mandate(session, mandate_id, lock=True)
    if mandate is None:
        return page_html.not_found("Direct Debit mandate")
    if mandate.status != "CREATED":
        text = mandate_signing.explain_state(mandate)
        return page_html.message("Direct Debit mandate", text, 409)
    details = mandate_signing.parse_bank_details(
        account_holder, sort_code, account_number, confirm == "yes"
    )
    if isinstance(details, dict):
        values = {
            "account_holder": account_holder,
            "sort_code": sort_code,
            "account_number": account_number,
            "confirm": confirm,
        }
        return _mandate_form(session, mandate, _popup(mode), values, details)
    mandate_signing.sign(session, mandate, details, state.now(session))
    return _signed_page(mandate, _popup(mode))


# --- card payment -----------------------------------------------------------------------------


def _request(session: Session, pr_id: str, lock: bool = False) -> PaymentRequest | None:
    found = _row(session, PaymentRequest, pr_id, lock)
    return found if isinstance(found, PaymentRequest) else None


_CARD_FIELDS: page_html.FieldSpecs = (
    ("cardholder_name", "Name on card", {"autocomplete": "cc-name"}),
    ("card_number", "Card number", {"autocomplete": "cc-number", "inputmode": "numeric"}),
    ("expiry", "Expiry date (MM/YY)", {"autocomplete": "cc-exp", "placeholder": "MM/YY"}),
    ("cvc", "Security code (CVC)", {"autocomplete": "cc-csc", "inputmode": "numeric"}),
)


def _pay_form(
    session: Session,
    pr: PaymentRequest,
    values: dict[str, str],
    errors: dict[str, str],
    status: int = 200,
    alert: str | None = None,
) -> HTMLResponse:
    biller, customer = _names(session, pr.biller_id, pr.customer_id)
    due = page_html.pounds(due_amount(pr))
    cards = page_html.table(
        "Sandbox test cards",
        ["Card number", "Expiry", "CVC", "What happens"],
        [
            [c.display, f"{c.expiry_month:02d}/{c.expiry_year % 100:02d}", c.cvc, c.behaviour]
            for c in CARDS
        ],
    )
    body = (
        f"<p>{page_html.escape_text(biller)} asks <strong>{page_html.escape_text(customer)}"
        f"</strong> to pay:</p><dl><dt>Payment request</dt>"
        f"<dd id='number'>{page_html.escape_text(pr.payment_request_no)}</dd>"
        f"<dt>Description</dt><dd id='description'>{page_html.escape_text(pr.description)}</dd>"
        f"<dt>Amount due</dt><dd id='amount'>{page_html.escape_text(due)}</dd></dl>"
        f"{page_html.alert(alert)}"
        f"<form method='post' action='/pay/{page_html.escape_attr(pr.id)}'>"
        "<fieldset><legend>Card details</legend>"
        + page_html.text_fields(_CARD_FIELDS, values, errors)
        + "</fieldset>"
        + page_html.checkbox(
            "save_card",
            "Save this card for future payments",
            values.get("save_card") == "yes",
            {},
        )
        + f"<button type='submit'>Pay {page_html.escape_text(due)}</button></form>{cards}"
    )
    return page_html.page(f"Pay {pr.payment_request_no}", body, status)


@router.get("/pay/{payment_request_id}", response_model=None)
def pay_page(session: SessionDep, payment_request_id: str) -> HTMLResponse:
    pr = _request(session, payment_request_id)
    if pr is None:
        return page_html.not_found("payment request")
    try:
        card_payments.check_payable(pr)
    except card_payments.NotPayable as exc:
        return page_html.message(f"Payment request {pr.payment_request_no}", str(exc))
    return _pay_form(session, pr, {}, {})


@router.post("/pay/{payment_request_id}", response_model=None)
def pay(
    session: SessionDep,
    payment_request_id: str,
    cardholder_name: FormText = "",
    card_number: FormText = "",
    expiry: FormText = "",
    cvc: FormText = "",
    save_card: FormText = "",
) -> Page:
    pr = _request(session, payment_request_id, lock=True)
    if pr is None:
        return page_html.not_found("payment request")
    values = {
        "cardholder_name": cardholder_name,
        "card_number": card_number,
        "expiry": expiry,
        "save_card": save_card,
    }  # the CVC is never echoed back
    now = state.now(session)
    try:
        card_payments.check_payable(pr)
        card = card_payments.parse_card(cardholder_name, card_number, expiry, cvc, now.date())
        if isinstance(card, dict):
            return _pay_form(session, pr, values, card, 422)
        payment = card_payments.pay_by_card(session, pr, card, save_card == "yes", now)
    except card_payments.NotPayable as exc:
        return page_html.message(f"Payment request {pr.payment_request_no}", str(exc), 409)
    except card_payments.CardDeclined as exc:
        return _pay_form(session, pr, values, {}, 402, alert=str(exc))
    redirect = (pr.document or {}).get("redirectUrl")
    if redirect:
        return RedirectResponse(str(redirect), 303)
    return page_html.message(
        "Payment received",
        f"Thank you: {page_html.pounds(payment.amount)} paid for {pr.payment_request_no}.",
        done=True,
    )
