"""Webhook signatures and payloads: a REAL delivery from the sandbox to a local receiver verifies;
a tampered body, a wrong secret and a stale timestamp fail; both payload shapes parse."""

from __future__ import annotations

import base64
import hashlib
import hmac
import threading
from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from billing_api._auth import StaticTokenAuth
from billing_api._client import BillingClient
from billing_api.types import CustomerEvent, InvoiceEvent, PaymentEvent, UnknownEvent
from billing_api.webhooks import (
    WebhookPayloadError,
    WebhookSignatureError,
    parse_event,
    verify_signature,
)
from tests.billing_api.fixtures_resources import unique
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret

# The contract's worked example (components.schemas.WebhookDelivery).
EXAMPLE_SECRET = "whsec_3nP0mQ8dV2sX7kL1aZ9yT4bR6cF5hJ0g"
EXAMPLE_BODY = (
    b'{"type":"INVOICE_PAID","eventId":"7d9f3c2a-1b4e-4f6a-9c8d-2e5f7a1b3c4d",'
    b'"billerId":"b-123","invoiceId":"inv-1"}'
)
EXAMPLE_HEADERS = {
    "adfin-webhook-signature": "na34aBVbmAOXMidx92UY93EsMr2jPEUFML5pWIzB9fk=",
    "adfin-webhook-signature-timestamp": "2025-06-01T09:30:00Z",
}
EXAMPLE_TIME = datetime(2025, 6, 1, 9, 30, tzinfo=UTC)


@dataclass
class Delivery:
    headers: dict[str, str]
    body: bytes


@dataclass
class Receiver:
    url: str
    received: list[Delivery] = field(default_factory=list)
    arrived: threading.Event = field(default_factory=threading.Event)

    def first(self, timeout: float = 15.0) -> Delivery:
        assert self.arrived.wait(timeout), "no webhook delivery arrived"
        return self.received[0]


@pytest.fixture
def receiver() -> Iterator[Receiver]:
    holder: list[Receiver] = []

    class Handler(BaseHTTPRequestHandler):
        def do_POST(self) -> None:  # noqa: N802 - http.server's naming
            body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
            holder[0].received.append(Delivery(dict(self.headers.items()), body))
            holder[0].arrived.set()
            self.send_response(204)
            self.end_headers()

        def log_message(self, *args: object) -> None:
            """No access log in the test output."""

    server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    holder.append(Receiver(f"http://127.0.0.1:{server.server_address[1]}/hooks"))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield holder[0]
    server.shutdown()
    server.server_close()


@pytest.fixture
def delivery(sandbox: str, admin: SandboxAdmin, receiver: Receiver) -> tuple[Delivery, str, str]:
    """A real signed delivery: (what arrived, the signing secret, the customer it is about)."""
    tokens = admin.connect_biller(unique("Webhook Biller"))
    platform = admin.platform_token(tokens.app)
    with BillingClient(f"{sandbox}/api", StaticTokenAuth(platform.access_token)) as apps:
        apps.webhooks.create(tokens.app.client_id, url=receiver.url, events=["customer"])
        secret = apps.webhooks.generate_signing_secret(tokens.app.client_id).secret_key
    register_secret(secret.get_secret_value())
    with BillingClient(f"{sandbox}/api", StaticTokenAuth(tokens.access_token)) as client:
        customer = client.customers.create(name=unique("Hooked"))
    return receiver.first(), secret.get_secret_value(), customer.id


def test_a_real_delivery_verifies_and_parses(delivery: tuple[Delivery, str, str]) -> None:
    arrived, secret, customer_id = delivery

    verify_signature(arrived.body, arrived.headers, secret)
    event = parse_event(arrived.body, arrived.headers)

    assert isinstance(event, CustomerEvent) and event.type == "CUSTOMER_CREATED"
    assert event.customer_id == event.entity_id == customer_id
    assert event.event_id == arrived.headers["adfin-webhook-id"]


def test_a_tampered_body_fails(delivery: tuple[Delivery, str, str]) -> None:
    arrived, secret, customer_id = delivery
    tampered = arrived.body.replace(customer_id.encode(), b"someone-else")
    assert tampered != arrived.body

    with pytest.raises(WebhookSignatureError, match="does not match"):
        verify_signature(tampered, arrived.headers, secret)


def test_a_wrong_secret_fails(delivery: tuple[Delivery, str, str]) -> None:
    arrived, secret, _ = delivery
    with pytest.raises(WebhookSignatureError, match="does not match") as caught:
        verify_signature(arrived.body, arrived.headers, secret[:-2] + "xx")
    assert secret not in str(caught.value)


