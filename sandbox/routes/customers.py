"""``/customers``: create, update (two forms), get, list with filters, workflow/payment settings.

Cards on file and autopilot settings have their own router (:mod:`sandbox.routes.customer_extras`).
Literal paths (``/customers/workflow_settings``) are declared before ``/customers/{id}``.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Query, Response

from sandbox.core import state
from sandbox.core.bodies import JsonBody
from sandbox.core.deps import BillerId, RootDep, SessionDep
from sandbox.core.pagination import PageDep, paginate
from sandbox.core.validation import QueryBool, QueryTime, enum_filter, multi, utc
from sandbox.customers import settings as customer_settings
from sandbox.customers.lookup import get_customer, public_customer
from sandbox.customers.mandates import STATUSES as MANDATE_STATUSES
from sandbox.customers.paths import CustomerById
from sandbox.customers.query import FINANCIAL_STATUSES, CustomerFilters, customers, render_customer
from sandbox.customers.records import create_customer, require_body_id, update_customer

router = APIRouter(tags=["customers"])


@router.put(
    "/customers/workflow_settings",
    operation_id="customers.upsert_workflow_settings",
    summary="Upsert customer workflow settings",
)
def upsert_workflow_settings(
    biller_id: BillerId, session: SessionDep, body: JsonBody
) -> dict[str, Any]:
    customer = customer_settings.upsert_workflow_settings(
        session, biller_id, body, state.now(session)
    )
    return customer_settings.public_workflow_settings(customer)


@router.put(
    "/customers/payment_settings",
    operation_id="customers.upsert_payment_settings",
    summary="Upsert customer payment settings (including the customer-level collection pause)",
)
def upsert_payment_settings(
    biller_id: BillerId, session: SessionDep, body: JsonBody
) -> dict[str, Any]:
    now = state.now(session)
    customer = customer_settings.upsert_payment_settings(session, biller_id, body, now)
    return customer_settings.public_payment_settings(customer, now.date())


@router.get("/customers", operation_id="customers.list", summary="List customers by filter")
def list_customers(
    biller_id: BillerId,
    session: SessionDep,
    root: RootDep,
    page: PageDep,
    only_with_activity: Annotated[QueryBool, Query(alias="onlyCustomersWithActivity")] = False,
    search_text: Annotated[str | None, Query(alias="searchText", max_length=255)] = None,
    signed_from: Annotated[QueryTime | None, Query(alias="ddMandateSignedStartTime")] = None,
    signed_until: Annotated[QueryTime | None, Query(alias="ddMandateSignedEndTime")] = None,
    mandate_statuses: Annotated[list[str] | None, Query(alias="ddMandateStatuses")] = None,
    include_financial: Annotated[QueryBool, Query(alias="includeCustomerFinancialDetails")] = False,
    financial_statuses: Annotated[list[str] | None, Query(alias="financialStatuses")] = None,
    updated_from: Annotated[QueryTime | None, Query(alias="lastUpdatedStartTime")] = None,
    tag_ids: Annotated[list[str] | None, Query(alias="tagIds")] = None,
    customer_ids: Annotated[list[str] | None, Query(alias="customerIds")] = None,
    external_ids: Annotated[list[str] | None, Query(alias="externalIds")] = None,
) -> dict[str, Any]:
    filters = CustomerFilters(
        only_with_activity=only_with_activity,
        search_text=search_text,
        signed_from=utc(signed_from),
        signed_until=utc(signed_until),
        mandate_statuses=enum_filter(mandate_statuses, MANDATE_STATUSES, "ddMandateStatuses"),
        financial_statuses=enum_filter(financial_statuses, FINANCIAL_STATUSES, "financialStatuses"),
        updated_from=utc(updated_from),
        tag_ids=multi(tag_ids),
        customer_ids=multi(customer_ids),
        external_ids=multi(external_ids),
    )
    today = state.now(session).date()
    return paginate(
        session,
        customers(session, biller_id, filters, today),
        page,
        key="customers",
        render=lambda customer: render_customer(session, customer, root, include_financial),
    )


@router.post(
    "/customers", operation_id="customers.create", summary="Create a customer", status_code=201
)
def create(
    biller_id: BillerId, session: SessionDep, root: RootDep, response: Response, body: JsonBody
) -> dict[str, Any]:
    """201 with a new customer; 200 with the existing one for an identical body [C]."""
    customer, created = create_customer(session, biller_id, body, state.now(session))
    if not created:
        response.status_code = 200
    return public_customer(session, customer, root)


@router.put(
    "/customers", operation_id="customers.update", summary="Update a customer (id in the body)"
)
def update(
    biller_id: BillerId, session: SessionDep, root: RootDep, body: JsonBody
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, require_body_id(body))
    update_customer(session, customer, body, state.now(session), path_id=None)
    return public_customer(session, customer, root)


@router.get(
    "/customers/{id}/workflow_settings",
    operation_id="customers.retrieve_workflow_settings",
    summary="Retrieve workflow settings",
)
def retrieve_workflow_settings(
    session: SessionDep,
    customer: CustomerById,
) -> dict[str, Any]:
    return customer_settings.public_workflow_settings(customer)


@router.get(
    "/customers/{id}/payment_settings",
    operation_id="customers.retrieve_payment_settings",
    summary="Retrieve payment settings",
)
def retrieve_payment_settings(
    session: SessionDep,
    customer: CustomerById,
) -> dict[str, Any]:
    return customer_settings.public_payment_settings(customer, state.now(session).date())


@router.get("/customers/{id}", operation_id="customers.retrieve", summary="Retrieve a customer")
def retrieve(
    session: SessionDep,
    root: RootDep,
    customer: CustomerById,
    include_financial: Annotated[QueryBool, Query(alias="includeCustomerFinancialDetails")] = False,
) -> dict[str, Any]:
    return render_customer(session, customer, root, include_financial)


@router.put(
    "/customers/{id}", operation_id="customers.update_by_id", summary="Update a customer by id"
)
def update_by_id(
    session: SessionDep,
    root: RootDep,
    customer: CustomerById,
    body: JsonBody,
) -> dict[str, Any]:
    update_customer(session, customer, body, state.now(session), path_id=customer.id)
    return public_customer(session, customer, root)
