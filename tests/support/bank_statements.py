"""Billers whose bank statements the sandbox writes, and the sandbox's own truth about them.

A :class:`BankBiller` has customers, invoices sent with a payment link and standalone payment
requests (neither collected by direct debit, so their customers may pay by bank transfer), and a
credential block. After the sandbox's clock moves on, its bank-statement export
(``/_sandbox/exports/bank_statement.csv``) shows the transfers its customers made.

The truth of what each transfer pays is the sandbox's, not billops': :func:`recording_quotes`
wraps the sandbox's own ``_quote`` (which decides, per document, how its customer quoted it and
how much they sent) while the export is written, so a test knows for each transfer line which
document it was for and in which style, and :func:`expected_payments` says what a correct import
records from that: the documents quoted in full, partial payments of invoices, the due part of
overpayments; nothing for typos, missing references or numbers the bank cut short.
"""

from __future__ import annotations

import random
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Any

import httpx
import pytest

from tests.support.sandbox_admin import SandboxAdmin

TRADES = ("Dental", "Bakery", "Joinery", "Plumbing", "Florists", "Veterinary", "Accountancy")
TOWNS = ("Harbour", "Oakridge", "Brightwell", "Kingsmead", "Ashford", "Riverside", "Northgate")
PENNY = Decimal("0.01")


@dataclass
class BankBiller:
    """A biller whose customers pay by bank transfer: its block, id, and documents."""

    block: str
    biller_id: str
    api: httpx.Client
    documents: dict[str, dict[str, Any]] = field(default_factory=dict)  # number -> resource

    def refresh(self) -> dict[str, dict[str, Any]]:
        """Every document as the service holds it now, by number."""
        found: dict[str, dict[str, Any]] = {}
        for number, doc in self.documents.items():
            path = "/invoices" if number.startswith("INV") else "/payment_requests"
            answer = self.api.get(f"{path}/{doc['id']}")
            assert answer.status_code == 200, answer.text
            found[number] = answer.json()
        return found

    def paid(self) -> dict[str, Decimal]:
        """What is paid on each document now (a paid payment request counts its total)."""
        now = self.refresh()
        return {number: paid_amount(doc) for number, doc in now.items()}


def paid_amount(doc: dict[str, Any]) -> Decimal:
    if "invoiceNo" in doc:
        return Decimal(str(doc.get("paidAmount") or 0)).quantize(PENNY)
    if doc["status"] in ("PAID", "SETTLED"):
        return Decimal(str(doc["totalAmount"])).quantize(PENNY)
    return Decimal(str(doc.get("paidAmount") or 0)).quantize(PENNY)


def _ok(answer: httpx.Response, status: int = 200) -> dict[str, Any]:
    assert answer.status_code == status, f"{answer.request.url}: {answer.text}"
    return dict(answer.json()) if answer.content else {}


def make_bank_biller(
    admin: SandboxAdmin, *, seed: int, invoices: int = 20, requests: int = 5, customers: int = 4
) -> BankBiller:
    """A biller with customers, sent invoices and standalone payment requests (see the module
    docstring); amounts drawn from ``seed``."""
    from blocks import BillerCredentials

    rng = random.Random(seed)
    tokens = admin.connect_biller(f"{rng.choice(TOWNS)} Supplies {seed} Ltd")
    api = httpx.Client(
        base_url=f"{admin.root}/api",
        headers=tokens.headers,
        timeout=30,
        event_hooks=admin.api.event_hooks,
    )
    people = []
    for number in range(customers):
        name = f"{rng.choice(TOWNS)} {rng.choice(TRADES)} {number} Ltd"
        person = {"firstName": "Pat", "email": f"pat{number}@example.com"}
        customer = {"name": name, "people": [person]}
        people.append(_ok(api.post("/customers", json=customer), 201)["id"])
    biller = BankBiller(f"bank-{uuid.uuid4().hex[:10]}", tokens.biller_id, api)
    for n in range(invoices):
        amount = rng.randint(2_000, 90_000) / 100
        item = {"description": "Services", "quantity": 1, "unitAmount": amount, "taxRate": 0}
        invoice_body = {"customer": {"id": people[n % customers]}, "items": [item]}
        invoice = _ok(api.post("/invoices", json=invoice_body), 201)
        sent = _ok(
            api.put(
                f"/invoices/{invoice['id']}:activate", json={"collectionMethod": "ONE_TIME_PAYMENT"}
            )
        )
        biller.documents[sent["invoiceNo"]] = sent
    for n in range(requests):
        request_body: dict[str, Any] = {
            "customer": {"id": people[n % customers]},
            "description": "Consulting",
            "totalAmount": rng.randint(1_000, 50_000) / 100,
            "currencyCode": "GBP",
        }
        request = _ok(api.post("/payment_requests", json=request_body), 201)
        sent = _ok(
            api.put(
                f"/payment_requests/{request['id']}:activate",
                json={"collectionMethod": "ONE_TIME_PAYMENT"},
            )
        )
        biller.documents[sent["paymentRequestNo"]] = sent
    BillerCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=tokens.app.client_id,
        client_secret=tokens.app.client_secret,
        refresh_token=tokens.refresh_token,
    ).save(biller.block)
    return biller


