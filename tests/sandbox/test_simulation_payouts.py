"""The simulation's schedule and payout steps, driven by advancing the clock of a sandbox of its
own that starts on Monday 21 December 2026 (the next working days: 22, 23, 24 December; 25 and
28 December are bank holidays; then 29, 30, 31 December; 1 January is a bank holiday).

Card payments are made on the hosted card page; direct debits, which the collection step makes
over days, are written to the database as that step leaves them (``SUCCESS`` at the collection's
moment, and ``FAILED`` with ``lateFailure`` for a late failure).
"""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import UTC, date, datetime
from decimal import Decimal
from typing import Any

import httpx
import pytest
from jsonschema import Draft202012Validator
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sandbox.core.db import make_engine, make_session_factory, session_scope
from sandbox.models.billing import Invoice, Payment, PaymentRequest
from sandbox.models.payouts import Payout, PayoutItem
from tests.support.billing import get, new_customer, ok, sent_invoice
from tests.support.contract_check import _URI, _registry
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox

START = date(2026, 12, 21)
GOOD_CARD = {
    "cardholder_name": "Jane Doe",
    "card_number": "4000 0566 5566 5556",
    "expiry": "03/30",
    "cvc": "737",
}


@dataclass
class Sim:
    admin: SandboxAdmin
    db: sessionmaker[Session]
    tokens: BillerTokens


@pytest.fixture
def sim(tmp_path: Any) -> Iterator[Sim]:
    url = f"sqlite:///{tmp_path / 'sandbox.db'}"
    # Tokens live a year: the clock moves weeks ahead.
    with running_sandbox(url, clock_start=START, accessTokenTtl=366 * 86400) as admin:
        engine = make_engine(url)
        try:
            yield Sim(admin, make_session_factory(engine), admin.connect_biller())
        finally:
            engine.dispose()


# --- helpers ----------------------------------------------------------------------------------


def advance_to(sim: Sim, day: date) -> None:
    sim.admin.advance_clock(until=day.isoformat())


def invoice_for(sim: Sim, amount: str) -> dict[str, Any]:
    customer = new_customer(sim.admin, sim.tokens)
    item = {"description": "Work", "quantity": 1, "unitAmount": float(amount)}
    return sent_invoice(sim.admin, sim.tokens, customer["id"], items=[item])


def pay_by_card(sim: Sim, invoice: dict[str, Any]) -> None:
    url = invoice["paymentRequests"][0]["paymentLink"]["url"]
    with httpx.Client(timeout=30) as browser:
        answer = browser.post(url, data=GOOD_CARD)
    assert answer.status_code in (200, 303), answer.text


def pay_by_direct_debit(sim: Sim, invoice: dict[str, Any], day: date) -> str:
    """What the collection step leaves: a SUCCESS direct debit at the day's moment, the request
    and invoice PAID."""
    moment = datetime(day.year, day.month, day.day, 6, tzinfo=UTC)
    with session_scope(sim.db) as session:
        row = session.get(Invoice, invoice["id"])
        assert row is not None
        pr = session.scalars(
            select(PaymentRequest).where(PaymentRequest.invoice_id == row.id)
        ).one()
        payment = Payment(
            id=str(uuid.uuid4()),
            biller_id=row.biller_id,
            invoice_id=row.id,
            payment_request_id=pr.id,
            amount=row.total_amount,
            currency_code="GBP",
            status="SUCCESS",
            payment_method="DIRECT_DEBIT",
            reference=pr.payment_request_no,
            document={},
            payment_time=moment,
            created_at=moment,
            updated_at=moment,
        )
        session.add(payment)
        pr.paid_amount = pr.total_amount
        pr.status = "PAID"
        row.paid_amount = row.total_amount
        row.status = "PAID"
        return payment.id


def fail_late(sim: Sim, payment_id: str) -> None:
    with session_scope(sim.db) as session:
        payment = session.get(Payment, payment_id)
        assert payment is not None
        payment.status = "FAILED"
        payment.document = {**payment.document, "lateFailure": True}


