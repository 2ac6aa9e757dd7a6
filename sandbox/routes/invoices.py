"""Routes of the contract's `invoices` operations.

``:action`` and sub-resource routes come before ``/invoices/{id}`` (a path parameter would take
``abc:void``). The rules live in :mod:`sandbox.invoicing`, :mod:`sandbox.invoice_actions` and
:mod:`sandbox.collection`; these functions only map HTTP onto them.
"""

from __future__ import annotations

import re
from datetime import UTC, date, datetime, time, timedelta
from typing import Annotated, Any, cast

from fastapi import APIRouter, Path, Query, Response
from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.sql.expression import ClauseList

from sandbox import collection, events, invoice_actions, state
from sandbox.billing_models import Customer, Invoice
from sandbox.bodies import Fields, JsonBody, RootDep, json_object, refuse_nul
from sandbox.deps import BillerDep, SessionDep
from sandbox.invoice_pdf import invoice_pdf
from sandbox.invoicing import (
    STATUSES,
    create_invoice,
    get_invoice,
    payment_requests_of,
    public_invoice,
)
from sandbox.pagination import PageDep, paginate
from sandbox.validation import enum_filter, utc

router = APIRouter(tags=["invoices"])

InvoiceId = Annotated[str, Path(alias="id", min_length=1)]
InvoiceIdNamed = Annotated[str, Path(alias="invoiceId", min_length=1)]
SORTABLE: dict[str, Any] = {
    "creationTime": Invoice.created_at,
    "lastUpdatedTime": Invoice.updated_at,
    "dueDate": Invoice.due_date,
    "issueDate": Invoice.issue_date,
    "invoiceNo": Invoice.invoice_no,
    "totalAmount": Invoice.total_amount,
    "status": Invoice.status,
}
# Without a sort: creationTime ascending, then id (the contract's default order).
DEFAULT_ORDER = cast(ColumnElement[Any], ClauseList(Invoice.created_at, Invoice.id))


def day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, UTC)


def day_end(day: date) -> datetime | None:
    """The first moment after ``day`` (None for the last representable day)."""
    return day_start(day) + timedelta(days=1) if day < date.max else None


def created_between(column: Any, start: date | None, end: date | None) -> list[Any]:
    """Conditions for a timestamp column to fall on ``start``..``end`` (UTC dates, inclusive)."""
    conditions = []
    if start is not None:
        conditions.append(column >= day_start(start))
    if end is not None and (after := day_end(end)) is not None:
        conditions.append(column < after)
    return conditions


def _filtered(biller_id: str, filters: dict[str, Any]) -> Select[Any]:
    query = select(Invoice).where(Invoice.biller_id == biller_id)
    if filters["statuses"]:
        query = query.where(Invoice.status.in_(filters["statuses"]))
    if filters["customerId"] is not None:
        query = query.where(Invoice.customer_id == filters["customerId"])
    if filters["externalCustomerId"] is not None:
        customers = select(Customer.id).where(
            Customer.biller_id == biller_id,
            Customer.external_id == filters["externalCustomerId"],
        )
        query = query.where(Invoice.customer_id.in_(customers))
    if filters["invoiceNo"] is not None:
        query = query.where(Invoice.invoice_no == filters["invoiceNo"])
    if filters["dueStartDate"] is not None:
        query = query.where(Invoice.due_date >= filters["dueStartDate"])
    if filters["dueEndDate"] is not None:
        query = query.where(Invoice.due_date <= filters["dueEndDate"])
    created = created_between(
        Invoice.created_at, filters["createdStartDate"], filters["createdEndDate"]
    )
    if filters["lastUpdatedStartTime"] is not None:
        created.append(Invoice.updated_at >= filters["lastUpdatedStartTime"])
    return query.where(*created)


@router.get("/invoices", operation_id="invoices.list", summary="List invoices")
def list_invoices(
    principal: BillerDep,
    session: SessionDep,
    root: RootDep,
    page: PageDep,
    statuses: Annotated[list[str] | None, Query()] = None,
    customer_id: Annotated[str | None, Query(alias="customerId")] = None,
    external_customer_id: Annotated[str | None, Query(alias="externalCustomerId")] = None,
    invoice_no: Annotated[str | None, Query(alias="invoiceNo")] = None,
    due_start: Annotated[date | None, Query(alias="dueStartDate")] = None,
    due_end: Annotated[date | None, Query(alias="dueEndDate")] = None,
    created_start: Annotated[date | None, Query(alias="createdStartDate")] = None,
    created_end: Annotated[date | None, Query(alias="createdEndDate")] = None,
    updated_since: Annotated[datetime | None, Query(alias="lastUpdatedStartTime")] = None,
) -> dict[str, Any]:
    """The biller's invoices matching every filter given (date ranges inclusive), paged."""
    refuse_nul(
        customerId=customer_id, externalCustomerId=external_customer_id, invoiceNo=invoice_no
    )
    filters = {
        "statuses": enum_filter(statuses, STATUSES, "statuses"),
        "customerId": customer_id,
        "externalCustomerId": external_customer_id,
        "invoiceNo": invoice_no,
        "dueStartDate": due_start,
        "dueEndDate": due_end,
        "createdStartDate": created_start,
        "createdEndDate": created_end,
        "lastUpdatedStartTime": utc(updated_since),
    }
    today = state.now(session).date()
    return paginate(
        session,
        _filtered(str(principal.biller_id), filters),
        page,
        key="invoices",
        sortable=SORTABLE,
        tiebreak=DEFAULT_ORDER,
        render=lambda invoice: public_invoice(session, invoice, root, today),
    )


