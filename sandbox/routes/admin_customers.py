"""``/_sandbox/customers/...``: set a customer's direct-debit state and cards up for tests.

Not part of the contract; no authentication, loopback clients only (like ``/_sandbox``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path

from sandbox.core import state
from sandbox.core.bodies import JsonBody
from sandbox.core.deps import AdminGuard, RootDep, SessionDep
from sandbox.customers import cards, forced_mandates, mandates
from sandbox.customers.lookup import find_customer

router = APIRouter(prefix="/_sandbox", dependencies=[AdminGuard], include_in_schema=False)

CustomerIdPath = Annotated[str, Path(alias="customerId")]


@router.put("/customers/{customerId}/mandate")
def force_mandate(
    session: SessionDep,
    root: RootDep,
    customer_id: CustomerIdPath,
    body: JsonBody,
) -> dict[str, Any]:
    """Force the customer's mandate into a state (a mandate is created first if it has none)."""
    customer = find_customer(session, customer_id)
    mandate = forced_mandates.force(session, customer, body)
    return mandates.public(session, mandate, root)


@router.post("/customers/{customerId}/cards", status_code=201)
def add_card(
    session: SessionDep,
    customer_id: CustomerIdPath,
    body: JsonBody,
) -> dict[str, Any]:
    """Save a test card (``brand``, ``last4``, ``expiryMonth``, ``expiryYear``, all optional)."""
    customer = find_customer(session, customer_id)
    now = state.now(session)
    card = cards.add_card(session, customer, body, now)
    return cards.public_card(card, now.date())