def payouts(sim: Sim) -> list[tuple[Payout, list[PayoutItem]]]:
    with session_scope(sim.db) as session:
        rows = session.scalars(
            select(Payout)
            .where(Payout.biller_id == sim.tokens.biller_id)
            .order_by(Payout.arrival_date)
        ).all()
        return [
            (
                payout,
                list(
                    session.scalars(
                        select(PayoutItem)
                        .where(PayoutItem.payout_id == payout.id)
                        .order_by(PayoutItem.position)
                    )
                ),
            )
            for payout in rows
        ]


def payment_statuses(sim: Sim, invoice_id: str) -> list[str]:
    with session_scope(sim.db) as session:
        return list(session.scalars(select(Payment.status).where(Payment.invoice_id == invoice_id)))


def events_of(sim: Sim, kind: str) -> list[dict[str, Any]]:
    params = {"billerId": sim.tokens.biller_id, "kind": kind, "limit": 1000}
    return list(ok(sim.admin.http.get("/_sandbox/webhooks/events", params=params))["events"])


# --- payouts ----------------------------------------------------------------------------------


def test_card_money_is_paid_out_two_working_days_later(sim: Sim) -> None:
    invoice = invoice_for(sim, "120.00")
    pay_by_card(sim, invoice)  # Monday 21
    advance_to(sim, date(2026, 12, 22))
    assert payouts(sim) == []
    advance_to(sim, date(2026, 12, 23))
    [(payout, items)] = payouts(sim)
    assert payout.arrival_date == date(2026, 12, 23)
    assert payout.amount == Decimal("120.00") and payout.status == "PAID"
    assert [(i.type, i.amount, i.invoice_id) for i in items] == [
        ("PAYMENT", Decimal("120.00"), invoice["id"])
    ]
    assert payout.reference.startswith("ADFIN-PO-") and len(payout.reference) <= 18


def test_weekends_and_bank_holidays_delay_payouts_and_a_day_is_batched(sim: Sim) -> None:
    by_debit = invoice_for(sim, "300.10")
    debit = pay_by_direct_debit(sim, by_debit, START)  # Mon 21 + 4 working days: Tue 29
    advance_to(sim, date(2026, 12, 23))
    by_card = invoice_for(sim, "45.55")
    pay_by_card(sim, by_card)  # Wed 23 + 2 working days (24, then 29 after the holidays)
    advance_to(sim, date(2026, 12, 28))
    assert payouts(sim) == []
    advance_to(sim, date(2026, 12, 30))
    [(payout, items)] = payouts(sim)
    assert payout.arrival_date == date(2026, 12, 29)
    assert payout.amount == Decimal("345.65") == sum(i.amount for i in items)
    assert {i.payment_id for i in items} >= {debit}
    assert [i.type for i in items] == ["PAYMENT", "PAYMENT"]


def test_paid_out_payments_and_documents_become_settled(sim: Sim) -> None:
    invoice = invoice_for(sim, "80.00")
    pay_by_card(sim, invoice)
    assert get(sim.admin, sim.tokens, f"/invoices/{invoice['id']}")["status"] == "PAID"
    advance_to(sim, date(2026, 12, 23))
    after = get(sim.admin, sim.tokens, f"/invoices/{invoice['id']}")
    assert after["status"] == "SETTLED"
    pr_id = invoice["paymentRequests"][0]["id"]
    assert get(sim.admin, sim.tokens, f"/payment_requests/{pr_id}")["status"] == "SETTLED"
    assert payment_statuses(sim, invoice["id"]) == ["SETTLED"]


