"""Direct-debit mandates: create-if-missing and list per customer, search, get, cancel, reinstate.

Action routes and the literal search path come before ``/customers/directdebitmandates/{id}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query

from sandbox.core import state
from sandbox.core.bodies import JsonBody
from sandbox.core.deps import BillerId, RootDep, SessionDep
from sandbox.core.pagination import PageDep, paginate
from sandbox.core.validation import QueryBool, enum_filter, multi
from sandbox.customers import mandates
from sandbox.customers.paths import CustomerById

router = APIRouter(tags=["mandates"])

MandateIdPath = Annotated[str, Path(alias="id", min_length=1)]


@router.put(
    "/customers/directdebitmandates/{id}:reinstate",
    operation_id="mandates.reinstate",
    summary="Reinstate a cancelled mandate",
)
def reinstate(
    biller_id: BillerId, session: SessionDep, root: RootDep, mandate_id: MandateIdPath
) -> dict[str, Any]:
    mandate = mandates.get_mandate(session, biller_id, mandate_id)
    mandates.reinstate(session, mandate, state.now(session))
    return mandates.public(session, mandate, root)


@router.put(
    "/customers/directdebitmandates/{id}:cancel",
    operation_id="mandates.cancel",
    summary="Cancel a mandate",
)
def cancel(
    biller_id: BillerId, session: SessionDep, root: RootDep, mandate_id: MandateIdPath
) -> dict[str, Any]:
    mandate = mandates.get_mandate(session, biller_id, mandate_id)
    mandates.cancel(mandate, state.now(session))
    return mandates.public(session, mandate, root)


@router.get(
    "/customers/directdebitmandates",
    operation_id="mandates.list",
    summary="Search mandates by filters",
)
def search(
    biller_id: BillerId,
    session: SessionDep,
    root: RootDep,
    page: PageDep,
    customer_id: Annotated[str | None, Query(alias="customerId")] = None,
    statuses: Annotated[list[str] | None, Query()] = None,
    reason_codes: Annotated[list[str] | None, Query(alias="statusReasonCodes")] = None,
    can_be_reinstated: Annotated[QueryBool | None, Query(alias="canBeReinstated")] = None,
) -> dict[str, Any]:
    filters = mandates.MandateFilters(
        customer_ids=multi([customer_id]) if customer_id else (),
        statuses=enum_filter(statuses, mandates.STATUSES, "statuses"),
        reason_codes=enum_filter(reason_codes, mandates.REASON_CODES, "statusReasonCodes"),
        can_be_reinstated=can_be_reinstated,
    )
    return paginate(
        session,
        mandates.search(biller_id, filters),
        page,
        key="mandates",
        render=lambda mandate: mandates.public(session, mandate, root),
    )


@router.get(
    "/customers/directdebitmandates/{id}",
    operation_id="mandates.retrieve",
    summary="Retrieve a mandate",
)
def retrieve(
    biller_id: BillerId, session: SessionDep, root: RootDep, mandate_id: MandateIdPath
) -> dict[str, Any]:
    mandate = mandates.get_mandate(session, biller_id, mandate_id)
    return mandates.public(session, mandate, root)


@router.get(
    "/customers/{id}/directdebitmandates",
    operation_id="mandates.list_for_customer",
    summary="Mandates of a customer",
)
def list_for_customer(
    session: SessionDep,
    root: RootDep,
    customer: CustomerById,
    page: PageDep,
) -> dict[str, Any]:
    return paginate(
        session,
        mandates.of_customer(customer),
        page,
        key="mandates",
        render=lambda mandate: mandates.public(session, mandate, root),
    )


@router.put(
    "/customers/{id}/directdebitmandates",
    operation_id="mandates.create",
    summary="Create a mandate",
)
def create(
    session: SessionDep,
    root: RootDep,
    customer: CustomerById,
    body: JsonBody,
) -> dict[str, Any]:
    """200 with the customer's live mandate, created in CREATED when it has none [C]."""
    mandate = mandates.create_from_body(session, customer, body, state.now(session))
    return mandates.public(session, mandate, root)
