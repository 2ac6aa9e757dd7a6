"""``client.payment_requests``: payment requests, their lifecycle, distribution, bulk import
and collection pause/resume."""

from __future__ import annotations

import warnings
from collections.abc import Mapping, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from billing_api.resources._common import CustomerArg, MethodsArg, Sort, customer_ref, methods_body
from billing_api.resources._core import (
    Call,
    ListCall,
    SyncResource,
    body,
    list_call,
    model_call,
    money,
    no_content_call,
    query,
    sync_list,
    sync_op,
)
from billing_api.resources._files import FileArg, read_upload
from billing_api.types import (
    ActivationCollectionMethod,
    AssociationType,
    BulkImportItem,
    BulkImportItemStatus,
    BulkImportJob,
    Distribution,
    DistributionCollectionMethod,
    DistributionUpdateResponse,
    PaymentRequest,
    PaymentRequestStatus,
    parse_money,
)

__all__ = ["PaymentRequests"]

DistributionArg = Distribution | Mapping[str, Any] | None


def list_(
    *,
    customer_id: str | None = None,
    external_customer_id: str | None = None,
    statuses: Sequence[PaymentRequestStatus | str] | None = None,
    association_types: Sequence[AssociationType | str] | None = None,
    pay_by_start_date: date | None = None,
    pay_by_end_date: date | None = None,
    created_start_date: date | None = None,
    created_end_date: date | None = None,
    paid_start_time: datetime | None = None,
    paid_end_time: datetime | None = None,
    invoice_id: str | None = None,
    external_ids: Sequence[str] | None = None,
    last_updated_start_time: datetime | None = None,
    sort: Sort = None,
    page_size: int | None = None,
) -> ListCall[PaymentRequest]:
    """Every payment request matching the filters (``statuses`` also takes the old names)."""
    params = query(
        customer_id=customer_id,
        external_customer_id=external_customer_id,
        statuses=statuses,
        association_types=association_types,
        pay_by_start_date=pay_by_start_date,
        pay_by_end_date=pay_by_end_date,
        created_start_date=created_start_date,
        created_end_date=created_end_date,
        paid_start_time=paid_start_time,
        paid_end_time=paid_end_time,
        invoice_id=invoice_id,
        external_ids=external_ids,
        last_updated_start_time=last_updated_start_time,
        sort=sort,
    )
    return list_call(
        "payment_requests.list",
        "paymentRequests",
        PaymentRequest,
        params=params,
        page_size=page_size,
    )


def create(
    *,
    customer: CustomerArg,
    description: str,
    total_amount: Decimal | int | str,
    currency_code: str = "GBP",
    tax_rate: Decimal | int | str | None = None,
    reference: str | None = None,
    pay_by_date: date | None = None,
    distribution: DistributionArg = None,
    redirect_url: str | None = None,
    external_id: str | None = None,
) -> Call[PaymentRequest]:
    """Create a payment request (a draft unless ``distribution`` sends it). Not idempotent."""
    payload = body(
        customer=customer_ref(customer),
        description=description,
        total_amount=money(total_amount, "total_amount"),
        currency_code=currency_code,
        tax_rate=None if tax_rate is None else parse_money(tax_rate),
        reference=reference,
        pay_by_date=pay_by_date,
        distribution=distribution,
        redirect_url=redirect_url,
        external_id=external_id,
    )
    return model_call("payment_requests.create", PaymentRequest, json=payload)


def retrieve(payment_request_id: str) -> Call[PaymentRequest]:
    """One payment request."""
    return model_call(
        "payment_requests.retrieve", PaymentRequest, path_params={"id": payment_request_id}
    )


def update(
    payment_request_id: str,
    *,
    description: str,
    total_amount: Decimal | int | str,
    tax_rate: Decimal | int | str | None = None,
    reference: str | None = None,
    pay_by_date: date | None = None,
    distribution: DistributionArg = None,
    redirect_url: str | None = None,
) -> Call[PaymentRequest]:
    """Replace a payment request's content (PUT: send every field you want kept)."""
    payload = body(
        description=description,
        total_amount=money(total_amount, "total_amount"),
        tax_rate=None if tax_rate is None else parse_money(tax_rate),
        reference=reference,
        pay_by_date=pay_by_date,
        distribution=distribution,
        redirect_url=redirect_url,
    )
    return model_call(
        "payment_requests.update",
        PaymentRequest,
        path_params={"id": payment_request_id},
        json=payload,
    )


def _action(operation_id: str, payment_request_id: str) -> Call[PaymentRequest]:
    return model_call(operation_id, PaymentRequest, path_params={"id": payment_request_id})


def void(payment_request_id: str) -> Call[PaymentRequest]:
    """Void a payment request."""
    return _action("payment_requests.void", payment_request_id)


