"""A person uses the hosted pages in a real browser (Debian's chromium via Playwright): signs a
Direct Debit mandate and is sent back to the customer's ``redirectUrl``; pays a payment request
with the test card.

A mandate's ``redirectUrl`` must be https (the contract), so the loopback receiver standing in
for the biller's app speaks TLS with a certificate made for the test; the browser context is told
to accept it.
"""

from __future__ import annotations

import ssl
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from tests.support.billing import get, new_customer, new_payment_request, ok
from tests.support.browser import chromium_browser
from tests.support.loopback import LoopbackReceiver, loopback_receiver
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.tls import self_signed

pytestmark = pytest.mark.browser


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    with chromium_browser() as chromium:
        yield chromium


def _self_signed(directory: Path) -> ssl.SSLContext:
    """A server TLS context with a one-day certificate for 127.0.0.1."""
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(*self_signed(directory))
    return context


def _https(receiver: LoopbackReceiver, context: ssl.SSLContext) -> str:
    """Serve the receiver over TLS (its socket wrapped in place; the handshake happens in the
    request's thread) and return its https callback address."""
    server = receiver._server
    server.socket = context.wrap_socket(
        server.socket, server_side=True, do_handshake_on_connect=False
    )
    return receiver.redirect_uri.replace("http://", "https://", 1)


def test_person_signs_a_mandate_and_returns_to_the_biller_s_app(
    browser, admin: SandboxAdmin, biller_token, tmp_path
) -> None:
    pytest.importorskip("cryptography")
    customer = new_customer(admin, biller_token, name="Browser Customer Ltd")
    with loopback_receiver() as receiver:
        callback = _https(receiver, _self_signed(tmp_path)) + "?signed=yes"
        mandate = ok(
            admin.api.put(
                f"/customers/{customer['id']}/directdebitmandates",
                headers=biller_token.headers,
                json={"redirectUrl": callback},
            )
        )
        context = browser.new_context(ignore_https_errors=True)
        page = context.new_page()
        page.goto(mandate["url"])
        assert page.title() == "Set up a Direct Debit"
        page.get_by_label("Account holder name").fill("Jane Doe")
        page.get_by_label("Sort code").fill("10-88-00")
        page.get_by_label("Account number").fill("00012345")
        page.get_by_label("I am the account holder").check()
        page.get_by_role("button", name="Set up Direct Debit").click()
        page.wait_for_selector("#done")
        page.screenshot(path=str(tmp_path / "after-signing.png"))
        context.close()
        assert receiver.arrived.wait(5)
    assert receiver.received[0] == {"signed": "yes"}
    after = get(admin, biller_token, f"/customers/directdebitmandates/{mandate['id']}")
    assert after["status"] == "PENDING"
    assert after["bankAccountNumber"] == "****2345"


def test_person_pays_a_payment_request_with_the_test_card(
    browser, admin: SandboxAdmin, biller_token
) -> None:
    customer = new_customer(admin, biller_token)
    pr = new_payment_request(admin, biller_token, customer["id"], totalAmount=42.5)
    body = {"collectionMethod": "ONE_TIME_PAYMENT"}
    path = f"/payment_requests/{pr['id']}:activate"
    ok(admin.api.put(path, headers=biller_token.headers, json=body))
    page = browser.new_page()
    page.goto(pr["paymentLink"]["url"])
    page.get_by_label("Name on card").fill("Jane Doe")
    page.get_by_label("Card number").fill("4000 0566 5566 5556")
    page.get_by_label("Expiry date (MM/YY)").fill("03/30")
    page.get_by_label("Security code (CVC)").fill("737")
    page.get_by_label("Save this card for future payments").check()
    page.get_by_role("button", name="Pay £42.50").click()
    page.wait_for_selector("#done")
    page.close()
    assert get(admin, biller_token, f"/payment_requests/{pr['id']}")["status"] == "PAID"
    cards = get(admin, biller_token, f"/customers/{customer['id']}/cards_on_file")
    assert [card["last4"] for card in cards["cardsOnFile"]] == ["5556"]