def test_payout_events_carry_the_payout(sim: Sim) -> None:
    invoice = invoice_for(sim, "19.99")
    pay_by_card(sim, invoice)
    advance_to(sim, date(2026, 12, 23))
    payout_events = events_of(sim, "payout")
    assert [e["type"] for e in payout_events] == ["PAYOUT_CREATED", "PAYOUT_PAID"]
    created, paid = (e["payload"] for e in payout_events)
    schema = {"$ref": f"{_URI}#/components/schemas/PayoutEvent"}
    for payload in (created, paid):
        Draft202012Validator(schema, registry=_registry()).validate(payload)
    assert created["payout"]["status"] == "IN_TRANSIT" and paid["payout"]["status"] == "PAID"
    assert paid["payoutId"] == paid["payout"]["id"] == paid["sourceEntityId"]
    assert paid["payout"]["amount"] == 19.99 and paid["payout"]["arrivalDate"] == "2026-12-23"
    assert paid["payout"]["items"][0]["invoiceId"] == invoice["id"]
    settled = {e["type"] for e in events_of(sim, "payment")}
    assert "PAYMENT_SETTLED" in settled
    assert "INVOICE_SETTLED" in {e["type"] for e in events_of(sim, "invoice")}
    assert "PAYMENT_REQUEST_SETTLED" in {e["type"] for e in events_of(sim, "payment-request")}


def test_a_late_failure_is_deducted_from_the_next_payout(sim: Sim) -> None:
    failing = invoice_for(sim, "60.25")
    debit = pay_by_direct_debit(sim, failing, START)
    advance_to(sim, date(2026, 12, 29))  # paid out on the 29th
    fail_late(sim, debit)
    later = invoice_for(sim, "100.00")
    pay_by_card(sim, later)  # Tue 29 -> Thu 31
    advance_to(sim, date(2027, 1, 4))
    (_first, _), (payout, items) = payouts(sim)
    assert payout.arrival_date == date(2026, 12, 31)
    assert [(i.type, i.amount) for i in items] == [
        ("PAYMENT", Decimal("100.00")),
        ("DEDUCTION", Decimal("-60.25")),
    ]
    assert payout.amount == Decimal("39.75") == sum(i.amount for i in items)
    assert items[1].payment_id == debit
    assert items[1].description == f"Failed payment deduction for invoice {failing['invoiceNo']}"


def test_a_deduction_larger_than_the_credits_waits_for_a_later_payout(sim: Sim) -> None:
    failing = invoice_for(sim, "500.00")
    debit = pay_by_direct_debit(sim, failing, START)
    advance_to(sim, date(2026, 12, 29))
    fail_late(sim, debit)
    small = invoice_for(sim, "20.00")
    pay_by_card(sim, small)  # would arrive Thu 31: 20 - 500 < 0, so no payout
    advance_to(sim, date(2027, 1, 1))
    assert [p.arrival_date for p, _ in payouts(sim)] == [date(2026, 12, 29)]
    big = invoice_for(sim, "700.00")
    pay_by_card(sim, big)  # Fri 1 Jan is a holiday: Mon 4, Tue 5
    advance_to(sim, date(2027, 1, 6))
    (_first, _), (payout, items) = payouts(sim)
    assert payout.arrival_date == date(2027, 1, 5)
    assert [i.amount for i in items] == [Decimal("20.00"), Decimal("700.00"), Decimal("-500.00")]
    assert payout.amount == Decimal("220.00")


# --- schedules --------------------------------------------------------------------------------


def _recurring_invoice(sim: Sim, customer_id: str, **details: Any) -> dict[str, Any]:
    body = {
        "cadence": {
            "timeUnit": "WEEKS",
            "frequency": 1,
            "startDate": "2026-12-22",
            "endDate": "2026-12-29",
        },
        "invoiceDetails": {
            "customer": {"id": customer_id},
            "description": "Weekly cleaning",
            "items": [{"description": "Cleaning", "quantity": 2, "unitAmount": 30, "taxRate": 20}],
            "paymentTerm": {"timeUnit": "DAYS", "value": 14},
            **details,
        },
    }
    return ok(sim.admin.api.post("/schedules/invoices", headers=sim.tokens.headers, json=body), 201)


def _invoices_of(sim: Sim, customer_id: str) -> list[dict[str, Any]]:
    found = get(sim.admin, sim.tokens, f"/invoices?customerId={customer_id}&sort=issueDate,asc")
    return list(found["invoices"])