def test_a_stale_timestamp_fails(delivery: tuple[Delivery, str, str]) -> None:
    arrived, secret, _ = delivery
    later = datetime.now(UTC) + timedelta(seconds=301)

    with pytest.raises(WebhookSignatureError, match="outside the 300 s window"):
        verify_signature(arrived.body, arrived.headers, secret, now=lambda: later)
    # A wider window accepts it: the window is the receiver's choice.
    verify_signature(
        arrived.body, arrived.headers, secret, tolerance=timedelta(seconds=400), now=lambda: later
    )


def test_the_contract_example_verifies_with_either_header_case() -> None:
    shouted = {key.upper(): value for key, value in EXAMPLE_HEADERS.items()}
    verify_signature(EXAMPLE_BODY, EXAMPLE_HEADERS, EXAMPLE_SECRET, now=lambda: EXAMPLE_TIME)
    verify_signature(EXAMPLE_BODY, shouted, EXAMPLE_SECRET, now=lambda: EXAMPLE_TIME)


def test_a_base64_secret_is_also_tried_decoded() -> None:
    key = bytes(range(32))
    secret = base64.b64encode(key).decode()
    stamp = "2025-06-01T09:30:00.125Z"
    mac = hmac.new(key, EXAMPLE_BODY + stamp.encode(), hashlib.sha256).digest()
    headers = {
        "adfin-webhook-signature": base64.b64encode(mac).decode(),
        "adfin-webhook-signature-timestamp": stamp,
    }
    verify_signature(EXAMPLE_BODY, headers, secret, now=lambda: EXAMPLE_TIME)


@pytest.mark.parametrize(
    ("headers", "reason"),
    [
        ({"adfin-webhook-signature-timestamp": "2025-06-01T09:30:00Z"}, "signature is missing"),
        ({"adfin-webhook-signature": EXAMPLE_HEADERS["adfin-webhook-signature"]}, "timestamp"),
        ({**EXAMPLE_HEADERS, "adfin-webhook-signature": "not base64!"}, "not base64"),
    ],
)
def test_malformed_headers_say_what_is_wrong(headers: dict[str, str], reason: str) -> None:
    with pytest.raises(WebhookSignatureError, match=reason):
        verify_signature(EXAMPLE_BODY, headers, EXAMPLE_SECRET, now=lambda: EXAMPLE_TIME)


def test_a_zone_less_timestamp_is_utc() -> None:
    stamp = "2024-11-07T05:02:24.422"
    mac = hmac.new(EXAMPLE_SECRET.encode(), EXAMPLE_BODY + stamp.encode(), hashlib.sha256)
    headers = {
        "adfin-webhook-signature": base64.b64encode(mac.digest()).decode(),
        "adfin-webhook-signature-timestamp": stamp,
    }
    at = datetime(2024, 11, 7, 5, 4, tzinfo=UTC)
    verify_signature(EXAMPLE_BODY, headers, EXAMPLE_SECRET, now=lambda: at)


def test_both_payload_shapes_parse() -> None:
    documented = parse_event(EXAMPLE_BODY)
    newer = parse_event(
        {"eventId": "e-2", "type": "PAYMENT_SENT", "sourceEntityId": "pay-1", "billerId": "b-1"}
    )
    without_id = parse_event(
        b'{"type":"INVOICE_ACTIVATED","billerId":"b-1","invoiceId":"inv-9"}',
        {"Adfin-Webhook-Id": "from-header", "Adfin-Webhook-Type": "invoice"},
    )

    assert isinstance(documented, InvoiceEvent) and documented.invoice_id == "inv-1"
    assert isinstance(newer, PaymentEvent) and newer.payment_id == newer.entity_id == "pay-1"
    assert isinstance(without_id, InvoiceEvent) and without_id.event_id == "from-header"


def test_an_unknown_kind_is_kept_whole() -> None:
    event = parse_event(b'{"type":"REFUND_ISSUED","eventId":"e","billerId":"b","refundId":"r"}')
    assert isinstance(event, UnknownEvent)
    assert event.model_extra == {"refundId": "r"}


@pytest.mark.parametrize(
    ("body", "reason"),
    [
        (b"{not json", "not JSON"),
        (b"[1, 2]", "not a JSON object"),
        (b'{"type":"INVOICE_PAID","eventId":"e","billerId":"b"}', "invoiceId"),
    ],
)
def test_unreadable_payloads_say_what_is_wrong(body: bytes, reason: str) -> None:
    with pytest.raises(WebhookPayloadError, match=reason):
        parse_event(body)
