"""Forcing a customer's mandate into a state, for tests (``PUT /_sandbox/customers/{id}/mandate``):
a mandate is created first when the customer has none, and the move emits the event the payer,
the bank or Bacs making the same move would emit."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from sandbox.core import state
from sandbox.core.validation import invalid, parse_body
from sandbox.customers import mandates
from sandbox.customers.lookup import current_mandate
from sandbox.models import Customer, Mandate
from sandbox.webhooks import events

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


def force(session: Session, customer: Customer, body: Any) -> Mandate:
    """Put the customer's current mandate in the state the body names (:class:`MandateForce`)."""
    data = parse_body(MandateForce, body)
    if data.statusReasonCode is not None and data.statusReasonCode not in mandates.REASON_CODES:
        raise invalid("statusReasonCode", "not a known mandate status reason code")
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
    return mandate
