"""The simulation's mandate, direct-debit collection and overdue steps, driven by advancing the
clock of a sandbox of its own that starts on Monday 1 February 2027 (no bank holiday until Good
Friday, 26 March 2027; expected days are computed with the same working-day calendar).

Mandates are signed on the authorisation page with the documented test accounts; statuses are
read over HTTP; the payments the collection makes (no API lists them) are read from the database.
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

import httpx
import pytest
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sandbox.core.db import make_engine, make_session_factory
from sandbox.core.working_days import add_working_days
from sandbox.models.billing import Payment
from sandbox.models.webhooks import WebhookEvent
from sandbox.pages.test_accounts import BANK_ACCOUNTS
from tests.support.billing import (
    activate_invoice,
    get,
    new_customer,
    new_invoice,
    new_payment_request,
    ok,
    pause_customer,
    sent_invoice,
)
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox

START = date(2027, 2, 1)
ITEM = {"description": "Work", "quantity": 1, "unitAmount": 120}


@dataclass
class Sim:
    admin: SandboxAdmin
    db: sessionmaker[Session]
    tokens: BillerTokens


def _sandbox(url: str) -> Any:
    # Tokens live a year: the clock moves weeks ahead.
    return running_sandbox(url, clock_start=START, accessTokenTtl=366 * 86400)


@pytest.fixture
def sim(tmp_path: Any) -> Iterator[Sim]:
    url = f"sqlite:///{tmp_path / 'sandbox.db'}"
    with _sandbox(url) as admin:
        engine = make_engine(url)
        try:
            yield Sim(admin, make_session_factory(engine), admin.connect_biller())
        finally:
            engine.dispose()


# --- helpers ----------------------------------------------------------------------------------


def wd(count: int, since: date = START) -> date:
    return add_working_days(since, count)


def advance_to(sim: Sim, day: date) -> None:
    sim.admin.advance_clock(until=day.isoformat())


def signed_customer(sim: Sim, kind: str) -> tuple[dict[str, Any], dict[str, Any]]:
    """A customer whose mandate was signed on the page with the documented account of ``kind``."""
    customer = new_customer(sim.admin, sim.tokens)
    path = f"/customers/{customer['id']}/directdebitmandates"
    mandate = ok(sim.admin.api.put(path, headers=sim.tokens.headers, json={}))
    account = next(a for a in BANK_ACCOUNTS if a.kind == kind)
    form = {
        "account_holder": account.holder,
        "sort_code": account.sort_code,
        "account_number": account.account_number,
        "confirm": "yes",
    }
    with httpx.Client(timeout=30) as browser:
        assert browser.post(mandate["url"], data=form).status_code in (200, 303)
    return customer, mandate


def dd_invoice(sim: Sim, customer_id: str, due: date) -> dict[str, Any]:
    """A 120.00 invoice due on ``due``, activated for direct-debit collection (SCHEDULED)."""
    draft = new_invoice(sim.admin, sim.tokens, customer_id, items=[ITEM], dueDate=due.isoformat())
    invoice = activate_invoice(sim.admin, sim.tokens, draft["id"], "DIRECT_DEBIT_PAYMENT")
    assert invoice["status"] == "SCHEDULED"
    return invoice


def path_of(invoice: dict[str, Any]) -> str:
    return f"/invoices/{invoice['id']}"


def as_biller(sim: Sim, body: dict[str, Any]) -> dict[str, Any]:
    return {"headers": sim.tokens.headers, "json": body}


def invoice_now(sim: Sim, invoice: dict[str, Any]) -> dict[str, Any]:
    return get(sim.admin, sim.tokens, f"/invoices/{invoice['id']}")


def request_of(sim: Sim, invoice: dict[str, Any]) -> dict[str, Any]:
    pr_id = invoice["paymentRequests"][0]["id"]
    return get(sim.admin, sim.tokens, f"/payment_requests/{pr_id}")


def statuses(sim: Sim, invoice: dict[str, Any]) -> tuple[str, str]:
    return invoice_now(sim, invoice)["status"], request_of(sim, invoice)["status"]


def payments_of(sim: Sim, pr_id: str) -> list[Payment]:
    with sim.db() as session:
        return list(
            session.scalars(
                select(Payment)
                .where(Payment.payment_request_id == pr_id)
                .order_by(Payment.created_at, Payment.id)
            )
        )


def event_types(sim: Sim, entity_id: str) -> list[str]:
    with sim.db() as session:
        rows = session.scalars(select(WebhookEvent).order_by(WebhookEvent.emitted_at))
        return [row.type for row in rows if entity_id in (row.ids or {}).values()]


# --- mandates ---------------------------------------------------------------------------------


def test_signed_mandates_activate_and_the_payer_cancels_later(sim: Sim) -> None:
    _, good = signed_customer(sim, "SUCCEEDS")
    _, leaving = signed_customer(sim, "PAYER_CANCELS")
    forced = new_customer(sim.admin, sim.tokens, mandate="PENDING")

    def status(mandate_id: str) -> dict[str, Any]:
        return get(sim.admin, sim.tokens, f"/customers/directdebitmandates/{mandate_id}")

    active_on = wd(3)
    advance_to(sim, active_on - timedelta(days=1))
    assert status(good["id"])["status"] == "PENDING"
    advance_to(sim, active_on)
    assert [status(m["id"])["status"] for m in (good, leaving)] == ["ACTIVE", "ACTIVE"]
    assert "DIRECT_DEBIT_MANDATE_ACTIVE" in event_types(sim, good["id"])

    cancel_on = wd(10, active_on)
    advance_to(sim, cancel_on - timedelta(days=1))
    assert status(leaving["id"])["status"] == "ACTIVE"
    advance_to(sim, cancel_on)
    cancelled = status(leaving["id"])
    assert cancelled["status"] == "CANCELLED"
    assert cancelled["statusReasonCode"] == "INSTRUCTION_CANCELLED_BY_PAYER"
    assert "DIRECT_DEBIT_MANDATE_CANCELLED" in event_types(sim, leaving["id"])
    assert status(good["id"])["status"] == "ACTIVE"
    # A state forced by the admin endpoint is left as forced.
    forced_now = get(sim.admin, sim.tokens, f"/customers/{forced['id']}")
    assert forced_now["directDebitMandate"]["status"] == "PENDING"


# --- collection -------------------------------------------------------------------------------


def test_a_collection_is_submitted_then_paid(sim: Sim) -> None:
    customer, _ = signed_customer(sim, "SUCCEEDS")
    due = wd(10)
    invoice = dd_invoice(sim, customer["id"], due)
    pr_id = invoice["paymentRequests"][0]["id"]
    submit_on = wd(-2, due)
    paid_on = wd(3, submit_on)

    advance_to(sim, submit_on - timedelta(days=1))
    assert statuses(sim, invoice) == ("SCHEDULED", "SCHEDULED")
    assert payments_of(sim, pr_id) == []
    advance_to(sim, submit_on)
    assert statuses(sim, invoice) == ("SUBMITTED", "SUBMITTED")
    advance_to(sim, paid_on - timedelta(days=1))
    assert statuses(sim, invoice) == ("SUBMITTED", "SUBMITTED")
    advance_to(sim, paid_on)
    paid = invoice_now(sim, invoice)
    assert paid["status"] == "PAID"
    assert (paid["paidAmount"], paid["dueAmount"]) == ("120.00", "0.00")
    pr = request_of(sim, invoice)
    assert (pr["status"], pr["paidAmount"], pr["dueAmount"]) == ("PAID", 120, 0)
    [payment] = payments_of(sim, pr_id)
    assert (payment.status, payment.payment_method) == ("SUCCESS", "DIRECT_DEBIT")
    assert payment.amount == Decimal("120.00")
    kinds = event_types(sim, pr_id)
    for name in ("PAYMENT_REQUEST_SUBMITTED", "PAYMENT_REQUEST_PAID", "PAYMENT_SUCCEEDED"):
        assert name in kinds
    assert {"INVOICE_SUBMITTED", "INVOICE_PAID"} <= set(event_types(sim, invoice["id"]))


def _fail_day(submit_on: date) -> date:
    return wd(3, submit_on)


def test_failed_collections_are_retried_then_stop(sim: Sim) -> None:
    customer, _ = signed_customer(sim, "INSUFFICIENT_FUNDS")
    invoice = dd_invoice(sim, customer["id"], START + timedelta(days=2))  # submitted at once
    pr_id = invoice["paymentRequests"][0]["id"]
    submit_on = wd(1)
    failed_on = _fail_day(submit_on)
    advance_to(sim, failed_on)
    assert statuses(sim, invoice) == ("SCHEDULED", "SCHEDULED")
    [first] = payments_of(sim, pr_id)
    assert first.status == "FAILED"
    assert first.document["failureReason"] == "INSUFFICIENT_FUNDS"
    assert "DD_PAYMENT_FAILED" in event_types(sim, pr_id)

    for attempt in (2, 3, 4):  # the default ddRetryCount is 3
        submit_on = wd(7, failed_on)
        advance_to(sim, submit_on - timedelta(days=1))
        assert len(payments_of(sim, pr_id)) == attempt - 1  # nothing before the retry day
        advance_to(sim, submit_on)
        assert statuses(sim, invoice) == ("SUBMITTED", "SUBMITTED")
        failed_on = _fail_day(submit_on)
        advance_to(sim, failed_on)
    assert [p.status for p in payments_of(sim, pr_id)] == ["FAILED"] * 4
    # Retries exhausted: on-demand fallback, and the invoice (past due) is overdue.
    assert statuses(sim, invoice) == ("OVERDUE", "UNPAID")
    advance_to(sim, wd(15, failed_on))
    assert len(payments_of(sim, pr_id)) == 4


def test_the_customer_retry_count_is_honoured(sim: Sim) -> None:
    customer, _ = signed_customer(sim, "INSUFFICIENT_FUNDS")
    body = {"customerId": customer["id"], "ddRetryCount": 0}
    ok(sim.admin.api.put("/customers/payment_settings", headers=sim.tokens.headers, json=body))
    invoice = dd_invoice(sim, customer["id"], START + timedelta(days=2))
    advance_to(sim, _fail_day(wd(1)))
    assert statuses(sim, invoice) == ("OVERDUE", "UNPAID")
    advance_to(sim, wd(12, _fail_day(wd(1))))
    assert len(payments_of(sim, invoice["paymentRequests"][0]["id"])) == 1


def test_cancel_collection_on_failure_stops_after_the_next_failure(sim: Sim) -> None:
    customer, _ = signed_customer(sim, "INSUFFICIENT_FUNDS")
    invoice = dd_invoice(sim, customer["id"], wd(10))
    pr_id = invoice["paymentRequests"][0]["id"]
    path = f"/payment_requests/{pr_id}:cancel-collection-on-failure"
    assert ok(sim.admin.api.put(path, headers=sim.tokens.headers))["cancelCollectionOnFailure"]
    failed_on = _fail_day(wd(-2, wd(10)))
    advance_to(sim, failed_on)
    pr = request_of(sim, invoice)
    assert (pr["status"], pr["dueAmount"]) == ("UNPAID", 120)
    # The answer comes after the due date: the invoice is overdue at once.
    assert invoice_now(sim, invoice)["status"] == "OVERDUE"
    assert "PAYMENT_REQUEST_COLLECTION_CANCELLED" in event_types(sim, pr_id)
    advance_to(sim, wd(12, failed_on))
    assert [p.status for p in payments_of(sim, pr_id)] == ["FAILED"]
    assert statuses(sim, invoice) == ("OVERDUE", "UNPAID")


def test_paused_collection_waits_and_resumed_collection_runs(sim: Sim) -> None:
    customer, _ = signed_customer(sim, "SUCCEEDS")
    invoice = dd_invoice(sim, customer["id"], wd(4))
    pause = {"collectionMethods": ["AUTO_COLLECT"]}
    ok(sim.admin.api.put(f"{path_of(invoice)}:pause_collection", **as_biller(sim, pause)), 204)
    # A standalone request of a customer who pauses AUTO_COLLECT as a whole.
    other = new_customer(sim.admin, sim.tokens, mandate="ACTIVE")
    draft = new_payment_request(sim.admin, sim.tokens, other["id"], payByDate=wd(4).isoformat())
    body = {"collectionMethod": "DIRECT_DEBIT_PAYMENT"}
    path = f"/payment_requests/{draft['id']}:activate"
    assert (
        ok(sim.admin.api.put(path, headers=sim.tokens.headers, json=body))["status"] == "SCHEDULED"
    )
    pause_customer(sim.admin, sim.tokens, other["id"], "AUTO_COLLECT")

    advance_to(sim, wd(10))
    assert statuses(sim, invoice) == ("SCHEDULED", "SCHEDULED")
    standalone = f"/payment_requests/{draft['id']}"
    assert get(sim.admin, sim.tokens, standalone)["status"] == "SCHEDULED"
    assert payments_of(sim, invoice["paymentRequests"][0]["id"]) == []
    assert payments_of(sim, draft["id"]) == []

    ok(sim.admin.api.put(f"{path_of(invoice)}:resume_collection", **as_biller(sim, pause)), 204)
    pause_customer(sim.admin, sim.tokens, other["id"])
    advance_to(sim, wd(11))
    assert statuses(sim, invoice) == ("SUBMITTED", "SUBMITTED")
    assert get(sim.admin, sim.tokens, standalone)["status"] == "SUBMITTED"
    advance_to(sim, wd(14))
    assert statuses(sim, invoice) == ("PAID", "PAID")
    assert get(sim.admin, sim.tokens, standalone)["status"] == "PAID"
    [payment] = payments_of(sim, draft["id"])
    assert payment.amount == Decimal("100.00")


def test_a_late_failure_makes_the_amount_due_again(sim: Sim) -> None:
    customer, _ = signed_customer(sim, "LATE_FAILURE")
    due = wd(4)
    invoice = dd_invoice(sim, customer["id"], due)
    pr_id = invoice["paymentRequests"][0]["id"]
    paid_on = wd(3, wd(-2, due))
    advance_to(sim, paid_on)
    assert statuses(sim, invoice) == ("PAID", "PAID")
    fails_on = wd(10, paid_on)
    advance_to(sim, fails_on - timedelta(days=1))
    assert invoice_now(sim, invoice)["status"] in ("PAID", "SETTLED")  # payouts may settle it
    advance_to(sim, fails_on)
    [payment] = payments_of(sim, pr_id)
    assert payment.status == "FAILED"
    assert payment.document["lateFailure"] is True
    assert payment.document["failedTime"].startswith(fails_on.isoformat())
    reversed_invoice = invoice_now(sim, invoice)
    assert reversed_invoice["status"] == "OVERDUE"  # UNPAID again, and past its due date
    assert (reversed_invoice["paidAmount"], reversed_invoice["dueAmount"]) == ("0.00", "120.00")
    pr = request_of(sim, invoice)
    assert (pr["status"], pr["paidAmount"], pr["dueAmount"]) == ("UNPAID", 0, 120)
    assert "DD_PAYMENT_LATE_FAILED" in event_types(sim, pr_id)
    assert "INVOICE_PAYMENT_REVERSED" in event_types(sim, invoice["id"])


# --- overdue ----------------------------------------------------------------------------------


def test_unpaid_invoices_past_their_due_date_become_overdue(sim: Sim) -> None:
    customer = new_customer(sim.admin, sim.tokens)
    due = START + timedelta(days=3)
    invoice = sent_invoice(sim.admin, sim.tokens, customer["id"], dueDate=due.isoformat())
    assert invoice["status"] == "UNPAID"
    advance_to(sim, due)
    assert invoice_now(sim, invoice)["status"] == "UNPAID"
    advance_to(sim, due + timedelta(days=1))
    assert invoice_now(sim, invoice)["status"] == "OVERDUE"
    assert event_types(sim, invoice["id"]).count("INVOICE_OVERDUE") == 1
    assert "PAYMENT_REQUEST_OVERDUE" in event_types(sim, invoice["paymentRequests"][0]["id"])


# --- determinism ------------------------------------------------------------------------------


def _scenario(sim: Sim) -> list[tuple[Any, ...]]:
    """The same customers and invoices, advanced 45 days: what each invoice and payment became."""
    invoices = []
    for kind in ("SUCCEEDS", "INSUFFICIENT_FUNDS", "PAYER_CANCELS", "LATE_FAILURE"):
        customer, _ = signed_customer(sim, kind)
        for offset in (3, 12, 25):
            invoices.append(dd_invoice(sim, customer["id"], START + timedelta(days=offset)))
    sim.admin.advance_clock(days=45)
    seen: list[tuple[Any, ...]] = []
    for invoice in invoices:
        now = invoice_now(sim, invoice)
        pr = request_of(sim, invoice)
        payments = [
            (p.status, p.amount, p.payment_time, p.document.get("failedTime"))
            for p in payments_of(sim, pr["id"])
        ]
        seen.append((now["status"], now["paidAmount"], pr["status"], pr["dueAmount"], payments))
    return seen


def test_the_same_setup_reaches_the_same_state(tmp_path: Any) -> None:
    outcomes = []
    for name in ("one", "two"):
        url = f"sqlite:///{tmp_path / name}.db"
        with _sandbox(url) as admin:
            engine = make_engine(url)
            try:
                outcomes.append(
                    _scenario(Sim(admin, make_session_factory(engine), admin.connect_biller()))
                )
            finally:
                engine.dispose()
    assert outcomes[0] == outcomes[1]
    reached = {row[0] for row in outcomes[0]}
    assert {"SETTLED", "OVERDUE", "SCHEDULED"} <= reached, reached
