"""``/_sandbox/customers/...``: set a customer's direct-debit state and cards up for tests.

Not part of the contract; no authentication, loopback clients only (like ``/_sandbox``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from sandbox import cards, events, mandates, state
from sandbox.billing_models import Customer
from sandbox.customers import current_mandate
from sandbox.deps import AdminGuard, SessionDep
from sandbox.errors import not_found
from sandbox.routes.common import root_of
from sandbox.validation import invalid, parse_body

router = APIRouter(prefix="/_sandbox", dependencies=[AdminGuard], include_in_schema=False)

CustomerIdPath = Annotated[str, Path(alias="customerId")]
MandateStatus = Literal["CREATED", "PENDING", "ACTIVE", "CANCELLED", "MIGRATING"]


# The event a forced move emits: what the payer, the bank or Bacs doing the same would emit.
_INTO = {
    "CANCELLED": "DIRECT_DEBIT_MANDATE_CANCELLED",
    "ACTIVE": "DIRECT_DEBIT_MANDATE_ACTIVE",
    "MIGRATING": "DIRECT_DEBIT_MANDATE_MIGRATING",
}
FORCED_EVENTS = {
    **{(old, new): name for new, name in _INTO.items() for old in mandates.STATUSES if old != new},
    ("CREATED", "PENDING"): "DIRECT_DEBIT_MANDATE_SIGNED",
    ("CANCELLED", "PENDING"): "DIRECT_DEBIT_MANDATE_REINSTATED",
}


class MandateForce(BaseModel):
    """The state to put the customer's current mandate in. ``statusReasonCode`` defaults to
    ``INSTRUCTION_CANCELLED_BY_PAYER`` for CANCELLED; ``canBeReinstated`` defaults to whether
    that reason allows it."""

    model_config = ConfigDict(extra="forbid")
    status: MandateStatus
    statusReasonCode: str | None = None
    canBeReinstated: bool | None = None
    bankAccountNumber: str | None = Field(None, max_length=16)


def _customer(session: SessionDep, customer_id: str) -> Customer:
    customer = session.get(Customer, customer_id)
    if customer is None:
        raise not_found("customer")
    return customer


@router.put("/customers/{customerId}/mandate")
def force_mandate(
    session: SessionDep,
    request: Request,
    customer_id: CustomerIdPath,
    body: Annotated[dict[str, Any], Body()],
) -> dict[str, Any]:
    """Force the customer's mandate into a state (a mandate is created first if it has none)."""
    data = parse_body(MandateForce, body)
    if data.statusReasonCode is not None and data.statusReasonCode not in mandates.REASON_CODES:
        raise invalid("statusReasonCode", "not a known mandate status reason code")
    customer = _customer(session, customer_id)
    now = state.now(session)
    mandate = current_mandate(session, customer.id)
    if mandate is None:
        mandate, _ = mandates.create_or_get(session, customer, None, now)
    before = mandate.status
    mandates.set_status(
        mandate,
        data.status,
        data.statusReasonCode,
        now,
        can_be_reinstated=data.canBeReinstated,
        bank_account_number=data.bankAccountNumber,
    )
    if (name := FORCED_EVENTS.get((before, mandate.status))) is not None:
        events.mandate_event(session, mandate, name)
    return mandates.public(session, mandate, root_of(request))


@router.post("/customers/{customerId}/cards", status_code=201)
def add_card(
    session: SessionDep,
    customer_id: CustomerIdPath,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> dict[str, Any]:
    """Save a test card (``brand``, ``last4``, ``expiryMonth``, ``expiryYear``, all optional)."""
    customer = _customer(session, customer_id)
    now = state.now(session)
    card = cards.add_card(session, customer, body, now)
    return cards.public_card(card, now.date())