def test_an_active_recurring_invoice_generates_on_its_dates_then_finishes(sim: Sim) -> None:
    customer = new_customer(sim.admin, sim.tokens)
    schedule = _recurring_invoice(
        sim, customer["id"], autoSend=True, activation={"collectionMethod": "ONE_TIME_PAYMENT"}
    )
    path = f"/schedules/invoices/{schedule['id']}"
    ok(sim.admin.api.put(f"{path}:activate", headers=sim.tokens.headers, json={}))
    advance_to(sim, date(2026, 12, 23))
    assert [i["issueDate"] for i in _invoices_of(sim, customer["id"])] == ["2026-12-22"]
    advance_to(sim, date(2027, 1, 6))
    generated = _invoices_of(sim, customer["id"])
    assert sorted(i["issueDate"] for i in generated) == ["2026-12-22", "2026-12-29"]
    # The first fell due on 5 January and is overdue on the 6th; the second is still unpaid.
    assert {i["dueDate"]: i["status"] for i in generated} == {
        "2027-01-05": "OVERDUE",
        "2027-01-12": "UNPAID",
    }
    assert {i["totalAmount"] for i in generated} == {"72.00"}
    assert sorted(i["dueDate"] for i in generated) == ["2027-01-05", "2027-01-12"]
    after = get(sim.admin, sim.tokens, path)
    assert after["status"] == "FINISHED" and after["generatedCount"] == 2
    assert after["nextDate"] is None


def test_without_auto_send_the_generated_invoice_stays_draft(sim: Sim) -> None:
    customer = new_customer(sim.admin, sim.tokens)
    schedule = _recurring_invoice(sim, customer["id"])
    path = f"/schedules/invoices/{schedule['id']}:activate"
    ok(sim.admin.api.put(path, headers=sim.tokens.headers, json={}))
    advance_to(sim, date(2026, 12, 23))
    assert [i["status"] for i in _invoices_of(sim, customer["id"])] == ["DRAFT"]


def test_draft_and_cancelled_schedules_generate_nothing(sim: Sim) -> None:
    draft_customer = new_customer(sim.admin, sim.tokens)
    draft = _recurring_invoice(sim, draft_customer["id"], autoSend=True)
    cancelled_customer = new_customer(sim.admin, sim.tokens)
    cancelled = _recurring_invoice(sim, cancelled_customer["id"], autoSend=True)
    path = f"/schedules/invoices/{cancelled['id']}"
    ok(sim.admin.api.put(f"{path}:activate", headers=sim.tokens.headers, json={}))
    ok(sim.admin.api.put(f"{path}:cancel", headers=sim.tokens.headers, json={}))
    advance_to(sim, date(2027, 1, 6))
    assert _invoices_of(sim, draft_customer["id"]) == []
    assert _invoices_of(sim, cancelled_customer["id"]) == []
    assert get(sim.admin, sim.tokens, f"/schedules/invoices/{draft['id']}")["generatedCount"] == 0


def test_a_recurring_payment_request_generates_sent_requests(sim: Sim) -> None:
    customer = new_customer(sim.admin, sim.tokens)
    body = {
        "cadence": {"timeUnit": "MONTHS", "frequency": 1, "startDate": "2026-12-22"},
        "paymentRequestDetails": {
            "customer": {"id": customer["id"]},
            "amount": 250.5,
            "currencyCode": "GBP",
            "description": "Retainer",
            "paymentTerm": {"timeUnit": "DAYS", "value": 7},
            "distribution": {"collectionMethod": "ON_DEMAND", "approvedForSending": True},
        },
    }
    created = ok(
        sim.admin.api.post("/schedules/payment_requests", headers=sim.tokens.headers, json=body),
        201,
    )
    advance_to(sim, date(2026, 12, 23))
    found = get(sim.admin, sim.tokens, f"/payment_requests?customerId={customer['id']}")
    [request] = found["paymentRequests"]
    assert request["status"] == "UNPAID" and request["totalAmount"] == 250.5
    assert request["payByDate"] == "2026-12-29" and request["source"] == "SCHEDULE"
    after = get(sim.admin, sim.tokens, f"/schedules/payment_requests/{created['id']}")
    assert after["status"] == "ACTIVE" and after["nextDate"] == "2027-01-22"
    assert after["generatedCount"] == 1
