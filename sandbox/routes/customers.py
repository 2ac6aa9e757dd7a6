"""``/customers``: create, update (two forms), get, list with filters, workflow/payment settings.

Cards on file and autopilot settings live in :mod:`sandbox.routes.customer_extras`, registered here.
Literal paths (``/customers/workflow_settings``) are declared before ``/customers/{id}``.
"""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Request, Response

from sandbox import customer_settings, state
from sandbox.billing_models import Customer
from sandbox.customer_query import SORTABLE, CustomerFilters, customer_query, financial_details
from sandbox.customer_records import create_customer, require_body_id, update_customer
from sandbox.customers import get_customer, public_customer
from sandbox.deps import SessionDep
from sandbox.mandates import STATUSES as MANDATE_STATUSES
from sandbox.pagination import PageDep, paginate
from sandbox.routes import customer_extras
from sandbox.routes.common import BillerId, JsonBody, root_of
from sandbox.validation import column, default_sort, enum_filter, multi, utc

router = APIRouter(tags=["customers"])

CustomerIdPath = Annotated[str, Path(alias="id", min_length=1)]
FINANCIAL_STATUSES = (
    "DRAFT",
    "OUTSTANDING",
    "PENDING_PAYMENTS",
    "OVERDUE",
    "FULLY_PAID",
    "NO_INVOICES",
)


def _render(session: SessionDep, customer: Customer, root: str, financial: bool) -> dict[str, Any]:
    data = public_customer(session, customer, root)
    if financial:
        data["financialDetails"] = financial_details(session, customer, state.now(session).date())
    return data


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
    request: Request,
    page: PageDep,
    only_with_activity: Annotated[bool, Query(alias="onlyCustomersWithActivity")] = False,
    search_text: Annotated[str | None, Query(alias="searchText", max_length=255)] = None,
    signed_from: Annotated[datetime | None, Query(alias="ddMandateSignedStartTime")] = None,
    signed_until: Annotated[datetime | None, Query(alias="ddMandateSignedEndTime")] = None,
    mandate_statuses: Annotated[list[str] | None, Query(alias="ddMandateStatuses")] = None,
    include_financial: Annotated[bool, Query(alias="includeCustomerFinancialDetails")] = False,
    financial_statuses: Annotated[list[str] | None, Query(alias="financialStatuses")] = None,
    updated_from: Annotated[datetime | None, Query(alias="lastUpdatedStartTime")] = None,
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
    root = root_of(request)
    return paginate(
        session,
        customer_query(session, biller_id, filters, today),
        default_sort(page, "creationTime,asc"),
        key="customers",
        sortable=SORTABLE,
        tiebreak=column(Customer.id),
        render=lambda customer: _render(session, customer, root, include_financial),
    )


@router.post(
    "/customers", operation_id="customers.create", summary="Create a customer", status_code=201
)
def create(
    biller_id: BillerId, session: SessionDep, request: Request, response: Response, body: JsonBody
) -> dict[str, Any]:
    """201 with a new customer; 200 with the existing one for an identical body [C]."""
    customer, created = create_customer(session, biller_id, body, state.now(session))
    if not created:
        response.status_code = 200
    return public_customer(session, customer, root_of(request))


@router.put(
    "/customers", operation_id="customers.update", summary="Update a customer (id in the body)"
)
def update(
    biller_id: BillerId, session: SessionDep, request: Request, body: JsonBody
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, require_body_id(body))
    update_customer(session, customer, body, state.now(session), path_id=None)
    return public_customer(session, customer, root_of(request))


@router.get(
    "/customers/{id}/workflow_settings",
    operation_id="customers.retrieve_workflow_settings",
    summary="Retrieve workflow settings",
)
def retrieve_workflow_settings(
    biller_id: BillerId, session: SessionDep, customer_id: CustomerIdPath
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    return customer_settings.public_workflow_settings(customer)


@router.get(
    "/customers/{id}/payment_settings",
    operation_id="customers.retrieve_payment_settings",
    summary="Retrieve payment settings",
)
def retrieve_payment_settings(
    biller_id: BillerId, session: SessionDep, customer_id: CustomerIdPath
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    return customer_settings.public_payment_settings(customer, state.now(session).date())


@router.get("/customers/{id}", operation_id="customers.retrieve", summary="Retrieve a customer")
def retrieve(
    biller_id: BillerId,
    session: SessionDep,
    request: Request,
    customer_id: CustomerIdPath,
    include_financial: Annotated[str | None, Query(alias="includeCustomerFinancialDetails")] = None,
) -> dict[str, Any]:
    """Read leniently: the contract declares no 400 here, so anything but ``true`` is false."""
    customer = get_customer(session, biller_id, customer_id)
    wanted = (include_financial or "").strip().lower() in ("true", "1")
    return _render(session, customer, root_of(request), wanted)


@router.put(
    "/customers/{id}", operation_id="customers.update_by_id", summary="Update a customer by id"
)
def update_by_id(
    biller_id: BillerId,
    session: SessionDep,
    request: Request,
    customer_id: CustomerIdPath,
    body: JsonBody,
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    update_customer(session, customer, body, state.now(session), path_id=customer_id)
    return public_customer(session, customer, root_of(request))


customer_extras.register(router)