def statement(admin: SandboxAdmin, biller_id: str, layout: str, start: date, end: date) -> bytes:
    """The biller's bank statement from ``start`` to ``end`` in one of the sandbox's layouts."""
    answer = admin.http.get(
        "/_sandbox/exports/bank_statement.csv",
        params={
            "billerId": biller_id,
            "from": start.isoformat(),
            "to": end.isoformat(),
            "layout": layout,
        },
    )
    assert answer.status_code == 200, answer.text
    return answer.content


@dataclass(frozen=True)
class Quote:
    """One transfer as the sandbox drew it: the document, how it was quoted, what was sent."""

    number: str
    due: Decimal
    style: str
    partner: str | None
    partner_due: Decimal | None
    reference: str
    amount: Decimal


@dataclass
class Truth:
    """What the sandbox wrote into the exports made inside :func:`recording_truth`: how each
    document was quoted (``quotes``), and the lines of each export (``lines``: date, payer,
    reference, amount, category — ``INCOME`` for a customer, ``PAYOUT`` for the service)."""

    quotes: list[Quote] = field(default_factory=list)
    lines: list[tuple[date, str, str, Decimal, str]] = field(default_factory=list)

    def transfers(self) -> set[str]:
        """``reference|amount`` of every customer transfer in the exports."""
        return {
            f"{ref.strip()}|{amount}"
            for _d, _p, ref, amount, kind in self.lines
            if kind == "INCOME"
        }

    def payouts(self) -> int:
        return sum(1 for line in self.lines if line[4] == "PAYOUT")


@contextmanager
def recording_truth(monkeypatch: pytest.MonkeyPatch) -> Iterator[Truth]:
    """Spy on the sandbox's own drawing of transfers and statement lines (see the module
    docstring); the sandbox serves from a thread of this process, so its calls are seen here."""
    from sandbox.exports import files

    truth = Truth()
    quotes = truth.quotes
    original = files._quote
    original_statement = files.statement

    def lines(session: Any, biller: Any, start: date, end: date) -> Any:
        found = original_statement(session, biller, start, end)
        truth.lines.extend(
            (t.day, t.counterparty, t.reference, t.amount, t.category) for t in found
        )
        return found

    def spy(rng: random.Random, doc: Any, style: str, partner: Any) -> tuple[str, Decimal]:
        reference, amount = original(rng, doc, style, partner)
        quotes.append(
            Quote(
                doc.number,
                doc.amount,
                style,
                partner.number if partner is not None else None,
                partner.amount if partner is not None else None,
                reference,
                amount,
            )
        )
        return reference, amount

    with monkeypatch.context() as patched:
        patched.setattr(files, "_quote", spy)
        patched.setattr(files, "statement", lines)
        yield truth


def expected_payments(
    quotes: list[Quote], open_due: dict[str, Decimal], *, lines: set[str] | None = None
) -> dict[str, Decimal]:
    """What a correct import of the transfers records on each document (see the module
    docstring): documents not open (``open_due``) take nothing; ``lines`` limits the transfers
    to those whose (reference, amount) the statement holds."""
    expected: dict[str, Decimal] = {}
    drawn = {quote.number: quote for quote in quotes}  # each export draws every document again
    for quote in drawn.values():
        if lines is not None and f"{quote.reference.strip()}|{quote.amount}" not in lines:
            continue
        for number, amount in _paid_by(quote).items():
            due = open_due.get(number)
            if due is None or due <= 0:
                continue
            expected[number] = expected.get(number, Decimal("0")) + min(amount, due)
    return expected


def _paid_by(quote: Quote) -> dict[str, Decimal]:
    request = quote.number.startswith("PR")
    whole = {quote.number: quote.due}
    if quote.style in ("exact", "lower", "spaced", "no_hyphen", "overpaid"):
        return whole
    if quote.style == "two_in_one" and quote.partner is not None:
        return {**whole, quote.partner: quote.partner_due or Decimal("0")}
    if quote.style == "partial":
        return {} if request else {quote.number: quote.amount}
    if quote.style == "cut_at_18":
        return whole if quote.number in quote.reference.split() else {}
    return {}  # typo, no_reference: left for a person
