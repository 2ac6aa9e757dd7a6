"""Schedules: recurring invoices (created ``DRAFT``, generating once activated) and recurring
payment requests (created ``ACTIVE``; they have no draft status).

This module keeps the schedules themselves: create, update, cancel, activate, their dates and how
they are shown. Generating the invoices and payment requests is the simulation's; it finds due
schedules by ``Schedule.next_date`` (status ``ACTIVE``, ``next_date <= today``) and calls
:func:`record_generation` after each document it generates.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from typing import Any

from pydantic import BaseModel
from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.billing import catalogs
from sandbox.billing.invoice_lines import line_amounts
from sandbox.billing.schedule_bodies import (
    Cadence,
    CustomerRef,
    RecurringInvoiceBody,
    RecurringPaymentRequestBody,
)
from sandbox.core import ids, state
from sandbox.core.bodies import json_object
from sandbox.core.errors import INVALID_STATE, VALIDATION_ERROR, ApiError, not_found
from sandbox.core.money import as_string
from sandbox.core.numbering import next_number
from sandbox.core.timefmt import iso
from sandbox.core.validation import parse_body
from sandbox.models.billing import Customer
from sandbox.models.schedules import INVOICE, PAYMENT_REQUEST, Schedule

DRAFT, ACTIVE, FINISHED, CANCELLED = "DRAFT", "ACTIVE", "FINISHED", "CANCELLED"
# Direct-debit collection needs a payment term of at least this many days [C].
MIN_DIRECT_DEBIT_TERM_DAYS = 3
# Fields of the stored details that are numbers in the contract (stored as exact strings).
_NUMBER_FIELDS = frozenset({"amount", "unitAmount", "quantity", "taxRate"})


@dataclass(frozen=True)
class Kind:
    """How one kind of schedule is named and shown."""

    kind: str
    what: str
    details_key: str
    number_key: str
    initial_status: str


RECURRING_INVOICE = Kind(
    INVOICE, "recurring invoice", "invoiceDetails", "recurringInvoiceNo", DRAFT
)
RECURRING_PAYMENT_REQUEST = Kind(
    PAYMENT_REQUEST,
    "recurring payment request",
    "paymentRequestDetails",
    "recurringPaymentRequestNo",
    ACTIVE,
)
Body = RecurringInvoiceBody | RecurringPaymentRequestBody


# --- dates ------------------------------------------------------------------------------------


def add_months(day: date, months: int) -> date:
    """``day`` moved by whole months, keeping the day clipped to the month's last day."""
    year, month = divmod(day.year * 12 + day.month - 1 + months, 12)
    if not 1 <= year <= 9999:
        raise OverflowError("date out of range")
    return date(year, month + 1, min(day.day, calendar.monthrange(year, month + 1)[1]))


def _step_months(cadence: dict[str, Any]) -> int:
    return int(cadence["frequency"]) * (12 if cadence["timeUnit"] == "YEARS" else 1)


def occurrence(cadence: dict[str, Any], index: int) -> date | None:
    """The ``index``-th date (0 = ``startDate``) of the cadence; None past ``endDate``.

    Month and year steps count from the start date (31 Jan, 28 Feb, 31 Mar...), not from the
    previous occurrence, so a clipped day does not drift.
    """
    start = date.fromisoformat(cadence["startDate"])
    try:
        if cadence["timeUnit"] == "WEEKS":
            day = start + timedelta(weeks=int(cadence["frequency"]) * index)
        else:
            day = add_months(start, _step_months(cadence) * index)
    except OverflowError:
        return None
    end = cadence.get("endDate")
    return None if end is not None and day > date.fromisoformat(end) else day


def number_of_occurrences(cadence: dict[str, Any]) -> int | None:
    """How many dates the cadence has; None when it is open-ended."""
    if cadence.get("endDate") is None:
        return None
    start, end = date.fromisoformat(cadence["startDate"]), date.fromisoformat(cadence["endDate"])
    if end < start:
        return 0
    if cadence["timeUnit"] == "WEEKS":
        return (end - start).days // (7 * int(cadence["frequency"])) + 1
    step = _step_months(cadence)
    index = ((end.year - start.year) * 12 + end.month - start.month) // step
    while index > 0 and add_months(start, index * step) > end:
        index -= 1
    return index + 1


def _refresh_next_date(schedule: Schedule) -> None:
    if schedule.status in (FINISHED, CANCELLED):
        schedule.next_date = None
    else:
        schedule.next_date = occurrence(schedule.cadence, schedule.generated_count)


def record_generation(session: Session, schedule: Schedule) -> None:
    """For the simulation: one more document was generated; ``FINISHED`` after the last one."""
    schedule.generated_count += 1
    _refresh_next_date(schedule)
    if schedule.next_date is None and schedule.status == ACTIVE:
        schedule.status = FINISHED
    schedule.updated_at = state.now(session)


