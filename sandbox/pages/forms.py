"""The hosted pages' forms and the records they show: the mandate-signing form (bank details,
the documented test accounts) and the card-payment form (the documented test cards).

Everything shown is escaped by :mod:`sandbox.pages.html`. A NUL or overlong id in the URL is no
record; a form post locks its row (PostgreSQL) so two submits cannot both sign or pay.
"""

from __future__ import annotations

from fastapi.responses import HTMLResponse, RedirectResponse
from sqlalchemy.orm import Session

from sandbox.billing.payment_requests import due_amount
from sandbox.models import Biller, Customer, Mandate, PaymentRequest
from sandbox.pages import html
from sandbox.pages.test_accounts import BANK_ACCOUNTS, CARDS

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


def find_mandate(session: Session, mandate_id: str, lock: bool = False) -> Mandate | None:
    found = _row(session, Mandate, mandate_id, lock)
    return found if isinstance(found, Mandate) else None


def find_payment_request(session: Session, pr_id: str, lock: bool = False) -> PaymentRequest | None:
    found = _row(session, PaymentRequest, pr_id, lock)
    return found if isinstance(found, PaymentRequest) else None


# (form field, label, input attributes) of the bank details.
_BANK_FIELDS: html.FieldSpecs = (
    ("account_holder", "Account holder name", {"autocomplete": "name"}),
    ("sort_code", "Sort code", {"placeholder": "10-88-00", "inputmode": "numeric"}),
    ("account_number", "Account number", {"placeholder": "00012345", "inputmode": "numeric"}),
)


def mandate_form(
    session: Session,
    mandate: Mandate,
    mode: str | None,
    values: dict[str, str],
    errors: dict[str, str],
) -> HTMLResponse:
    biller, customer = _names(session, mandate.biller_id, mandate.customer_id)
    accounts = html.table(
        "Sandbox test accounts",
        ["Name", "Sort code", "Account number", "What happens"],
        [[a.holder, a.sort_code, a.account_number, a.behaviour] for a in BANK_ACCOUNTS],
    )
    body = (
        f"<p>{html.escape_text(biller)} will collect payments from "
        f"<strong>{html.escape_text(customer)}</strong> by Direct Debit.</p>"
        f"<form method='post' action='/dd-mandate/{html.escape_attr(mandate.id)}'>"
        f"{html.hidden('mode', mode)}<fieldset><legend>Your bank account</legend>"
        + html.text_fields(_BANK_FIELDS, values, errors)
        + "</fieldset>"
        + html.checkbox(
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
    return html.page("Set up a Direct Debit", body, 422 if errors else 200)


def signed_page(mandate: Mandate, mode: str | None) -> Page:
    if mode != "popup" and mandate.redirect_url:
        return RedirectResponse(mandate.redirect_url, 303)
    closing = " You can close this window." if mode == "popup" else ""
    return html.message(
        "Direct Debit set up",
        f"Your Direct Debit mandate is signed and waits for your bank's confirmation.{closing}",
        done=True,
    )


_CARD_FIELDS: html.FieldSpecs = (
    ("cardholder_name", "Name on card", {"autocomplete": "cc-name"}),
    ("card_number", "Card number", {"autocomplete": "cc-number", "inputmode": "numeric"}),
    ("expiry", "Expiry date (MM/YY)", {"autocomplete": "cc-exp", "placeholder": "MM/YY"}),
    ("cvc", "Security code (CVC)", {"autocomplete": "cc-csc", "inputmode": "numeric"}),
)


def pay_form(
    session: Session,
    pr: PaymentRequest,
    values: dict[str, str],
    errors: dict[str, str],
    status: int = 200,
    alert: str | None = None,
) -> HTMLResponse:
    biller, customer = _names(session, pr.biller_id, pr.customer_id)
    due = html.pounds(due_amount(pr))
    cards = html.table(
        "Sandbox test cards",
        ["Card number", "Expiry", "CVC", "What happens"],
        [
            [c.display, f"{c.expiry_month:02d}/{c.expiry_year % 100:02d}", c.cvc, c.behaviour]
            for c in CARDS
        ],
    )
    body = (
        f"<p>{html.escape_text(biller)} asks <strong>{html.escape_text(customer)}"
        f"</strong> to pay:</p><dl><dt>Payment request</dt>"
        f"<dd id='number'>{html.escape_text(pr.payment_request_no)}</dd>"
        f"<dt>Description</dt><dd id='description'>{html.escape_text(pr.description)}</dd>"
        f"<dt>Amount due</dt><dd id='amount'>{html.escape_text(due)}</dd></dl>"
        f"{html.alert(alert)}"
        f"<form method='post' action='/pay/{html.escape_attr(pr.id)}'>"
        "<fieldset><legend>Card details</legend>"
        + html.text_fields(_CARD_FIELDS, values, errors)
        + "</fieldset>"
        + html.checkbox(
            "save_card",
            "Save this card for future payments",
            values.get("save_card") == "yes",
            {},
        )
        + f"<button type='submit'>Pay {html.escape_text(due)}</button></form>{cards}"
    )
    return html.page(f"Pay {pr.payment_request_no}", body, status)
