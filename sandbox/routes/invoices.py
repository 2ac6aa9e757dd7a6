"""Routes of the contract's `invoices` operations.

``:action`` and sub-resource routes come before ``/invoices/{id}`` (a path parameter would take
``abc:void``). The rules live in :mod:`sandbox.billing.invoices`,
:mod:`sandbox.billing.invoice_actions` and :mod:`sandbox.billing.collection`; these functions only
map HTTP onto them.
"""

from __future__ import annotations

import re
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from sandbox.billing import invoice_actions, listing
from sandbox.billing.invoice_pdf import invoice_pdf
from sandbox.billing.invoices import create_invoice, get_invoice, public_invoice
from sandbox.core import state
from sandbox.core.bodies import Fields, JsonBody, json_object, refuse_nul
from sandbox.core.deps import BillerId, DocumentQueryDep, RootDep, SessionDep
from sandbox.core.pagination import PageDep, paginate
from sandbox.core.validation import QueryDate

router = APIRouter(tags=["invoices"])

InvoiceId = Annotated[str, Path(alias="id", min_length=1)]
InvoiceIdNamed = Annotated[str, Path(alias="invoiceId", min_length=1)]


@router.get("/invoices", operation_id="invoices.list", summary="List invoices")
def list_invoices(
    biller_id: BillerId,
    session: SessionDep,
    root: RootDep,
    page: PageDep,
    shared: DocumentQueryDep,
    invoice_no: Annotated[str | None, Query(alias="invoiceNo")] = None,
    due_start: Annotated[QueryDate | None, Query(alias="dueStartDate")] = None,
    due_end: Annotated[QueryDate | None, Query(alias="dueEndDate")] = None,
) -> dict[str, Any]:
    """The biller's invoices matching every filter given (date ranges inclusive), paged."""
    refuse_nul(invoiceNo=invoice_no)
    only = listing.InvoiceFilters(invoice_no=invoice_no, due_start=due_start, due_end=due_end)
    today = state.now(session).date()
    return paginate(
        session,
        listing.invoices(biller_id, shared, only),
        page,
        key="invoices",
        render=lambda invoice: public_invoice(session, invoice, root, today),
    )


@router.post(
    "/invoices", operation_id="invoices.create", status_code=201, summary="Create an invoice"
)
def create(
    biller_id: BillerId, session: SessionDep, root: RootDep, body: JsonBody, response: Response
) -> dict[str, Any]:
    """A DRAFT invoice (201), or the existing one with the same ``invoiceNo`` (200)."""
    invoice, created = create_invoice(session, biller_id, json_object(body))
    if not created:
        response.status_code = 200
    return public_invoice(session, invoice, root)


@router.put("/invoices/{id}:void", operation_id="invoices.void", summary="Void an invoice")
def void(
    biller_id: BillerId, session: SessionDep, root: RootDep, invoice_id: InvoiceId, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, biller_id, invoice_id)
    fields = Fields(json_object(body, required=False))
    invoice_actions.void_invoice(session, invoice, fields.text("reason", max_length=500))
    return public_invoice(session, invoice, root)


@router.put(
    "/invoices/{id}:mark-as-paid",
    operation_id="invoices.mark_as_paid",
    summary="Mark an invoice as paid",
)
def mark_as_paid(
    biller_id: BillerId, session: SessionDep, root: RootDep, invoice_id: InvoiceId
) -> dict[str, Any]:
    invoice = get_invoice(session, biller_id, invoice_id)
    invoice_actions.mark_invoice_paid(session, invoice)
    return public_invoice(session, invoice, root)


@router.put(
    "/invoices/{id}:activate", operation_id="invoices.activate", summary="Activate an invoice"
)
def activate(
    biller_id: BillerId, session: SessionDep, root: RootDep, invoice_id: InvoiceId, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, biller_id, invoice_id)
    invoice_actions.activate(session, invoice, json_object(body))
    return public_invoice(session, invoice, root)


@router.post(
    "/invoices/{invoiceId}/instalments/preview",
    operation_id="invoices.preview_instalments",
    summary="Preview an instalment plan",
)
def preview_instalments(
    biller_id: BillerId, session: SessionDep, invoice_id: InvoiceIdNamed, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, biller_id, invoice_id)
    return invoice_actions.preview(invoice, json_object(body))


@router.get(
    "/invoices/{id}/file", operation_id="invoices.retrieve_file", summary="The invoice's PDF"
)
def retrieve_file(
    biller_id: BillerId, session: SessionDep, root: RootDep, invoice_id: InvoiceId
) -> Response:
    invoice = get_invoice(session, biller_id, invoice_id)
    document = invoice_pdf(public_invoice(session, invoice, root))
    # Header values must be plain ASCII; an invoiceNo may hold anything.
    filename = re.sub(r"[^A-Za-z0-9._-]", "_", invoice.invoice_no)
    headers = {"Content-Disposition": f'inline; filename="{filename}.pdf"'}
    return Response(document, media_type="application/pdf", headers=headers)


@router.get("/invoices/{id}", operation_id="invoices.retrieve", summary="Retrieve an invoice")
def retrieve(
    biller_id: BillerId, session: SessionDep, root: RootDep, invoice_id: InvoiceId
) -> dict[str, Any]:
    return public_invoice(session, get_invoice(session, biller_id, invoice_id), root)


@router.put("/invoices/{id}", operation_id="invoices.update", summary="Update an invoice")
def update(
    biller_id: BillerId, session: SessionDep, root: RootDep, invoice_id: InvoiceId, body: JsonBody
) -> dict[str, Any]:
    invoice = get_invoice(session, biller_id, invoice_id)
    invoice_actions.update_invoice(session, invoice, json_object(body))
    return public_invoice(session, invoice, root)