# --- validation -------------------------------------------------------------------------------


def _invalid(field: str, detail: str) -> ApiError:
    return ApiError(422, VALIDATION_ERROR, detail, field=field)


def _cadence(cadence: Cadence) -> dict[str, Any]:
    if cadence.end_date is not None and cadence.end_date < cadence.start_date:
        raise _invalid("cadence.endDate", "endDate is before startDate")
    return cadence.model_dump(mode="json", by_alias=True)


def _customer(session: Session, biller_id: str, ref: CustomerRef, where: str) -> Customer:
    """The biller's customer a ``CustomerRef`` names (by id, else by externalId), or 422."""
    if ref.id is not None:
        customer = session.get(Customer, ref.id)
        if customer is None or customer.biller_id != biller_id:
            raise _invalid(f"{where}.id", "no customer has this id")
        return customer
    if ref.external_id is None:
        raise _invalid(where, "name the customer by id or externalId")
    found = session.scalars(
        select(Customer)
        .where(Customer.biller_id == biller_id, Customer.external_id == ref.external_id)
        .limit(2)
    ).all()
    if len(found) != 1:
        detail = "no customer has" if not found else "several customers have"
        raise _invalid(f"{where}.externalId", f"{detail} this externalId")
    return found[0]


def _dump(details: BaseModel) -> dict[str, Any]:
    """As stored: JSON types, exact decimal strings; absent and null optional fields left out
    (several of them, such as ``distribution.collectionMethod``, may not be null)."""
    return details.model_dump(mode="json", by_alias=True, exclude_none=True)


def _details(kind: Kind, body: Body) -> tuple[dict[str, Any], CustomerRef, bool]:
    """The details to store, the customer they name, and whether they collect by direct debit."""
    if isinstance(body, RecurringInvoiceBody):
        invoice = body.invoice_details
        activation = invoice.activation
        direct_debit = activation is not None and (
            activation.collection_method == "DIRECT_DEBIT_PAYMENT"
        )
        return _dump(invoice), invoice.customer, direct_debit
    request = body.payment_request_details
    distribution = request.distribution
    direct_debit = distribution is not None and distribution.collection_method == "AUTO_COLLECT"
    return _dump(request), request.customer, direct_debit


def _resolve_tax_rates(session: Session, biller_id: str, details: dict[str, Any]) -> None:
    """A line with ``taxRateId`` and no ``taxRate`` takes the catalogue rate (stored with the
    line, so the schedule's total does not move when the catalogue changes later)."""
    for index, item in enumerate(details.get("items", [])):
        if item.get("taxRate") is None and item.get("taxRateId") is not None:
            rate = catalogs.find_tax_rate(session, biller_id, item["taxRateId"], state.now(session))
            if rate is None:
                field = f"invoiceDetails.items[{index}].taxRateId"
                raise _invalid(field, "no tax rate of the biller has this id")
            item["taxRate"] = str(rate.rate)


def _validated(
    session: Session, biller_id: str, kind: Kind, body: Body
) -> tuple[dict[str, Any], dict[str, Any], Customer]:
    cadence = _cadence(body.cadence)
    details, ref, direct_debit = _details(kind, body)
    _resolve_tax_rates(session, biller_id, details)
    term = details["paymentTerm"]["value"]
    if direct_debit and term < MIN_DIRECT_DEBIT_TERM_DAYS:
        raise _invalid(
            f"{kind.details_key}.paymentTerm.value",
            f"collecting by direct debit needs a payment term of at least "
            f"{MIN_DIRECT_DEBIT_TERM_DAYS} days",
        )
    customer = _customer(session, biller_id, ref, f"{kind.details_key}.customer")
    details.pop("customer", None)  # kept as customer_id
    return cadence, details, customer


# --- operations -------------------------------------------------------------------------------


def create(session: Session, biller_id: str, kind: Kind, body: Body) -> Schedule:
    cadence, details, customer = _validated(session, biller_id, kind, body)
    now = state.now(session)
    schedule = Schedule(
        id=ids.new_uuid(),
        biller_id=biller_id,
        kind=kind.kind,
        schedule_no=next_number(session, biller_id, "schedule"),
        customer_id=customer.id,
        status=kind.initial_status,
        cadence=cadence,
        details=details,
        generated_count=0,
        created_at=now,
        updated_at=now,
    )
    _refresh_next_date(schedule)
    session.add(schedule)
    session.flush()
    return schedule


