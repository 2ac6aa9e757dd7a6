"""Customers and their direct-debit state, as other resources need them.

Create and update live in :mod:`sandbox.customers.records`, listing in
:mod:`sandbox.customers.query`, settings in :mod:`sandbox.customers.settings`, mandates in
:mod:`sandbox.customers.mandates`. What lives here is what invoices and payment requests use too:
rendering a customer, its current mandate, whether direct debit is available, and which
collection methods the customer pauses as a whole.
"""

from __future__ import annotations

from datetime import date
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.core.errors import not_found
from sandbox.core.timefmt import iso
from sandbox.models.billing import Customer, Mandate

# Mandate states in which the service can collect by direct debit [C: "proceed when PENDING or
# ACTIVE; block when CREATED"].
DIRECT_DEBIT_READY = frozenset({"PENDING", "ACTIVE"})


def get_customer(session: Session, biller_id: str, customer_id: str) -> Customer:
    """The biller's customer, or 404 (another biller's customer does not exist for this one)."""
    customer = session.get(Customer, customer_id)
    if customer is None or customer.biller_id != biller_id:
        raise not_found("customer")
    return customer


def find_customer(session: Session, customer_id: str) -> Customer:
    """A customer of any biller (the admin API), or 404."""
    customer = session.get(Customer, customer_id) if "\x00" not in customer_id else None
    if customer is None:
        raise not_found("customer")
    return customer


def current_mandate(session: Session, customer_id: str) -> Mandate | None:
    """The customer's newest mandate (a customer has at most one live mandate)."""
    return session.scalars(
        select(Mandate)
        .where(Mandate.customer_id == customer_id)
        .order_by(Mandate.created_at.desc(), Mandate.id.desc())
    ).first()


def direct_debit_available(session: Session, customer_id: str) -> bool:
    mandate = current_mandate(session, customer_id)
    return mandate is not None and mandate.status in DIRECT_DEBIT_READY


def mandate_url(root: str, mandate_id: str) -> str:
    """The signing page of a mandate, on the sandbox's console host (root URL)."""
    return f"{root}/dd-mandate/{mandate_id}"


def paused_methods(customer: Customer, today: date) -> set[str]:
    """Collection methods the customer pauses as a whole today.

    ``collectionPausedUntil`` is the last paused day, inclusive; after it the pause is over
    (the row is cleared lazily by whoever next writes the settings).
    """
    settings = customer.payment_settings or {}
    until = settings.get("collectionPausedUntil")
    if until is not None and date.fromisoformat(until) < today:
        return set()
    return set(settings.get("pausedCollectionMethods") or [])


def public_customer(session: Session, customer: Customer, root: str) -> dict[str, Any]:
    """The contract's ``Customer`` (``financialDetails`` is added by the list when asked for)."""
    mandate = current_mandate(session, customer.id)
    summary = None
    if mandate is not None:
        summary = {
            "id": mandate.id,
            "status": mandate.status,
            "url": mandate_url(root, mandate.id),
            "signedTime": iso(mandate.authorisation_time) if mandate.authorisation_time else None,
        }
    return {
        "id": customer.id,
        "name": customer.name,
        "externalId": customer.external_id,
        "people": customer.document.get("people", []),
        "addresses": customer.document.get("addresses", []),
        "externalData": customer.document.get("externalData"),
        "timezone": customer.document.get("timezone") or "Europe/London",
        "directDebitMandate": summary,
        "creationTime": iso(customer.created_at),
        "lastUpdatedTime": iso(customer.updated_at),
    }
