"""Direct-debit mandates: create-if-missing and list per customer, search, get, cancel, reinstate.

Action routes and the literal search path come before ``/customers/directdebitmandates/{id}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Request
from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import and_, not_, select

from sandbox import mandates, state
from sandbox.billing_models import Mandate
from sandbox.customers import get_customer
from sandbox.deps import SessionDep
from sandbox.pagination import PageDep, paginate
from sandbox.routes.common import BillerId, root_of
from sandbox.validation import (
    check_https_url,
    column,
    default_sort,
    enum_filter,
    multi,
    parse_body,
)

router = APIRouter(tags=["mandates"])

MandateIdPath = Annotated[str, Path(alias="id", min_length=1)]
CustomerIdPath = Annotated[str, Path(alias="id", min_length=1)]


class MandateCreateIn(BaseModel):
    """Only ``redirectUrl`` is read; bank details cannot be sent, other fields are ignored [I]."""

    model_config = ConfigDict(extra="ignore")
    redirectUrl: str | None = Field(None, max_length=2048)

    _https = field_validator("redirectUrl")(check_https_url)


@router.put(
    "/customers/directdebitmandates/{id}:reinstate",
    operation_id="mandates.reinstate",
    summary="Reinstate a cancelled mandate",
)
def reinstate(
    biller_id: BillerId, session: SessionDep, request: Request, mandate_id: MandateIdPath
) -> dict[str, Any]:
    mandate = mandates.get_mandate(session, biller_id, mandate_id)
    mandates.reinstate(session, mandate, state.now(session))
    return mandates.public(session, mandate, root_of(request))


@router.put(
    "/customers/directdebitmandates/{id}:cancel",
    operation_id="mandates.cancel",
    summary="Cancel a mandate",
)
def cancel(
    biller_id: BillerId, session: SessionDep, request: Request, mandate_id: MandateIdPath
) -> dict[str, Any]:
    mandate = mandates.get_mandate(session, biller_id, mandate_id)
    mandates.cancel(mandate, state.now(session))
    return mandates.public(session, mandate, root_of(request))


@router.get(
    "/customers/directdebitmandates",
    operation_id="mandates.list",
    summary="Search mandates by filters",
)
def search(
    biller_id: BillerId,
    session: SessionDep,
    request: Request,
    page: PageDep,
    customer_id: Annotated[str | None, Query(alias="customerId")] = None,
    statuses: Annotated[list[str] | None, Query()] = None,
    reason_codes: Annotated[list[str] | None, Query(alias="statusReasonCodes")] = None,
    can_be_reinstated: Annotated[bool | None, Query(alias="canBeReinstated")] = None,
) -> dict[str, Any]:
    query = select(Mandate).where(Mandate.biller_id == biller_id)
    if customer_id:
        query = query.where(Mandate.customer_id.in_(multi([customer_id])))
    wanted = enum_filter(statuses, mandates.STATUSES, "statuses")
    if wanted:
        query = query.where(Mandate.status.in_(wanted))
    reasons = enum_filter(reason_codes, mandates.REASON_CODES, "statusReasonCodes")
    if reasons:
        query = query.where(Mandate.status_reason_code.in_(reasons))
    if can_be_reinstated is not None:
        reinstatable = and_(Mandate.status == "CANCELLED", Mandate.can_be_reinstated.is_(True))
        query = query.where(reinstatable if can_be_reinstated else not_(reinstatable))
    root = root_of(request)
    return paginate(
        session,
        query,
        default_sort(page, "creationTime,asc"),
        key="mandates",
        sortable=mandates.SORTABLE,
        tiebreak=column(Mandate.id),
        render=lambda mandate: mandates.public(session, mandate, root),
    )


@router.get(
    "/customers/directdebitmandates/{id}",
    operation_id="mandates.retrieve",
    summary="Retrieve a mandate",
)
def retrieve(
    biller_id: BillerId, session: SessionDep, request: Request, mandate_id: MandateIdPath
) -> dict[str, Any]:
    mandate = mandates.get_mandate(session, biller_id, mandate_id)
    return mandates.public(session, mandate, root_of(request))


@router.get(
    "/customers/{id}/directdebitmandates",
    operation_id="mandates.list_for_customer",
    summary="Mandates of a customer",
)
def list_for_customer(
    biller_id: BillerId,
    session: SessionDep,
    request: Request,
    customer_id: CustomerIdPath,
    page: PageDep,
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    root = root_of(request)
    return paginate(
        session,
        select(Mandate).where(Mandate.customer_id == customer.id),
        default_sort(page, "creationTime,desc"),  # newest first [I]
        key="mandates",
        sortable=mandates.SORTABLE,
        tiebreak=column(Mandate.id),
        render=lambda mandate: mandates.public(session, mandate, root),
    )


@router.put(
    "/customers/{id}/directdebitmandates",
    operation_id="mandates.create",
    summary="Create a mandate",
)
def create(
    biller_id: BillerId,
    session: SessionDep,
    request: Request,
    customer_id: CustomerIdPath,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> dict[str, Any]:
    """200 with the customer's live mandate, created in CREATED when it has none [C]."""
    customer = get_customer(session, biller_id, customer_id)
    data = parse_body(MandateCreateIn, body if body is not None else {})
    mandate, _created = mandates.create_or_get(
        session, customer, data.redirectUrl, state.now(session)
    )
    return mandates.public(session, mandate, root_of(request))
