"""Simulation step: recurring schedules generate their documents (contract ``RecurringInvoice``,
``RecurringPaymentRequest``).

Every ``ACTIVE`` schedule whose ``nextDate`` is on or before the day generates one document per
date it reached (a schedule activated with a start date in the past catches up), then
:func:`sandbox.billing.schedules.record_generation` moves it on (``FINISHED`` after its last date).
``DRAFT``, ``CANCELLED`` and ``FINISHED`` schedules generate nothing.

- A recurring invoice makes an invoice dated the occurrence (due ``paymentTerm`` days later)
  through :func:`sandbox.billing.invoices.create_invoice`; with ``autoSend`` it is activated with
  the schedule's ``activation`` (``ONE_TIME_PAYMENT`` when none is set). A direct debit that the
  customer's mandate no longer allows falls back to the payment link, as the activation of an
  on-demand invoice would [I].
- A recurring payment request makes a standalone request (due ``paymentTerm`` days after the
  date); with ``distribution.approvedForSending`` it is sent: ``AUTO_COLLECT`` is activated by
  direct debit when a mandate allows it (else sent ``ON_DEMAND``), others are sent ``UNPAID``.

A document the current data cannot make (a tax rate removed from the catalogue since) is skipped,
and the schedule still moves on, so one broken schedule cannot stall the simulation. Generated
rows carry the day's batch ``moment`` as their times.
"""

from __future__ import annotations

import logging
from datetime import date, datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.billing.invoice_actions import activate
from sandbox.billing.invoices import create_invoice, payment_requests_of
from sandbox.billing.payment_request_actions import activate_payment_request, create_payment_request
from sandbox.billing.schedules import ACTIVE, record_generation
from sandbox.core.errors import ApiError
from sandbox.customers.lookup import direct_debit_available
from sandbox.models.billing import Invoice, PaymentRequest
from sandbox.models.schedules import INVOICE, Schedule

log = logging.getLogger(__name__)
# A schedule far in the past catches up at most this many dates in one day.
MAX_CATCH_UP = 500
_LINE_NUMBERS = ("quantity", "unitAmount", "taxRate")
_LINE_FIELDS = ("description", "taxRateId", "productId", "accountCodeId", *_LINE_NUMBERS)


def run_day(session: Session, day: date, moment: datetime) -> None:
    due = session.scalars(
        select(Schedule)
        .where(Schedule.status == ACTIVE, Schedule.next_date <= day)
        .order_by(Schedule.next_date, Schedule.created_at, Schedule.id)
    ).all()
    for schedule in due:
        for _ in range(MAX_CATCH_UP):
            when = schedule.next_date
            if schedule.status != ACTIVE or when is None or when > day:
                break
            generate(session, schedule, when, moment)
            record_generation(session, schedule)
            schedule.updated_at = moment


def generate(session: Session, schedule: Schedule, when: date, moment: datetime) -> None:
    """The document of the occurrence ``when``, in a savepoint (all of it, or nothing)."""
    try:
        with session.begin_nested():
            if schedule.kind == INVOICE:
                _invoice(session, schedule, when, moment)
            else:
                _payment_request(session, schedule, when, moment)
    except ApiError as exc:
        log.warning("schedule %s skipped %s: %s", schedule.schedule_no, when, exc.detail)


def _due(details: dict[str, Any], when: date) -> str:
    term = int((details.get("paymentTerm") or {}).get("value", 30))
    return (when + timedelta(days=term)).isoformat()


def _line(item: dict[str, Any]) -> dict[str, Any]:
    """A stored line as a request body has it (exact decimal strings back to Decimals)."""
    line = {key: item[key] for key in _LINE_FIELDS if item.get(key) is not None}
    for key in _LINE_NUMBERS:
        if key in line:
            line[key] = Decimal(str(line[key]))
    return line


def _invoice(session: Session, schedule: Schedule, when: date, moment: datetime) -> None:
    details = schedule.details
    body: dict[str, Any] = {
        "customer": {"id": schedule.customer_id},
        "currencyCode": details.get("currencyCode", "GBP"),
        "itemsTaxType": details.get("itemsTaxType", "EXCLUSIVE"),
        "items": [_line(item) for item in details["items"]],
        "issueDate": when.isoformat(),
        "dueDate": _due(details, when),
    }
    if details.get("description"):
        body["description"] = details["description"]
    invoice, _created = create_invoice(session, schedule.biller_id, body)
    origin = {"source": "SCHEDULE", "recurringId": schedule.id}
    invoice.document = {**(invoice.document or {}), **origin}
    if details.get("autoSend"):
        _send_invoice(session, invoice, details.get("activation") or {})
    _stamp(invoice, moment)
    for pr in payment_requests_of(session, invoice):
        _stamp(pr, moment)


def _send_invoice(session: Session, invoice: Invoice, activation: dict[str, Any]) -> None:
    method = activation.get("collectionMethod", "ONE_TIME_PAYMENT")
    if method == "DIRECT_DEBIT_PAYMENT" and not direct_debit_available(
        session, invoice.customer_id
    ):
        method = "ONE_TIME_PAYMENT"
    body = {
        "collectionMethod": method,
        "customMessage": activation.get("customMessage"),
        "templateId": activation.get("templateId"),
    }
    activate(session, invoice, body)


def _payment_request(session: Session, schedule: Schedule, when: date, moment: datetime) -> None:
    details = schedule.details
    distribution = dict(details.get("distribution") or {})
    approved = bool(distribution.pop("approvedForSending", False))
    body: dict[str, Any] = {
        "customer": {"id": schedule.customer_id},
        "description": details["description"],
        "totalAmount": Decimal(str(details["amount"])),
        "currencyCode": details.get("currencyCode", "GBP"),
        "payByDate": _due(details, when),
        "reference": details.get("reference"),
        "distribution": distribution,
    }
    if details.get("taxRate") is not None:
        body["taxRate"] = Decimal(str(details["taxRate"]))
    pr = create_payment_request(session, schedule.biller_id, body)
    pr.document = {**(pr.document or {}), "source": "SCHEDULE", "recurringId": schedule.id}
    if approved:
        _send_request(session, pr, distribution)
    _stamp(pr, moment)


def _send_request(session: Session, pr: PaymentRequest, distribution: dict[str, Any]) -> None:
    method = {"AUTO_COLLECT": "DIRECT_DEBIT_PAYMENT", "NONE": "NONE"}.get(
        distribution.get("collectionMethod") or "ON_DEMAND", "ONE_TIME_PAYMENT"
    )
    if method == "DIRECT_DEBIT_PAYMENT" and not direct_debit_available(session, pr.customer_id):
        method = "ONE_TIME_PAYMENT"
    body = {
        "collectionMethod": method,
        "customMessage": distribution.get("customMessage"),
        "templateId": distribution.get("templateId"),
    }
    activate_payment_request(session, pr, body)


def _stamp(row: Invoice | PaymentRequest, moment: datetime) -> None:
    """The batch moment as the row's times (reproducible whatever the wall time of the run)."""
    row.created_at = moment
    row.updated_at = moment
    if isinstance(row, PaymentRequest) and row.distribution_time is not None:
        row.distribution_time = moment
