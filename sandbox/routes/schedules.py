"""``/schedules/invoices`` and ``/schedules/payment_requests``: recurring invoices and payment
requests. ``:action`` routes come before ``/{id}`` (a path parameter matches ``abc:cancel``)."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Response

from sandbox import schedules
from sandbox.bodies import JsonBody, json_object
from sandbox.deps import BillerDep, SessionDep
from sandbox.schedule_bodies import RecurringInvoiceBody, RecurringPaymentRequestBody
from sandbox.schedules import RECURRING_INVOICE, RECURRING_PAYMENT_REQUEST
from sandbox.validation import parse_body

router = APIRouter()

IdPath = Annotated[str, Path(min_length=1)]
INVOICES = "/schedules/invoices"
PAYMENT_REQUESTS = "/schedules/payment_requests"


def _biller(principal: BillerDep) -> str:
    assert principal.biller_id is not None
    return principal.biller_id


def _invoice_body(body: object) -> RecurringInvoiceBody:
    return parse_body(RecurringInvoiceBody, json_object(body))


def _payment_request_body(body: object) -> RecurringPaymentRequestBody:
    return parse_body(RecurringPaymentRequestBody, json_object(body))


# --- recurring invoices -----------------------------------------------------------------------


@router.post(
    INVOICES,
    operation_id="recurring_invoices.create",
    status_code=201,
    tags=["recurring_invoices"],
    summary="Create a recurring invoice",
)
def create_recurring_invoice(
    principal: BillerDep, session: SessionDep, body: JsonBody
) -> dict[str, Any]:
    """Created as ``DRAFT``: nothing is generated until it is activated."""
    kind = RECURRING_INVOICE
    schedule = schedules.create(session, _biller(principal), kind, _invoice_body(body))
    return schedules.public(session, kind, schedule)


@router.put(
    INVOICES + "/{id}:cancel",
    operation_id="recurring_invoices.cancel",
    tags=["recurring_invoices"],
    summary="Cancel a recurring invoice",
)
def cancel_recurring_invoice(
    principal: BillerDep, session: SessionDep, id: IdPath
) -> dict[str, Any]:
    kind = RECURRING_INVOICE
    schedule = schedules.get(session, _biller(principal), kind, id)
    return schedules.public(session, kind, schedules.cancel(session, kind, schedule))


@router.put(
    INVOICES + "/{id}:activate",
    operation_id="recurring_invoices.activate",
    tags=["recurring_invoices"],
    summary="Activate a recurring invoice",
)
def activate_recurring_invoice(
    principal: BillerDep, session: SessionDep, id: IdPath
) -> dict[str, Any]:
    kind = RECURRING_INVOICE
    schedule = schedules.get(session, _biller(principal), kind, id)
    return schedules.public(session, kind, schedules.activate(session, kind, schedule))


@router.get(
    INVOICES + "/{id}",
    operation_id="recurring_invoices.retrieve",
    tags=["recurring_invoices"],
    summary="Retrieve a recurring invoice",
)
def retrieve_recurring_invoice(
    principal: BillerDep, session: SessionDep, id: IdPath
) -> dict[str, Any]:
    kind = RECURRING_INVOICE
    return schedules.public(session, kind, schedules.get(session, _biller(principal), kind, id))


@router.put(
    INVOICES + "/{id}",
    operation_id="recurring_invoices.update",
    tags=["recurring_invoices"],
    summary="Update a recurring invoice",
)
def update_recurring_invoice(
    principal: BillerDep, session: SessionDep, id: IdPath, body: JsonBody
) -> dict[str, Any]:
    kind = RECURRING_INVOICE
    schedule = schedules.get(session, _biller(principal), kind, id)
    updated = schedules.update(session, kind, schedule, _invoice_body(body))
    return schedules.public(session, kind, updated)


@router.delete(
    INVOICES + "/{id}",
    operation_id="recurring_invoices.delete",
    status_code=204,
    tags=["recurring_invoices"],
    summary="Delete a recurring invoice",
)
def delete_recurring_invoice(principal: BillerDep, session: SessionDep, id: IdPath) -> Response:
    """Deletes the schedule; what it generated is kept."""
    session.delete(schedules.get(session, _biller(principal), RECURRING_INVOICE, id))
    return Response(status_code=204)


# --- recurring payment requests ---------------------------------------------------------------


@router.post(
    PAYMENT_REQUESTS,
    operation_id="recurring_payment_requests.create",
    status_code=201,
    tags=["recurring_payment_requests"],
    summary="Create a recurring payment request",
)
def create_recurring_payment_request(
    principal: BillerDep, session: SessionDep, body: JsonBody
) -> dict[str, Any]:
    """Created ``ACTIVE`` (recurring payment requests have no draft status)."""
    kind = RECURRING_PAYMENT_REQUEST
    schedule = schedules.create(session, _biller(principal), kind, _payment_request_body(body))
    return schedules.public(session, kind, schedule)


@router.put(
    PAYMENT_REQUESTS + "/{id}:cancel",
    operation_id="recurring_payment_requests.cancel",
    tags=["recurring_payment_requests"],
    summary="Cancel a recurring payment request",
)
def cancel_recurring_payment_request(
    principal: BillerDep, session: SessionDep, id: IdPath
) -> dict[str, Any]:
    kind = RECURRING_PAYMENT_REQUEST
    schedule = schedules.get(session, _biller(principal), kind, id)
    return schedules.public(session, kind, schedules.cancel(session, kind, schedule))


@router.get(
    PAYMENT_REQUESTS + "/{id}",
    operation_id="recurring_payment_requests.retrieve",
    tags=["recurring_payment_requests"],
    summary="Retrieve a recurring payment request",
)
def retrieve_recurring_payment_request(
    principal: BillerDep, session: SessionDep, id: IdPath
) -> dict[str, Any]:
    kind = RECURRING_PAYMENT_REQUEST
    return schedules.public(session, kind, schedules.get(session, _biller(principal), kind, id))


@router.put(
    PAYMENT_REQUESTS + "/{id}",
    operation_id="recurring_payment_requests.update",
    tags=["recurring_payment_requests"],
    summary="Update a recurring payment request",
)
def update_recurring_payment_request(
    principal: BillerDep, session: SessionDep, id: IdPath, body: JsonBody
) -> dict[str, Any]:
    kind = RECURRING_PAYMENT_REQUEST
    schedule = schedules.get(session, _biller(principal), kind, id)
    updated = schedules.update(session, kind, schedule, _payment_request_body(body))
    return schedules.public(session, kind, updated)


@router.delete(
    PAYMENT_REQUESTS + "/{id}",
    operation_id="recurring_payment_requests.delete",
    status_code=204,
    tags=["recurring_payment_requests"],
    summary="Delete a recurring payment request",
)
def delete_recurring_payment_request(
    principal: BillerDep, session: SessionDep, id: IdPath
) -> Response:
    """Deletes the schedule; what it generated is kept."""
    session.delete(schedules.get(session, _biller(principal), RECURRING_PAYMENT_REQUEST, id))
    return Response(status_code=204)
