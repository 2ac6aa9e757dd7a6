"""Demo data: an app and billers with customers, mandates (one per documented test account),
card payers, catalogues, invoices and payment requests across their statuses, and recurring
schedules, built through the same domain functions the API uses, so that advancing the clock
produces collections, failures, retries and payouts.

Deterministic for a ``seed``: the same seed gives the same names, amounts and shapes (ids and
times differ). Used by ``POST /_sandbox/seed`` and ``billops sandbox serve --seed-demo``.
"""

from __future__ import annotations

import random
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from sandbox.billing import schedules
from sandbox.billing.catalogs import ensure_catalog
from sandbox.billing.invoice_actions import activate, void_invoice
from sandbox.billing.invoices import create_invoice
from sandbox.billing.payment_request_actions import create_payment_request
from sandbox.billing.payment_requests import mark_paid
from sandbox.billing.payments import import_payment
from sandbox.billing.schedule_bodies import RecurringInvoiceBody, RecurringPaymentRequestBody
from sandbox.core import ids, state
from sandbox.core.validation import parse_body
from sandbox.customers.mandates import create_or_get, set_status
from sandbox.customers.records import create_customer
from sandbox.models import Biller
from sandbox.models.billing import Customer, PaymentRequest
from sandbox.oauth import billers as biller_records
from sandbox.oauth import tokens
from sandbox.pages import test_accounts
from sandbox.pages.card_payments import pay_by_card
from sandbox.pages.mandate_signing import BankDetails, sign
from sandbox.webhooks import events

_TRADES = ["Plumbing", "Dental", "Accountancy", "Bakery", "Joinery", "Veterinary", "Florists"]
_TOWNS = ["Leeds", "Bristol", "York", "Norwich", "Bath", "Derby", "Exeter", "Hull"]
_FIRST = ["Amira", "Ben", "Chloe", "Dev", "Ellen", "Femi", "Grace", "Harry", "Isla", "Jack"]
_LAST = ["Patel", "Jones", "Smith", "Okafor", "Brown", "Wilson", "Khan", "Evans", "Taylor"]
# What each customer position gets, in turn: a mandate forced ACTIVE (an established payer), one
# signed on the authorisation page with each documented test account (the simulation then
# activates them and collects, fails, cancels or fails late), a card payer with no mandate, a
# cancelled mandate, and one still awaiting signature.
_FATES: list[tuple[str | None, str | None]] = [
    ("ACTIVE", None),
    ("SIGNED", test_accounts.INSUFFICIENT_FUNDS),
    (None, None),
    ("CANCELLED", None),
    ("SIGNED", test_accounts.LATE_FAILURE),
    ("SIGNED", test_accounts.PAYER_CANCELS),
    ("CREATED", None),
    ("SIGNED", test_accounts.SUCCEEDS),
]
_TEST_CARD = "4000056655665556"


def seed_demo(session: Session, *, billers: int, customers: int, seed: int) -> dict[str, Any]:
    """Create the demo data; returns the app's credentials and what each biller got.

    Ids come from a generator seeded with ``seed`` and the number of billers already there, so a
    fresh sandbox seeded alike gets the same ids, and a second seed call gets new ones."""
    existing = session.scalar(select(func.count()).select_from(Biller)) or 0
    with ids.seeded(f"seed:{seed}:{existing}"):
        return _seed_demo(session, billers=billers, customers=customers, seed=seed)


def _seed_demo(session: Session, *, billers: int, customers: int, seed: int) -> dict[str, Any]:
    rng = random.Random(seed)
    now = state.now(session)
    app, secret = tokens.create_app(session, name="billops demo", redirect_uri=None, now=now)
    created = []
    for number in range(1, billers + 1):
        town = rng.choice(_TOWNS)
        name = f"{town} {rng.choice(_TRADES)} Ltd"
        biller = biller_records.new_biller(name, {"statementName": name[:22].upper()}, now)
        session.add(biller)
        session.flush()
        events.emit(session, biller_id=biller.id, kind="biller", type="BILLER_CREATED", ids={})
        ensure_catalog(session, biller.id, now)
        counts = {"customers": 0, "invoices": 0, "paymentRequests": 0}
        for position in range(customers):
            _seed_customer(session, rng, biller.id, number, position, counts)
        created.append({"billerId": biller.id, "name": name, **counts})
    return {
        "clientId": app.client_id,
        "clientSecret": secret,
        "redirectUri": app.redirect_uri,
        "seed": seed,
        "billers": created,
    }


def _money(rng: random.Random, low: int, high: int) -> Decimal:
    return Decimal(rng.randrange(low * 100, high * 100)) / 100


def _seed_customer(
    session: Session,
    rng: random.Random,
    biller_id: str,
    biller_number: int,
    position: int,
    counts: dict[str, int],
) -> None:
    first, last = rng.choice(_FIRST), rng.choice(_LAST)
    body = {
        "name": f"{first} {last}",
        "externalId": f"CUST-{biller_number}-{position + 1:03d}",
        "people": [
            {
                "firstName": first,
                "lastName": last,
                "email": f"{first}.{last}.{biller_number}{position}@example.com".lower(),
                "isPrimaryContact": True,
                "isIncludedInCommunications": True,
            }
        ],
        "addresses": [
            {
                "addressLine1": f"{position + 1} High Street",
                "city": rng.choice(_TOWNS),
                "postalCode": "AB1 2CD",
                "country": "GB",
            }
        ],
    }
    now = state.now(session)
    customer, _ = create_customer(session, biller_id, body, now)
    counts["customers"] += 1
    fate, account_kind = _FATES[position % len(_FATES)]
    if fate is not None:
        _give_mandate(session, customer, fate, account_kind, now)
    _seed_invoices(
        session,
        rng,
        biller_id,
        customer.id,
        direct_debit=fate in ("ACTIVE", "SIGNED"),
        counts=counts,
    )
    unpaid = _seed_payment_requests(session, rng, biller_id, customer.id, counts)
    if fate is None:  # the card payer pays its open request by card and keeps the card on file
        card = test_accounts.find_card(_TEST_CARD)
        assert card is not None
        pay_by_card(session, unpaid, card, True, state.now(session))
    if position == 0:
        _seed_schedules(session, biller_id, customer.id)


