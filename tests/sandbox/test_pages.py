"""The hosted pages, driven over HTTP the way a browser submits their forms: mandate signing at the
mandate's ``url`` and card payment at a payment request's ``paymentLink.url``.

The module runs its own sandbox so it can look at what no API lists: the payment a card made and
the test-account kind a signed mandate keeps for the simulation.
"""

from __future__ import annotations

import re
from decimal import Decimal
from html import unescape as html_unescape
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sandbox.models.billing import Mandate, Payment, PaymentRequest
from sandbox.pages.test_accounts import BANK_ACCOUNTS
from tests.support.billing import get, new_customer, new_payment_request, ok, sent_invoice
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

JANE = {
    "account_holder": "Jane Doe",
    "sort_code": "10-88-00",
    "account_number": "00012345",
    "confirm": "yes",
}
GOOD_CARD = {
    "cardholder_name": "Jane Doe",
    "card_number": "4000 0566 5566 5556",
    "expiry": "03/30",
    "cvc": "737",
}
DECLINED_CARD = {**GOOD_CARD, "card_number": "4100 0000 0000 0019"}
AFTER_SIGNING = "https://app.example/after-signing?step=2"


@pytest.fixture(scope="module")
def admin(private: tuple[SandboxAdmin, str]) -> SandboxAdmin:
    return private[0]


@pytest.fixture
def browser() -> Any:
    with httpx.Client(follow_redirects=False, timeout=30) as client:
        yield client


def new_mandate(
    admin: SandboxAdmin, tokens: BillerTokens, redirect_url: str | None = AFTER_SIGNING, **fields
) -> dict[str, Any]:
    customer = new_customer(admin, tokens, **fields)
    body = {"redirectUrl": redirect_url} if redirect_url else {}
    path = f"/customers/{customer['id']}/directdebitmandates"
    return ok(admin.api.put(path, headers=tokens.headers, json=body))


def mandate_now(admin: SandboxAdmin, tokens: BillerTokens, mandate_id: str) -> dict[str, Any]:
    return get(admin, tokens, f"/customers/directdebitmandates/{mandate_id}")


def field_error(html: str, field: str) -> str | None:
    found = re.search(rf"<p class='error' id='{field}-error' role='alert'>([^<]*)</p>", html)
    return html_unescape(found.group(1)) if found else None


def value_of(html: str, field: str) -> str:
    found = re.search(rf"name='{field}' value='([^']*)'", html)
    assert found, field
    return found.group(1)


# --- mandate signing --------------------------------------------------------------------------


def test_the_mandate_page_shows_who_collects_from_whom(admin, biller_token, browser) -> None:
    mandate = new_mandate(admin, biller_token, name="Acme <Trading> & Co")
    page = browser.get(mandate["url"])
    assert page.status_code == 200
    assert "Set up a Direct Debit" in page.text
    assert "Acme &lt;Trading&gt; &amp; Co" in page.text
    assert "<Trading>" not in page.text
    for name in ("account_holder", "sort_code", "account_number", "confirm"):
        assert f"name='{name}'" in page.text
    assert "00012345" in page.text  # the documented test accounts are listed


def test_signing_moves_the_mandate_to_pending_and_redirects(admin, biller_token, browser) -> None:
    mandate = new_mandate(admin, biller_token)
    signed = browser.post(mandate["url"], data=JANE)
    assert signed.status_code == 303
    assert signed.headers["location"] == AFTER_SIGNING
    after = mandate_now(admin, biller_token, mandate["id"])
    assert after["status"] == "PENDING"
    assert after["statusReasonCode"] == "PENDING_ACTIVATION"
    assert after["bankAccountNumber"] == "****2345"
    assert after["authorisationTime"] is not None
    customer = get(admin, biller_token, f"/customers/{after['customerId']}")
    assert customer["directDebitMandate"]["signedTime"] == after["authorisationTime"]


def test_without_a_redirect_url_a_done_page_is_shown(admin, biller_token, browser) -> None:
    mandate = new_mandate(admin, biller_token, redirect_url=None)
    signed = browser.post(mandate["url"], data=JANE)
    assert signed.status_code == 200
    assert "id='done'" in signed.text and "Direct Debit set up" in signed.text
    assert mandate_now(admin, biller_token, mandate["id"])["status"] == "PENDING"


def test_popup_mode_never_redirects(admin, biller_token, browser) -> None:
    mandate = new_mandate(admin, biller_token)
    page = browser.get(mandate["url"], params={"mode": "popup"})
    assert value_of(page.text, "mode") == "popup"
    signed = browser.post(mandate["url"], data={**JANE, "mode": "popup"})
    assert signed.status_code == 200
    assert "You can close this window" in signed.text
    assert mandate_now(admin, biller_token, mandate["id"])["status"] == "PENDING"