@router.post(
    "/invoices", operation_id="invoices.create", status_code=201, summary="Create an invoice"
)
def create(
    principal: BillerDep, session: SessionDep, root: RootDep, body: JsonBody, response: Response
) -> dict[str, Any]:
    """A DRAFT invoice (201), or the existing one with the same ``invoiceNo`` (200)."""
    invoice, created = create_invoice(session, str(principal.biller_id), json_object(body))
    if not created:
        response.status_code = 200
    return public_invoice(session, invoice, root)


@router.put("/invoices/{id}:void", operation_id="invoices.void", summary="Void an invoice")
def void(
    principal: BillerDep, session: SessionDep, root: RootDep, invoice_id: InvoiceId, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    fields = Fields(json_object(body, required=False))
    invoice_actions.void_invoice(session, invoice, fields.text("reason", max_length=500))
    return public_invoice(session, invoice, root)


@router.put(
    "/invoices/{id}:mark-as-paid",
    operation_id="invoices.mark_as_paid",
    summary="Mark an invoice as paid",
)
def mark_as_paid(
    principal: BillerDep, session: SessionDep, root: RootDep, invoice_id: InvoiceId
) -> dict[str, Any]:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    invoice_actions.mark_invoice_paid(session, invoice)
    return public_invoice(session, invoice, root)


@router.put(
    "/invoices/{id}:activate", operation_id="invoices.activate", summary="Activate an invoice"
)
def activate(
    principal: BillerDep, session: SessionDep, root: RootDep, invoice_id: InvoiceId, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    invoice_actions.activate(session, invoice, json_object(body))
    return public_invoice(session, invoice, root)


@router.post(
    "/invoices/{invoiceId}/instalments/preview",
    operation_id="invoices.preview_instalments",
    summary="Preview an instalment plan",
)
def preview_instalments(
    principal: BillerDep, session: SessionDep, invoice_id: InvoiceIdNamed, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    return invoice_actions.preview(invoice, json_object(body))


@router.get(
    "/invoices/{id}/file", operation_id="invoices.retrieve_file", summary="The invoice's PDF"
)
def retrieve_file(
    principal: BillerDep, session: SessionDep, root: RootDep, invoice_id: InvoiceId
) -> Response:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    document = invoice_pdf(public_invoice(session, invoice, root))
    # Header values must be plain ASCII; an invoiceNo may hold anything.
    filename = re.sub(r"[^A-Za-z0-9._-]", "_", invoice.invoice_no)
    headers = {"Content-Disposition": f'inline; filename="{filename}.pdf"'}
    return Response(document, media_type="application/pdf", headers=headers)


@router.put(
    "/invoices/{invoiceId}:pause_collection",
    operation_id="invoices.pause_collection",
    status_code=204,
    summary="Pause collection for every payment request of an invoice",
)
def pause_collection(
    principal: BillerDep, session: SessionDep, invoice_id: InvoiceIdNamed, body: JsonBody
) -> Response:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    methods = collection.parse_methods(body)
    requests = payment_requests_of(session, invoice)
    collection.pause(session, invoice.customer_id, requests, methods)
    _remember_override(session, invoice, methods, collection.PAUSED)
    return Response(status_code=204)


@router.put(
    "/invoices/{invoiceId}:resume_collection",
    operation_id="invoices.resume_collection",
    status_code=204,
    summary="Resume collection for every payment request of an invoice",
)
def resume_collection(
    principal: BillerDep, session: SessionDep, invoice_id: InvoiceIdNamed, body: JsonBody
) -> Response:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    methods = collection.parse_methods(body)
    requests = payment_requests_of(session, invoice)
    collection.resume(session, invoice.customer_id, requests, methods)
    _remember_override(session, invoice, methods, collection.RESUMED)
    return Response(status_code=204)


def _remember_override(
    session: SessionDep, invoice: Invoice, methods: list[str], value: str
) -> None:
    """Requests the invoice raises later (a changed plan) start with the same setting."""
    document = invoice.document or {}
    current = document.get("collectionOverride") or {}
    override = {**current, **dict.fromkeys(methods, value)}
    if override != current:
        invoice.document = {**document, "collectionOverride": override}
        invoice.updated_at = state.now(session)
        events.invoice_event(session, invoice, f"INVOICE_COLLECTION_{value}")


@router.get("/invoices/{id}", operation_id="invoices.retrieve", summary="Retrieve an invoice")
def retrieve(
    principal: BillerDep, session: SessionDep, root: RootDep, invoice_id: InvoiceId
) -> dict[str, Any]:
    return public_invoice(session, get_invoice(session, str(principal.biller_id), invoice_id), root)


@router.put("/invoices/{id}", operation_id="invoices.update", summary="Update an invoice")
def update(
    principal: BillerDep, session: SessionDep, root: RootDep, invoice_id: InvoiceId, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, str(principal.biller_id), invoice_id)
    invoice_actions.update_invoice(session, invoice, json_object(body))
    return public_invoice(session, invoice, root)
