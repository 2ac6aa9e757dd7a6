"""Repairs of generated request bodies for the stateful phase of ``scripts/fuzz.py``.

A stateful sequence only reaches the operations on a record when the create before it succeeds.
Generated bodies keep the schema, but the service has rules JSON Schema cannot state; each repair
below keeps one of them, changing only what breaks it, so what the generator chose stays
otherwise (each rule is in the operation's description in ``billing_api/openapi.yaml``):

* dates in order: an invoice's ``dueDate`` not before its ``issueDate``, a cadence's ``endDate``
  not before its ``startDate``; a collection pause that ends today or later;
* a time zone the IANA database knows;
* values unique per biller (a customer's ``externalId``, an invoice's ``invoiceNo``, a payment
  request's ``externalId``): a generated value gets a run-wide counter appended, otherwise two
  steps drawing ``"0"`` would meet the duplicate rule instead of the operation;
* ids of records that exist: random catalogue, workflow and template ids, and the ids of a new
  customer's people and address, are left out (the links supply the ids that matter);
* an invoice total in range: at most 20 lines of positive amounts, at most 1,000 units of at most
  £1,000,000 each; no check ``amount`` (it must equal the computed total);
* at most one payment request id in a distribution update (a link supplies the first).

Each function takes the body (a ``dict``) and changes it in place. ``QUERY_REPAIRS`` do the same
for the query of a list whose first item a link reads: the first page, every status, so the
record an earlier step made is on it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal, InvalidOperation
from functools import lru_cache
from typing import Any
from zoneinfo import available_timezones

Body = dict[str, Any]
_COUNTER = itertools.count(1)
_ZONES = ("Europe/London", "UTC", "Europe/Dublin", "America/New_York", "Asia/Kolkata")
MAX_LINES = 20
MAX_QUANTITY = Decimal(1000)
MAX_UNIT_AMOUNT = Decimal(1_000_000)


@lru_cache(maxsize=1)
def _known_zones() -> frozenset[str]:
    return frozenset(available_timezones())


def _today() -> str:
    """Today in the sandbox (its clock starts at the real time, in UTC)."""
    return datetime.now(UTC).date().isoformat()


def _unique(value: Any, limit: int = 255) -> Any:
    """``value`` made unique in this run (a string stays a string within ``limit``)."""
    if not isinstance(value, str):
        return value
    suffix = f"-{next(_COUNTER)}"
    return value[: limit - len(suffix)] + suffix


def _dict(body: Body, key: str) -> Body | None:
    value = body.get(key)
    return value if isinstance(value, dict) else None


def _ordered(body: Body, first: str, then: str) -> None:
    """Swap two ISO dates (strings) when ``then`` is before ``first``."""
    start, end = body.get(first), body.get(then)
    if isinstance(start, str) and isinstance(end, str) and end < start:
        body[first], body[then] = end, start


def customer(body: Body) -> None:
    zone = body.get("timezone")
    if isinstance(zone, str) and zone not in _known_zones():
        body["timezone"] = _ZONES[len(zone) % len(_ZONES)]
    if "externalId" in body:
        body["externalId"] = _unique(body["externalId"])
    for key in ("people", "addresses"):
        for entry in body.get(key) or []:
            if isinstance(entry, dict) and entry.get("id") is not None:
                entry["id"] = None
    _with_contact(body)


def _with_contact(body: Body) -> None:
    """A person with an email included in communications (a card request needs one)."""
    people = body.get("people")
    if not isinstance(people, list):
        people = body["people"] = []
    for person in people:
        if (
            isinstance(person, dict)
            and person.get("email")
            and person.get("isIncludedInCommunications", True)
        ):
            return
    people.append({"firstName": "Pat", "email": f"payer{next(_COUNTER)}@example.com"})


def _decimal(value: Any) -> Decimal | None:
    if isinstance(value, bool) or not isinstance(value, (int, float, str)):
        return None
    try:
        return Decimal(str(value))
    except InvalidOperation:
        return None


def _line(item: Body) -> None:
    for key in ("taxRateId", "productId", "accountCodeId"):
        item.pop(key, None)
    quantity = _decimal(item.get("quantity"))
    if quantity is not None and quantity > MAX_QUANTITY:
        item["quantity"] = int(MAX_QUANTITY)
    amount = _decimal(item.get("unitAmount"))
    if amount is not None and (amount < 0 or amount > MAX_UNIT_AMOUNT):
        item["unitAmount"] = min(abs(item["unitAmount"]), int(MAX_UNIT_AMOUNT))


def _lines(body: Body) -> None:
    items = body.get("items")
    if isinstance(items, list):
        del items[MAX_LINES:]
        for item in items:
            if isinstance(item, dict):
                _line(item)


def invoice(body: Body) -> None:
    _ordered(body, "issueDate", "dueDate")
    due = body.get("dueDate")
    if "issueDate" not in body and isinstance(due, str) and due < _today():
        # The issue date defaults to today, which must not come after the due date.
        body["issueDate"] = due
    _lines(body)
    body.pop("amount", None)
    body.pop("instalmentPlanDetails", None)
    if "invoiceNo" in body:
        body["invoiceNo"] = _unique(body["invoiceNo"])


def invoice_update(body: Body) -> None:
    invoice(body)
    # The customer may change only on a draft, and a random one does not exist: keep the current.
    body.pop("customer", None)


def _distribution(distribution: Body | None) -> None:
    if distribution is not None:
        distribution.pop("templateId", None)


def payment_request(body: Body) -> None:
    if "externalId" in body:
        body["externalId"] = _unique(body["externalId"])
    _distribution(_dict(body, "distribution"))


def _cadence(body: Body) -> None:
    cadence = _dict(body, "cadence")
    if cadence is not None:
        _ordered(cadence, "startDate", "endDate")


def recurring_invoice(body: Body) -> None:
    _cadence(body)
    details = _dict(body, "invoiceDetails")
    if details is not None:
        _lines(details)
        activation = _dict(details, "activation")
        if activation is not None:
            activation.pop("templateId", None)


def recurring_invoice_update(body: Body) -> None:
    # The customer stays: it is required, and the contract's link puts the schedule's own there
    # (a body without it would no longer be positive data).
    recurring_invoice(body)


def recurring_payment_request(body: Body) -> None:
    _cadence(body)
    details = _dict(body, "paymentRequestDetails")
    if details is not None:
        _distribution(_dict(details, "distribution"))


def recurring_payment_request_update(body: Body) -> None:
    recurring_payment_request(body)  # the customer stays, as for a recurring invoice


def workflow_settings(body: Body) -> None:
    for key in ("onDemandWorkflowId", "autoCollectWorkflowId", "mandateWorkflowId"):
        body.pop(key, None)
    body.pop("statementWorkflowId", None)


def customer_by_id(body: Body) -> None:
    customer(body)
    # An id in the body must equal the path's, which only the link knows.
    body.pop("id", None)


def payment_settings(body: Body) -> None:
    until = body.get("collectionPausedUntil")
    if isinstance(until, str) and until < _today():
        body["collectionPausedUntil"] = (
            date.fromisoformat(_today()) + timedelta(days=30)
        ).isoformat()


def activation(body: Body) -> None:
    body.pop("templateId", None)


def distribution_update(body: Body) -> None:
    ids = body.get("paymentRequestIds")
    if isinstance(ids, list):
        del ids[1:]
    _distribution(_dict(body, "distribution"))


def first_page_of_everything(query: Body) -> None:
    query["page"] = 0
    query.pop("statuses", None)


QUERY_REPAIRS: dict[str, Callable[[Body], None]] = {
    # Its first card is what the link to ``cards_on_file.remove`` reads.
    "cards_on_file.list": first_page_of_everything,
}


REPAIRS: dict[str, Callable[[Body], None]] = {
    "customers.create": customer,
    "customers.update": customer,
    "customers.update_by_id": customer_by_id,
    "customers.upsert_workflow_settings": workflow_settings,
    "customers.upsert_payment_settings": payment_settings,
    "invoices.create": invoice,
    "invoices.update": invoice_update,
    "invoices.activate": activation,
    "recurring_invoices.create": recurring_invoice,
    "recurring_invoices.update": recurring_invoice_update,
    "payment_requests.create": payment_request,
    "payment_requests.update": payment_request,
    "payment_requests.activate": activation,
    "payment_requests.update_distribution": distribution_update,
    "recurring_payment_requests.create": recurring_payment_request,
    "recurring_payment_requests.update": recurring_payment_request_update,
}