@pytest.mark.parametrize("sort_code", ["108800", "10 88 00", " 10-88-00 "])
def test_sort_codes_are_accepted_as_people_type_them(
    admin, biller_token, browser, sort_code
) -> None:
    mandate = new_mandate(admin, biller_token)
    signed = browser.post(mandate["url"], data={**JANE, "sort_code": sort_code})
    assert signed.status_code == 303


def test_each_documented_account_is_kept_on_the_mandate(
    admin, biller_token, browser, db: sessionmaker[Session]
) -> None:
    signed: dict[str, str] = {}
    for account in BANK_ACCOUNTS:
        mandate = new_mandate(admin, biller_token)
        form = {**JANE, "sort_code": account.sort_code, "account_number": account.account_number}
        assert browser.post(mandate["url"], data=form).status_code == 303
        signed[mandate["id"]] = account.kind
    other = new_mandate(admin, biller_token)
    browser.post(other["url"], data={**JANE, "account_number": "12345678"})
    signed[other["id"]] = "SUCCEEDS"  # any other valid-looking account succeeds
    with db() as session:
        rows = session.scalars(select(Mandate).where(Mandate.id.in_(signed))).all()
        assert {row.id: row.test_account_kind for row in rows} == signed


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("account_holder", "", "Enter the account holder's name"),
        ("account_holder", "   ", "Enter the account holder's name"),
        ("account_holder", "J" * 101, "at most 100 characters"),
        ("account_holder", "12345", "must contain letters"),
        ("sort_code", "", "six digits"),
        ("sort_code", "10-88-0", "six digits"),
        ("sort_code", "10/88/00", "six digits"),
        ("sort_code", "ab-cd-ef", "six digits"),
        ("account_number", "", "eight digits"),
        ("account_number", "0001234", "eight digits"),
        ("account_number", "000123456", "eight digits"),
        ("account_number", "0001234x", "eight digits"),
        ("confirm", "", "only person needed to authorise"),
    ],
)
def test_bad_bank_details_re_render_the_form_and_change_nothing(
    admin, biller_token, browser, field, value, message
) -> None:
    mandate = new_mandate(admin, biller_token)
    page = browser.post(mandate["url"], data={**JANE, field: value})
    assert page.status_code == 422
    error = field_error(page.text, field)
    assert error is not None and message in error
    others = [name for name in JANE if name != field]
    assert all(field_error(page.text, name) is None for name in others)
    if field != "account_holder":
        assert value_of(page.text, "account_holder") == "Jane Doe"  # what was typed is kept
    after = mandate_now(admin, biller_token, mandate["id"])
    assert after["status"] == "CREATED"
    assert after["bankAccountNumber"] is None and after["authorisationTime"] is None


def test_what_the_form_echoes_is_escaped(admin, biller_token, browser) -> None:
    mandate = new_mandate(admin, biller_token)
    typed = {**JANE, "account_holder": "Jo '><b>", "sort_code": "'><script>x</script>"}
    page = browser.post(mandate["url"], data=typed)
    assert page.status_code == 422
    assert "<script>x" not in page.text and "<b>" not in page.text
    assert "value='&#x27;&gt;&lt;script&gt;x&lt;/script&gt;'" in page.text
    assert "value='Jo &#x27;&gt;&lt;b&gt;'" in page.text


def test_a_signed_mandate_cannot_be_signed_again(admin, biller_token, browser) -> None:
    mandate = new_mandate(admin, biller_token)
    browser.post(mandate["url"], data=JANE)
    first = mandate_now(admin, biller_token, mandate["id"])
    page = browser.get(mandate["url"])
    assert page.status_code == 200
    assert "already been signed" in page.text and "name='sort_code'" not in page.text
    again = browser.post(mandate["url"], data={**JANE, "account_number": "99998888"})
    assert again.status_code == 409
    assert "already been signed" in again.text
    assert mandate_now(admin, biller_token, mandate["id"]) == first


def test_a_cancelled_mandate_says_so(admin, biller_token, browser) -> None:
    mandate = new_mandate(admin, biller_token)
    path = f"/customers/directdebitmandates/{mandate['id']}:cancel"
    ok(admin.api.put(path, headers=biller_token.headers))
    assert "has been cancelled" in browser.get(mandate["url"]).text
    refused = browser.post(mandate["url"], data=JANE)
    assert refused.status_code == 409
    assert mandate_now(admin, biller_token, mandate["id"])["status"] == "CANCELLED"


