"""``client.customers``: customers, their workflow settings and payment settings."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from datetime import date, datetime
from typing import Any

from billing_api.resources._common import MethodsArg, Sort
from billing_api.resources._core import (
    Call,
    ListCall,
    SyncResource,
    body,
    list_call,
    model_call,
    query,
    sync_list,
    sync_op,
)
from billing_api.types import (
    Address,
    Customer,
    CustomerFinancialStatus,
    CustomerPaymentSettings,
    CustomerWorkflowSettings,
    DistributionCollectionMethod,
    ExternalData,
    MandateStatus,
    PaymentMethod,
    Person,
)

__all__ = ["Customers"]

People = Sequence[Person | Mapping[str, Any]] | None
Addresses = Sequence[Address | Mapping[str, Any]] | None


def list_(
    *,
    search_text: str | None = None,
    only_customers_with_activity: bool | None = None,
    include_customer_financial_details: bool | None = None,
    dd_mandate_statuses: Sequence[MandateStatus | str] | None = None,
    dd_mandate_signed_start_time: datetime | None = None,
    dd_mandate_signed_end_time: datetime | None = None,
    financial_statuses: Sequence[CustomerFinancialStatus | str] | None = None,
    last_updated_start_time: datetime | None = None,
    tag_ids: Sequence[str] | None = None,
    customer_ids: Sequence[str] | None = None,
    external_ids: Sequence[str] | None = None,
    sort: Sort = None,
    page_size: int | None = None,
) -> ListCall[Customer]:
    """Every customer matching the filters (all pages, lazily)."""
    params = query(
        search_text=search_text,
        only_customers_with_activity=only_customers_with_activity,
        include_customer_financial_details=include_customer_financial_details,
        dd_mandate_statuses=dd_mandate_statuses,
        dd_mandate_signed_start_time=dd_mandate_signed_start_time,
        dd_mandate_signed_end_time=dd_mandate_signed_end_time,
        financial_statuses=financial_statuses,
        last_updated_start_time=last_updated_start_time,
        tag_ids=tag_ids,
        customer_ids=customer_ids,
        external_ids=external_ids,
        sort=sort,
    )
    return list_call("customers.list", "customers", Customer, params=params, page_size=page_size)


def create(
    *,
    name: str,
    external_id: str | None = None,
    people: People = None,
    addresses: Addresses = None,
    external_data: ExternalData | Mapping[str, Any] | None = None,
    timezone: str | None = None,
) -> Call[Customer]:
    """Create a customer (idempotent by body: an identical body returns the existing one)."""
    payload = body(
        name=name,
        external_id=external_id,
        people=people,
        addresses=addresses,
        external_data=external_data,
        timezone=timezone,
    )
    return model_call("customers.create", Customer, json=payload)


def update(
    customer_id: str,
    *,
    name: str,
    external_id: str | None = None,
    people: People = None,
    addresses: Addresses = None,
    external_data: ExternalData | Mapping[str, Any] | None = None,
    timezone: str | None = None,
) -> Call[Customer]:
    """Replace a customer, named in the body (``PUT /customers``; PUT carries the whole object)."""
    payload = body(
        id=customer_id,
        name=name,
        external_id=external_id,
        people=people,
        addresses=addresses,
        external_data=external_data,
        timezone=timezone,
    )
    return model_call("customers.update", Customer, json=payload)


def update_by_id(
    customer_id: str,
    *,
    name: str,
    external_id: str | None = None,
    people: People = None,
    addresses: Addresses = None,
    external_data: ExternalData | Mapping[str, Any] | None = None,
    timezone: str | None = None,
) -> Call[Customer]:
    """Replace a customer named in the path (``PUT /customers/{id}``)."""
    payload = body(
        name=name,
        external_id=external_id,
        people=people,
        addresses=addresses,
        external_data=external_data,
        timezone=timezone,
    )
    return model_call(
        "customers.update_by_id", Customer, path_params={"id": customer_id}, json=payload
    )


def retrieve(
    customer_id: str, *, include_customer_financial_details: bool | None = None
) -> Call[Customer]:
    """One customer (with its financial details when asked)."""
    params = query(include_customer_financial_details=include_customer_financial_details)
    return model_call(
        "customers.retrieve", Customer, path_params={"id": customer_id}, params=params
    )


def upsert_workflow_settings(
    customer_id: str,
    *,
    on_demand_workflow_id: str | None = None,
    auto_collect_workflow_id: str | None = None,
    mandate_workflow_id: str | None = None,
    statement_workflow_id: str | None = None,
    reminders_enabled: bool | None = None,
) -> Call[CustomerWorkflowSettings]:
    """Set which workflows apply to a customer."""
    payload = body(
        customer_id=customer_id,
        on_demand_workflow_id=on_demand_workflow_id,
        auto_collect_workflow_id=auto_collect_workflow_id,
        mandate_workflow_id=mandate_workflow_id,
        statement_workflow_id=statement_workflow_id,
        reminders_enabled=reminders_enabled,
    )
    return model_call("customers.upsert_workflow_settings", CustomerWorkflowSettings, json=payload)


def upsert_payment_settings(
    customer_id: str,
    *,
    default_collection_method: DistributionCollectionMethod | str | None = None,
    allowed_payment_methods: Sequence[PaymentMethod | str] | None = None,
    dd_retry_count: int | None = None,
    paused_collection_methods: MethodsArg | None = None,
    collection_paused_until: date | None = None,
) -> Call[CustomerPaymentSettings]:
    """Set how a customer pays; ``paused_collection_methods`` pauses collection customer-wide
    (``[]`` resumes every method)."""
    payload = body(
        customer_id=customer_id,
        default_collection_method=default_collection_method,
        allowed_payment_methods=allowed_payment_methods,
        dd_retry_count=dd_retry_count,
        paused_collection_methods=paused_collection_methods,
        collection_paused_until=collection_paused_until,
    )
    return model_call("customers.upsert_payment_settings", CustomerPaymentSettings, json=payload)


def retrieve_workflow_settings(customer_id: str) -> Call[CustomerWorkflowSettings]:
    """The workflows that apply to a customer."""
    return model_call(
        "customers.retrieve_workflow_settings",
        CustomerWorkflowSettings,
        path_params={"id": customer_id},
    )


def retrieve_payment_settings(customer_id: str) -> Call[CustomerPaymentSettings]:
    """How a customer pays, and its collection pause."""
    return model_call(
        "customers.retrieve_payment_settings",
        CustomerPaymentSettings,
        path_params={"id": customer_id},
    )


class Customers(SyncResource):
    """Customers (blocking)."""

    list = sync_list(list_)
    create = sync_op(create)
    update = sync_op(update)
    update_by_id = sync_op(update_by_id)
    retrieve = sync_op(retrieve)
    upsert_workflow_settings = sync_op(upsert_workflow_settings)
    upsert_payment_settings = sync_op(upsert_payment_settings)
    retrieve_workflow_settings = sync_op(retrieve_workflow_settings)
    retrieve_payment_settings = sync_op(retrieve_payment_settings)
