"""The customer a path names, as a FastAPI dependency of the customer-area routes.

The contract names it ``{id}`` on ``/customers/{id}...`` and ``{customerId}`` on the customer's
sub-resources (autopilot settings, cards on file); either way another biller's customer is 404.
"""

from __future__ import annotations

from typing import Annotated

from fastapi import Depends, Path

from sandbox.core.deps import BillerId, SessionDep
from sandbox.customers.lookup import get_customer
from sandbox.models import Customer


def _by_id(
    biller_id: BillerId,
    session: SessionDep,
    customer_id: Annotated[str, Path(alias="id", min_length=1)],
) -> Customer:
    return get_customer(session, biller_id, customer_id)


def _by_customer_id(
    biller_id: BillerId,
    session: SessionDep,
    customer_id: Annotated[str, Path(alias="customerId", min_length=1)],
) -> Customer:
    return get_customer(session, biller_id, customer_id)


# ``/customers/{id}...``
CustomerById = Annotated[Customer, Depends(_by_id)]
# ``/customers/{customerId}/...``
CustomerInPath = Annotated[Customer, Depends(_by_customer_id)]