def get(session: Session, biller_id: str, kind: Kind, schedule_id: str) -> Schedule:
    """The biller's schedule of this kind, or 404 (another biller's does not exist for it)."""
    schedule = session.get(Schedule, schedule_id)
    if schedule is None or schedule.biller_id != biller_id or schedule.kind != kind.kind:
        raise not_found(kind.what)
    return schedule


def delete(session: Session, schedule: Schedule) -> None:
    """Delete the schedule; what it generated is kept."""
    session.delete(schedule)


def parse(kind: Kind, body: Any) -> Body:
    """The JSON body of a create or update of ``kind`` (400 when not an object, 422 naming each
    broken rule)."""
    data = json_object(body)
    if kind is RECURRING_INVOICE:
        return parse_body(RecurringInvoiceBody, data)
    return parse_body(RecurringPaymentRequestBody, data)


def _invalid_state(kind: Kind, schedule: Schedule, action: str) -> ApiError:
    return ApiError(400, INVALID_STATE, f"a {schedule.status} {kind.what} cannot be {action}")


def update(session: Session, kind: Kind, schedule: Schedule, body: Body) -> Schedule:
    """Replace cadence and details; edits apply to documents generated afterwards."""
    if schedule.status in (FINISHED, CANCELLED):
        raise _invalid_state(kind, schedule, "updated")
    cadence, details, customer = _validated(session, schedule.biller_id, kind, body)
    if customer.id != schedule.customer_id:
        raise _invalid(
            f"{kind.details_key}.customer.id", "the customer of a schedule cannot be changed"
        )
    schedule.cadence, schedule.details = cadence, details
    schedule.updated_at = state.now(session)
    _refresh_next_date(schedule)
    return schedule


def cancel(session: Session, kind: Kind, schedule: Schedule) -> Schedule:
    """Stop generating; cancelling a cancelled schedule changes nothing."""
    if schedule.status == CANCELLED:
        return schedule
    if schedule.status == FINISHED:
        raise _invalid_state(kind, schedule, "cancelled")
    schedule.status = CANCELLED
    schedule.updated_at = state.now(session)
    _refresh_next_date(schedule)
    return schedule


def activate(session: Session, kind: Kind, schedule: Schedule) -> Schedule:
    """``DRAFT`` → ``ACTIVE``: from ``nextDate`` on, the simulation generates documents."""
    if schedule.status != DRAFT:
        raise _invalid_state(kind, schedule, "activated")
    schedule.status = ACTIVE
    schedule.updated_at = state.now(session)
    _refresh_next_date(schedule)
    return schedule


# --- rendering --------------------------------------------------------------------------------


def _number(value: Decimal) -> int | float:
    return int(value) if value == value.to_integral_value() else float(value)


def _as_numbers(node: Any) -> Any:
    """Stored exact decimal strings back to JSON numbers, as the contract shows them."""
    if isinstance(node, list):
        return [_as_numbers(item) for item in node]
    if isinstance(node, dict):
        return {
            key: _number(Decimal(value))
            if key in _NUMBER_FIELDS and isinstance(value, str)
            else _as_numbers(value)
            for key, value in node.items()
        }
    return node


def invoice_total(details: dict[str, Any]) -> Decimal:
    """Total of each generated invoice: its lines per ``itemsTaxType``, as an invoice's."""
    total = Decimal("0")
    for item in details["items"]:
        rate = Decimal(item["taxRate"]) if item.get("taxRate") is not None else Decimal("0")
        _tax, line_total = line_amounts(
            Decimal(item["quantity"]),
            Decimal(item["unitAmount"]),
            rate,
            details.get("itemsTaxType", "EXCLUSIVE"),
        )
        total += line_total
    return total


def public(session: Session, kind: Kind, schedule: Schedule) -> dict[str, Any]:
    """The contract's ``RecurringInvoice`` or ``RecurringPaymentRequest``."""
    customer = session.get(Customer, schedule.customer_id)
    ref: dict[str, Any] = {"id": schedule.customer_id}
    if customer is not None and customer.external_id:
        ref["externalId"] = customer.external_id
    details = {"customer": ref, **_as_numbers(schedule.details)}
    shown: dict[str, Any] = {
        "id": schedule.id,
        kind.number_key: schedule.schedule_no,
        "status": schedule.status,
        "nextDate": schedule.next_date.isoformat() if schedule.next_date else None,
        "cadence": dict(schedule.cadence),
        kind.details_key: details,
        "numberOfOccurrences": number_of_occurrences(schedule.cadence),
        "generatedCount": schedule.generated_count,
        "creationTime": iso(schedule.created_at),
        "lastUpdatedTime": iso(schedule.updated_at),
    }
    if kind is RECURRING_INVOICE:
        shown["totalAmount"] = as_string(invoice_total(schedule.details))
    return shown