def mark_as_paid(payment_request_id: str) -> Call[PaymentRequest]:
    """Record that the payment request was paid outside the service."""
    return _action("payment_requests.mark_as_paid", payment_request_id)


def cancel(payment_request_id: str) -> Call[PaymentRequest]:
    """Deprecated: use :meth:`void` (the service renamed CANCELLED to VOID)."""
    warnings.warn(
        "payment_requests.cancel is deprecated; use payment_requests.void",
        DeprecationWarning,
        # builder <- generated method <- the caller's line
        stacklevel=3,
    )
    return _action("payment_requests.cancel", payment_request_id)


def cancel_collection_on_failure(payment_request_id: str) -> Call[PaymentRequest]:
    """Stop collecting after the next failed attempt."""
    return _action("payment_requests.cancel_collection_on_failure", payment_request_id)


def activate(
    payment_request_id: str,
    *,
    collection_method: ActivationCollectionMethod | str,
    custom_message: str | None = None,
    template_id: str | None = None,
) -> Call[PaymentRequest]:
    """Send a draft payment request. Not idempotent (a repeat may send twice)."""
    payload = body(
        collection_method=collection_method,
        custom_message=custom_message,
        template_id=template_id,
    )
    return model_call(
        "payment_requests.activate",
        PaymentRequest,
        path_params={"id": payment_request_id},
        json=payload,
    )


def update_distribution(
    *, payment_request_ids: Sequence[str], distribution: Distribution | Mapping[str, Any]
) -> Call[DistributionUpdateResponse]:
    """Set how several payment requests are sent."""
    if isinstance(payment_request_ids, str):
        raise TypeError("payment_request_ids: a list of ids, not a single string")
    payload = body(payment_request_ids=list(payment_request_ids), distribution=distribution)
    return model_call(
        "payment_requests.update_distribution", DistributionUpdateResponse, json=payload
    )


def bulk_import(
    file: FileArg,
    *,
    collection_method: DistributionCollectionMethod | str = "NONE",
    delete_missing: bool = False,
    filename: str | None = None,
) -> Call[BulkImportJob]:
    """Upload a CSV of payment requests (multipart field ``inputFile``); answers 202 with a job
    processed in the background. ``delete_missing`` deletes requests absent from the file.
    Not idempotent: record an intent before calling."""
    name, content = read_upload(file, filename)
    params = query(
        collection_method=collection_method, delete_missing_payment_requests=delete_missing
    )
    return model_call(
        "payment_requests.bulk_import",
        BulkImportJob,
        params=params,
        files={"inputFile": (name, content, "text/csv")},
    )


def retrieve_bulk_import(job_id: str) -> Call[BulkImportJob]:
    """A bulk import job (poll until ``is_finished``)."""
    return model_call(
        "payment_requests.retrieve_bulk_import", BulkImportJob, path_params={"jobId": job_id}
    )


def list_bulk_import_items(
    job_id: str,
    *,
    statuses: Sequence[BulkImportItemStatus | str] | None = None,
    sort: Sort = None,
    page_size: int | None = None,
) -> ListCall[BulkImportItem]:
    """The outcome of every row of a bulk import."""
    return list_call(
        "payment_requests.list_bulk_import_items",
        "items",
        BulkImportItem,
        path_params={"jobId": job_id},
        params=query(statuses=statuses, sort=sort),
        page_size=page_size,
    )


def pause_collection(payment_request_id: str, *, methods: MethodsArg) -> Call[None]:
    """Pause collection by ``methods`` for one payment request (overrides the customer's)."""
    return no_content_call(
        "payment_requests.pause_collection",
        path_params={"paymentRequestId": payment_request_id},
        json=methods_body(methods),
    )


def resume_collection(payment_request_id: str, *, methods: MethodsArg) -> Call[None]:
    """Resume collection by ``methods`` for one payment request."""
    return no_content_call(
        "payment_requests.resume_collection",
        path_params={"paymentRequestId": payment_request_id},
        json=methods_body(methods),
    )


class PaymentRequests(SyncResource):
    """Payment requests (blocking)."""

    list = sync_list(list_)
    create = sync_op(create)
    retrieve = sync_op(retrieve)
    update = sync_op(update)
    void = sync_op(void)
    mark_as_paid = sync_op(mark_as_paid)
    cancel = sync_op(cancel)
    cancel_collection_on_failure = sync_op(cancel_collection_on_failure)
    activate = sync_op(activate)
    update_distribution = sync_op(update_distribution)
    bulk_import = sync_op(bulk_import)
    retrieve_bulk_import = sync_op(retrieve_bulk_import)
    list_bulk_import_items = sync_list(list_bulk_import_items)
    pause_collection = sync_op(pause_collection)
    resume_collection = sync_op(resume_collection)
