"""The hosted pages a payer opens: mandate signing (``/dd-mandate/{id}``, the mandate's ``url``)
and card payment (``/pay/{id}``, a payment request's ``paymentLink.url``).

They live at the sandbox's root, like the real service's console pages, and take HTML form posts.
Bad input re-renders the form with the error next to its field and changes nothing; the rules are
in :mod:`sandbox.pages.mandate_signing` and :mod:`sandbox.pages.card_payments`.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import APIRouter, Form, Query
from fastapi.responses import HTMLResponse, RedirectResponse

from sandbox.core import state
from sandbox.core.deps import SessionDep
from sandbox.pages import card_payments, forms, mandate_signing
from sandbox.pages import html as page_html
from sandbox.pages.forms import Page

router = APIRouter(include_in_schema=False)

FormText = Annotated[str, Form()]


# --- mandate signing --------------------------------------------------------------------------


@router.get("/dd-mandate/{mandate_id}", response_model=None)
def mandate_page(
    session: SessionDep,
    mandate_id: str,
    mode: Annotated[str | None, Query()] = None,
) -> HTMLResponse:
    mandate = forms.find_mandate(session, mandate_id)
    if mandate is None:
        return page_html.not_found("Direct Debit mandate")
    if mandate.status != "CREATED":
        return page_html.message("Direct Debit mandate", mandate_signing.explain_state(mandate))
    return forms.mandate_form(session, mandate, _popup(mode), {}, {})


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
    mandate = forms.find_mandate(session, mandate_id, lock=True)
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
        return forms.mandate_form(session, mandate, _popup(mode), values, details)
    mandate_signing.sign(session, mandate, details, state.now(session))
    return forms.signed_page(mandate, _popup(mode))


# --- card payment -----------------------------------------------------------------------------


@router.get("/pay/{payment_request_id}", response_model=None)
def pay_page(session: SessionDep, payment_request_id: str) -> HTMLResponse:
    pr = forms.find_payment_request(session, payment_request_id)
    if pr is None:
        return page_html.not_found("payment request")
    try:
        card_payments.check_payable(pr)
    except card_payments.NotPayable as exc:
        return page_html.message(f"Payment request {pr.payment_request_no}", str(exc))
    return forms.pay_form(session, pr, {}, {})


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
    pr = forms.find_payment_request(session, payment_request_id, lock=True)
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
            return forms.pay_form(session, pr, values, card, 422)
        payment = card_payments.pay_by_card(session, pr, card, save_card == "yes", now)
    except card_payments.NotPayable as exc:
        return page_html.message(f"Payment request {pr.payment_request_no}", str(exc), 409)
    except card_payments.CardDeclined as exc:
        return forms.pay_form(session, pr, values, {}, 402, alert=str(exc))
    redirect = (pr.document or {}).get("redirectUrl")
    if redirect:
        return RedirectResponse(str(redirect), 303)
    return page_html.message(
        "Payment received",
        f"Thank you: {page_html.pounds(payment.amount)} paid for {pr.payment_request_no}.",
        done=True,
    )