def _give_mandate(
    session: Session, customer: Customer, fate: str, account_kind: str | None, now: datetime
) -> None:
    mandate, _ = create_or_get(session, customer, None, now)
    if fate == "SIGNED":
        account = next(a for a in test_accounts.BANK_ACCOUNTS if a.kind == account_kind)
        details = BankDetails(account.holder, account.sort_code, account.account_number)
        sign(session, mandate, details, now)
    elif fate in ("ACTIVE", "CANCELLED"):
        set_status(mandate, "ACTIVE", None, now)
        if fate == "CANCELLED":
            set_status(mandate, "CANCELLED", "INSTRUCTION_CANCELLED_BY_PAYER", now)


def _seed_schedules(session: Session, biller_id: str, customer_id: str) -> None:
    """A monthly recurring invoice (activated) and a weekly recurring payment request, both
    starting tomorrow, so advancing the clock generates documents."""
    start = (state.now(session).date() + timedelta(days=1)).isoformat()
    invoice_body = {
        "cadence": {"timeUnit": "MONTHS", "frequency": 1, "startDate": start},
        "invoiceDetails": {
            "customer": {"id": customer_id},
            "description": "Monthly maintenance plan",
            "itemsTaxType": "EXCLUSIVE",
            "items": [
                {"description": "Maintenance", "quantity": 1, "unitAmount": 95, "taxRate": 20}
            ],
        },
    }
    monthly = schedules.create(
        session,
        biller_id,
        schedules.RECURRING_INVOICE,
        parse_body(RecurringInvoiceBody, invoice_body),
    )
    schedules.activate(session, schedules.RECURRING_INVOICE, monthly)
    request_body = {
        "cadence": {"timeUnit": "WEEKS", "frequency": 1, "startDate": start},
        "paymentRequestDetails": {
            "customer": {"id": customer_id},
            "description": "Weekly cleaning",
            "amount": 45,
            "currencyCode": "GBP",
        },
    }
    schedules.create(
        session,
        biller_id,
        schedules.RECURRING_PAYMENT_REQUEST,
        parse_body(RecurringPaymentRequestBody, request_body),
    )


def _invoice_body(rng: random.Random, customer_id: str, due_in_days: int) -> dict[str, Any]:
    lines = [
        {
            "description": rng.choice(["Monthly service", "Call-out", "Materials", "Consultation"]),
            "quantity": Decimal(rng.randint(1, 4)),
            "unitAmount": _money(rng, 20, 400),
            "taxRate": Decimal(rng.choice([20, 20, 5, 0])),
        }
        for _ in range(rng.randint(1, 3))
    ]
    return {
        "customer": {"id": customer_id},
        "description": "Services rendered",
        "itemsTaxType": "EXCLUSIVE",
        "items": lines,
        "dueInDays": due_in_days,
    }


def _seed_invoices(
    session: Session,
    rng: random.Random,
    biller_id: str,
    customer_id: str,
    *,
    direct_debit: bool,
    counts: dict[str, int],
) -> None:
    """Four invoices: a draft, a sent one (SCHEDULED with a mandate, else UNPAID), one paid by an
    imported payment, and a void one."""
    today = state.now(session).date()
    made = []
    for due_in in (30, 14, 7, 21):
        body = _invoice_body(rng, customer_id, due_in)
        body["dueDate"] = (today + timedelta(days=body.pop("dueInDays"))).isoformat()
        invoice, _ = create_invoice(session, biller_id, body)
        made.append(invoice)
    _draft, sent, paid, voided = made
    method = "DIRECT_DEBIT_PAYMENT" if direct_debit else "ONE_TIME_PAYMENT"
    activate(session, sent, {"collectionMethod": method})
    activate(session, paid, {"collectionMethod": "ONE_TIME_PAYMENT"})
    import_payment(
        session,
        biller_id,
        {"invoiceId": paid.id, "amount": paid.total_amount, "reference": f"BACS-{paid.invoice_no}"},
    )
    void_invoice(session, voided, "raised twice by mistake")
    counts["invoices"] += len(made)


def _seed_payment_requests(
    session: Session, rng: random.Random, biller_id: str, customer_id: str, counts: dict[str, int]
) -> PaymentRequest:
    """Three standalone payment requests: a draft, an unpaid one (returned), a paid one."""
    today = state.now(session).date()
    unpaid = None
    for status in ("DRAFT", "UNPAID", "PAID"):
        pr = create_payment_request(
            session,
            biller_id,
            {
                "customer": {"id": customer_id},
                "description": rng.choice(["Deposit", "Annual membership", "Spare parts"]),
                "totalAmount": _money(rng, 10, 900),
                "currencyCode": "GBP",
                "payByDate": (today + timedelta(days=rng.randint(5, 40))).isoformat(),
                "distribution": {"approvedForSending": status != "DRAFT"},
            },
        )
        if status == "PAID":
            mark_paid(pr, state.now(session))
        if status == "UNPAID":
            unpaid = pr
        counts["paymentRequests"] += 1
    assert unpaid is not None
    return unpaid