@pytest.mark.parametrize("mandate_id", ["NoSuchMandate12345", "x" * 200, "%00"])
def test_an_unknown_mandate_is_a_404_page(admin, browser, mandate_id) -> None:
    url = f"{admin.root}/dd-mandate/{mandate_id}"
    assert browser.get(url).status_code == 404
    posted = browser.post(url, data=JANE)
    assert posted.status_code == 404
    assert "No such Direct Debit mandate" in posted.text


# --- card payment -----------------------------------------------------------------------------


def payments_of(db: sessionmaker[Session], pr_id: str) -> list[Payment]:
    with db() as session:
        return list(session.scalars(select(Payment).where(Payment.payment_request_id == pr_id)))


def sent_request(admin, tokens, customer_id: str, **fields) -> dict[str, Any]:
    pr = new_payment_request(admin, tokens, customer_id, **fields)
    body = {"collectionMethod": "ONE_TIME_PAYMENT"}
    return ok(
        admin.api.put(f"/payment_requests/{pr['id']}:activate", headers=tokens.headers, json=body)
    )


@pytest.fixture
def customer(admin, biller_token) -> dict[str, Any]:
    return new_customer(admin, biller_token)


def test_the_pay_page_shows_the_request(admin, biller_token, browser, customer) -> None:
    pr = sent_request(
        admin, biller_token, customer["id"], description="Gardening <June>", totalAmount=1234.5
    )
    page = browser.get(pr["paymentLink"]["url"])
    assert page.status_code == 200
    assert f"<dd id='number'>{pr['paymentRequestNo']}</dd>" in page.text
    assert "<dd id='description'>Gardening &lt;June&gt;</dd>" in page.text
    assert "<dd id='amount'>£1,234.50</dd>" in page.text
    assert "Pay £1,234.50" in page.text


def test_a_test_card_pays_a_standalone_request(admin, biller_token, browser, customer, db) -> None:
    pr = sent_request(admin, biller_token, customer["id"], totalAmount=100.1)
    paid = browser.post(pr["paymentLink"]["url"], data=GOOD_CARD)
    assert paid.status_code == 200 and "id='done'" in paid.text
    assert "£100.10 paid" in paid.text
    after = get(admin, biller_token, f"/payment_requests/{pr['id']}")
    assert after["status"] == "PAID"
    assert after["paidAmount"] == 100.1 and after["dueAmount"] == 0
    assert after["paidTime"] is not None
    [payment] = payments_of(db, pr["id"])
    assert (payment.payment_method, payment.status) == ("CARD", "SUCCESS")
    assert payment.amount == Decimal("100.10") and payment.invoice_id is None
    cards = get(admin, biller_token, f"/customers/{customer['id']}/cards_on_file")
    assert cards["cardsOnFile"] == []  # not saved unless asked


def test_paying_an_invoice_request_pays_the_invoice(
    admin, biller_token, browser, customer, db
) -> None:
    invoice = sent_invoice(admin, biller_token, customer["id"])
    [embedded] = invoice["paymentRequests"]
    paid = browser.post(embedded["paymentLink"]["url"], data=GOOD_CARD)
    assert paid.status_code == 200
    after = get(admin, biller_token, f"/invoices/{invoice['id']}")
    assert after["status"] == "PAID"
    assert after["paidAmount"] == invoice["totalAmount"] == "71.96"
    assert after["paymentRequests"][0]["status"] == "PAID"
    [payment] = payments_of(db, embedded["id"])
    assert payment.invoice_id == invoice["id"] and payment.amount == Decimal("71.96")


def test_the_card_can_be_saved_for_future_payments(admin, biller_token, browser, customer) -> None:
    pr = sent_request(admin, biller_token, customer["id"])
    browser.post(pr["paymentLink"]["url"], data={**GOOD_CARD, "save_card": "yes"})
    [card] = get(admin, biller_token, f"/customers/{customer['id']}/cards_on_file")["cardsOnFile"]
    assert (card["brand"], card["last4"], card["status"]) == ("VISA", "5556", "ACTIVE")
    assert (card["expiryMonth"], card["expiryYear"]) == (3, 2030)


