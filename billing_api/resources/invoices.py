"""``client.invoices``: invoices from draft to paid, their PDF and collection pause/resume."""

from __future__ import annotations

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
    bytes_call,
    list_call,
    model_call,
    money,
    no_content_call,
    query,
    sync_list,
    sync_op,
)
from billing_api.types import (
    ActivationCollectionMethod,
    ExternalData,
    InstalmentCadence,
    InstalmentPlanDetails,
    InstalmentPreview,
    Invoice,
    InvoiceItemInput,
    InvoiceStatus,
    ItemsTaxType,
)

__all__ = ["Invoices"]

Items = Sequence[InvoiceItemInput | Mapping[str, Any]]
PlanArg = InstalmentPlanDetails | Mapping[str, Any] | None
ExternalArg = Sequence[ExternalData | Mapping[str, Any]] | None


def list_(
    *,
    statuses: Sequence[InvoiceStatus | str] | None = None,
    customer_id: str | None = None,
    external_customer_id: str | None = None,
    invoice_no: str | None = None,
    due_start_date: date | None = None,
    due_end_date: date | None = None,
    created_start_date: date | None = None,
    created_end_date: date | None = None,
    last_updated_start_time: datetime | None = None,
    sort: Sort = None,
    page_size: int | None = None,
) -> ListCall[Invoice]:
    """Every invoice matching the filters."""
    params = query(
        statuses=statuses,
        customer_id=customer_id,
        external_customer_id=external_customer_id,
        invoice_no=invoice_no,
        due_start_date=due_start_date,
        due_end_date=due_end_date,
        created_start_date=created_start_date,
        created_end_date=created_end_date,
        last_updated_start_time=last_updated_start_time,
        sort=sort,
    )
    return list_call("invoices.list", "invoices", Invoice, params=params, page_size=page_size)


def create(
    *,
    customer: CustomerArg,
    items: Items,
    invoice_no: str | None = None,
    description: str | None = None,
    currency_code: str | None = None,
    issue_date: date | None = None,
    due_date: date | None = None,
    items_tax_type: ItemsTaxType | str | None = None,
    amount: Decimal | int | str | None = None,
    instalment_plan_details: PlanArg = None,
    external_data: ExternalArg = None,
) -> Call[Invoice]:
    """Create a draft invoice. ``invoice_no`` is the idempotency key (a repeat returns the
    existing invoice); ``amount``, when given, must equal the total the service computes."""
    payload = body(
        customer=customer_ref(customer),
        items=items,
        invoice_no=invoice_no,
        description=description,
        currency_code=currency_code,
        issue_date=issue_date,
        due_date=due_date,
        items_tax_type=items_tax_type,
        amount=None if amount is None else money(amount, "amount"),
        instalment_plan_details=instalment_plan_details,
        external_data=external_data,
    )
    return model_call("invoices.create", Invoice, json=payload)


def retrieve(invoice_id: str) -> Call[Invoice]:
    """One invoice."""
    return model_call("invoices.retrieve", Invoice, path_params={"id": invoice_id})


def update(
    invoice_id: str,
    *,
    items: Items,
    customer: CustomerArg | None = None,
    description: str | None = None,
    currency_code: str | None = None,
    issue_date: date | None = None,
    due_date: date | None = None,
    items_tax_type: ItemsTaxType | str | None = None,
    instalment_plan_details: PlanArg = None,
    external_data: ExternalArg = None,
) -> Call[Invoice]:
    """Replace a draft invoice's content (PUT: send every line)."""
    payload = body(
        items=items,
        customer=None if customer is None else customer_ref(customer),
        description=description,
        currency_code=currency_code,
        issue_date=issue_date,
        due_date=due_date,
        items_tax_type=items_tax_type,
        instalment_plan_details=instalment_plan_details,
        external_data=external_data,
    )
    return model_call("invoices.update", Invoice, path_params={"id": invoice_id}, json=payload)


def void(invoice_id: str, *, reason: str | None = None) -> Call[Invoice]:
    """Void an invoice (and its payment requests)."""
    return model_call(
        "invoices.void", Invoice, path_params={"id": invoice_id}, json=body(reason=reason)
    )


def mark_as_paid(invoice_id: str) -> Call[Invoice]:
    """Record that the invoice was paid outside the service."""
    return model_call("invoices.mark_as_paid", Invoice, path_params={"id": invoice_id})


def activate(
    invoice_id: str,
    *,
    collection_method: ActivationCollectionMethod | str,
    custom_message: str | None = None,
    template_id: str | None = None,
) -> Call[Invoice]:
    """Send a draft invoice; ``DIRECT_DEBIT_PAYMENT`` schedules a collection. Not idempotent."""
    payload = body(
        collection_method=collection_method,
        custom_message=custom_message,
        template_id=template_id,
    )
    return model_call("invoices.activate", Invoice, path_params={"id": invoice_id}, json=payload)


def preview_instalments(
    invoice_id: str, *, cadence: InstalmentCadence | Mapping[str, Any]
) -> Call[InstalmentPreview]:
    """The instalments an invoice would be split into with ``cadence`` (nothing is changed)."""
    return model_call(
        "invoices.preview_instalments",
        InstalmentPreview,
        path_params={"invoiceId": invoice_id},
        json=body(cadence=cadence),
    )


def retrieve_file(invoice_id: str) -> Call[bytes]:
    """The invoice as a PDF (bytes)."""
    return bytes_call(
        "invoices.retrieve_file",
        path_params={"id": invoice_id},
        headers={"Accept": "application/pdf"},
    )


def pause_collection(invoice_id: str, *, methods: MethodsArg) -> Call[None]:
    """Pause collection by ``methods`` (``AUTO_COLLECT``, ``ON_DEMAND``) for all of the
    invoice's payment requests."""
    return no_content_call(
        "invoices.pause_collection",
        path_params={"invoiceId": invoice_id},
        json=methods_body(methods),
    )


def resume_collection(invoice_id: str, *, methods: MethodsArg) -> Call[None]:
    """Resume collection by ``methods`` for all of the invoice's payment requests."""
    return no_content_call(
        "invoices.resume_collection",
        path_params={"invoiceId": invoice_id},
        json=methods_body(methods),
    )


class Invoices(SyncResource):
    """Invoices (blocking)."""

    list = sync_list(list_)
    create = sync_op(create)
    retrieve = sync_op(retrieve)
    update = sync_op(update)
    void = sync_op(void)
    mark_as_paid = sync_op(mark_as_paid)
    activate = sync_op(activate)
    preview_instalments = sync_op(preview_instalments)
    retrieve_file = sync_op(retrieve_file)
    pause_collection = sync_op(pause_collection)
    resume_collection = sync_op(resume_collection)
