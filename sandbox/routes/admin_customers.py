"""``/_sandbox/customers/...``: set a customer's direct-debit state and cards up for tests.

Not part of the contract; no authentication, loopback clients only (like ``/_sandbox``).
"""

from __future__ import annotations

from typing import Annotated, Any, Literal

from fastapi import APIRouter, Body, Path, Request
from pydantic import BaseModel, ConfigDict, Field

from sandbox import cards, mandates, state
from sandbox.billing_models import Customer
from sandbox.customers import current_mandate
from sandbox.deps import AdminGuard, SessionDep
from sandbox.errors import not_found
from sandbox.routes.common import root_of
from sandbox.validation import invalid, parse_body

router = APIRouter(prefix="/_sandbox", dependencies=[AdminGuard], include_in_schema=False)

CustomerIdPath = Annotated[str, Path(alias="customerId")]
MandateStatus = Literal["CREATED", "PENDING", "ACTIVE", "CANCELLED", "MIGRATING"]


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
    mandates.set_status(
        mandate,
        data.status,
        data.statusReasonCode,
        now,
        can_be_reinstated=data.canBeReinstated,
        bank_account_number=data.bankAccountNumber,
    )
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