def test_a_declined_card_is_refused_and_nothing_changes(
    admin, biller_token, browser, customer, db
) -> None:
    pr = sent_request(admin, biller_token, customer["id"])
    page = browser.post(pr["paymentLink"]["url"], data={**DECLINED_CARD, "save_card": "yes"})
    assert page.status_code == 402
    assert "Your card was declined. No payment was taken." in page.text
    assert "737" not in re.sub(r"<table.*</table>", "", page.text)  # the CVC is not echoed
    after = get(admin, biller_token, f"/payment_requests/{pr['id']}")
    assert after["status"] == "UNPAID" and after["paidAmount"] == 0
    assert payments_of(db, pr["id"]) == []
    assert (
        get(admin, biller_token, f"/customers/{customer['id']}/cards_on_file")["cardsOnFile"] == []
    )


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("cardholder_name", "", "Enter the name on the card"),
        ("cardholder_name", "J" * 101, "at most 100 characters"),
        ("card_number", "", "valid card number"),
        ("card_number", "4000 0566 5566 5557", "valid card number"),  # fails the Luhn check
        ("card_number", "4000-0566-abcd-5556", "valid card number"),
        ("card_number", "4242 4242 4242 4242", "accepts only its test cards"),
        ("expiry", "", "MM/YY"),
        ("expiry", "13/30", "MM/YY"),
        ("expiry", "0330", "MM/YY"),
        ("expiry", "01/20", "has expired"),
        ("expiry", "04/30", "does not match the card"),
        ("cvc", "", "3 or 4 digit"),
        ("cvc", "73a", "3 or 4 digit"),
        ("cvc", "738", "does not match the card"),
    ],
)
def test_bad_card_details_re_render_the_form_and_change_nothing(
    admin, biller_token, browser, customer, db, field, value, message
) -> None:
    pr = sent_request(admin, biller_token, customer["id"])
    page = browser.post(pr["paymentLink"]["url"], data={**GOOD_CARD, field: value})
    assert page.status_code == 422
    error = field_error(page.text, field)
    assert error is not None and message in error
    assert all(field_error(page.text, name) is None for name in GOOD_CARD if name != field)
    assert get(admin, biller_token, f"/payment_requests/{pr['id']}")["status"] == "UNPAID"
    assert payments_of(db, pr["id"]) == []


def test_the_request_s_redirect_url_is_followed(admin, biller_token, browser, customer) -> None:
    pr = sent_request(
        admin, biller_token, customer["id"], redirectUrl="https://shop.example/thanks"
    )
    paid = browser.post(pr["paymentLink"]["url"], data=GOOD_CARD)
    assert paid.status_code == 303
    assert paid.headers["location"] == "https://shop.example/thanks"


def test_a_paid_request_cannot_be_paid_again(admin, biller_token, browser, customer, db) -> None:
    pr = sent_request(admin, biller_token, customer["id"])
    browser.post(pr["paymentLink"]["url"], data=GOOD_CARD)
    page = browser.get(pr["paymentLink"]["url"])
    assert page.status_code == 200
    assert "has already been paid" in page.text and "card_number" not in page.text
    again = browser.post(pr["paymentLink"]["url"], data=GOOD_CARD)
    assert again.status_code == 409 and "has already been paid" in again.text
    assert len(payments_of(db, pr["id"])) == 1


@pytest.mark.parametrize(
    ("action", "message"), [("void", "has been cancelled"), (None, "has not been sent yet")]
)
def test_void_and_draft_requests_cannot_be_paid(
    admin, biller_token, browser, customer, db, action, message
) -> None:
    pr = new_payment_request(admin, biller_token, customer["id"])
    if action:
        ok(admin.api.put(f"/payment_requests/{pr['id']}:{action}", headers=biller_token.headers))
    assert message in browser.get(pr["paymentLink"]["url"]).text
    refused = browser.post(pr["paymentLink"]["url"], data=GOOD_CARD)
    assert refused.status_code == 409 and message in refused.text
    assert payments_of(db, pr["id"]) == []


def test_a_request_being_collected_by_direct_debit_cannot_be_paid(
    admin, biller_token, browser, customer, db
) -> None:
    pr = sent_request(admin, biller_token, customer["id"])
    with db() as session, session.begin():
        row = session.get(PaymentRequest, pr["id"])
        assert row is not None
        row.status = "SUBMITTED"  # a direct debit in flight (the simulation's state)
    assert "being collected by Direct Debit" in browser.get(pr["paymentLink"]["url"]).text
    assert browser.post(pr["paymentLink"]["url"], data=GOOD_CARD).status_code == 409
    assert payments_of(db, pr["id"]) == []


def test_an_unknown_payment_request_is_a_404_page(admin, browser) -> None:
    url = f"{admin.root}/pay/00000000-0000-0000-0000-000000000000"
    assert browser.get(url).status_code == 404
    posted = browser.post(url, data=GOOD_CARD)
    assert posted.status_code == 404 and "No such payment request" in posted.text
