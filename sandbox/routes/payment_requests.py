"""Routes of the contract's `payment_requests` operations (bulk import has its own module).

Literal paths (``/payment_requests/distribution``) and ``:action`` routes come before
``/payment_requests/{id}``. Where the contract types the id as a uuid (``:mark-as-paid``,
``:cancel-collection-on-failure``, pause and resume) a malformed one is 400 ``BAD_REQUEST``.
"""

from __future__ import annotations

import uuid
from datetime import date, datetime
from typing import Annotated, Any, cast

from fastapi import APIRouter, Path, Query, Response
from sqlalchemy import ColumnElement, Select, select
from sqlalchemy.sql.expression import ClauseList

from sandbox import collection, payment_request_actions, payment_requests, state
from sandbox.billing_models import Customer, PaymentRequest
from sandbox.bodies import JsonBody, RootDep, json_object, refuse_nul
from sandbox.deps import BillerDep, SessionDep
from sandbox.pagination import PageDep, paginate
from sandbox.payment_requests import get_payment_request, public_payment_request
from sandbox.routes.invoices import created_between
from sandbox.validation import enum_filter, multi, utc

router = APIRouter(tags=["payment_requests"])

RequestId = Annotated[str, Path(alias="id", min_length=1)]
RequestUuid = Annotated[uuid.UUID, Path(alias="id")]
RequestUuidNamed = Annotated[uuid.UUID, Path(alias="paymentRequestId")]
SORTABLE: dict[str, Any] = {
    "creationTime": PaymentRequest.created_at,
    "lastUpdatedTime": PaymentRequest.updated_at,
    "payByDate": PaymentRequest.pay_by_date,
    "paidTime": PaymentRequest.paid_time,
    "distributionTime": PaymentRequest.distribution_time,
    "paymentRequestNo": PaymentRequest.payment_request_no,
    "totalAmount": PaymentRequest.total_amount,
    "status": PaymentRequest.status,
}
DEFAULT_ORDER = cast(ColumnElement[Any], ClauseList(PaymentRequest.created_at, PaymentRequest.id))


def _statuses(values: list[str] | None) -> list[str]:
    """``statuses`` with the legacy names (REQUESTED, CANCELLED) read as today's."""
    allowed = (*payment_requests.STATUSES, *payment_requests.LEGACY_STATUSES)
    chosen = enum_filter(values, allowed, "statuses")
    return [payment_requests.LEGACY_STATUSES.get(value, value) for value in chosen]


def _filtered(biller_id: str, f: dict[str, Any]) -> Select[Any]:
    pr = PaymentRequest
    query = select(pr).where(pr.biller_id == biller_id)
    conditions: list[Any] = []
    if f["customerId"] is not None:
        conditions.append(pr.customer_id == f["customerId"])
    if f["externalCustomerId"] is not None:
        customers = select(Customer.id).where(
            Customer.biller_id == biller_id, Customer.external_id == f["externalCustomerId"]
        )
        conditions.append(pr.customer_id.in_(customers))
    if f["statuses"]:
        conditions.append(pr.status.in_(f["statuses"]))
    if f["associationTypes"]:
        conditions.append(pr.association_type.in_(f["associationTypes"]))
    if f["payByStartDate"] is not None:
        conditions.append(pr.pay_by_date >= f["payByStartDate"])
    if f["payByEndDate"] is not None:
        conditions.append(pr.pay_by_date <= f["payByEndDate"])
    conditions += created_between(pr.created_at, f["createdStartDate"], f["createdEndDate"])
    if f["paidStartTime"] is not None:
        conditions.append(pr.paid_time >= f["paidStartTime"])
    if f["paidEndTime"] is not None:
        conditions.append(pr.paid_time <= f["paidEndTime"])
    if f["invoiceId"] is not None:
        conditions.append(pr.invoice_id == f["invoiceId"])
    if f["externalIds"]:
        conditions.append(pr.external_id.in_(f["externalIds"]))
    if f["lastUpdatedStartTime"] is not None:
        conditions.append(pr.updated_at >= f["lastUpdatedStartTime"])
    return query.where(*conditions)


@router.get(
    "/payment_requests", operation_id="payment_requests.list", summary="List payment requests"
)
def list_payment_requests(
    principal: BillerDep,
    session: SessionDep,
    root: RootDep,
    page: PageDep,
    customer_id: Annotated[str | None, Query(alias="customerId")] = None,
    external_customer_id: Annotated[str | None, Query(alias="externalCustomerId")] = None,
    statuses: Annotated[list[str] | None, Query()] = None,
    association_types: Annotated[list[str] | None, Query(alias="associationTypes")] = None,
    pay_by_start: Annotated[date | None, Query(alias="payByStartDate")] = None,
    pay_by_end: Annotated[date | None, Query(alias="payByEndDate")] = None,
    created_start: Annotated[date | None, Query(alias="createdStartDate")] = None,
    created_end: Annotated[date | None, Query(alias="createdEndDate")] = None,
    paid_start: Annotated[datetime | None, Query(alias="paidStartTime")] = None,
    paid_end: Annotated[datetime | None, Query(alias="paidEndTime")] = None,
    invoice_id: Annotated[str | None, Query(alias="invoiceId")] = None,
    external_ids: Annotated[list[str] | None, Query(alias="externalIds")] = None,
    updated_since: Annotated[datetime | None, Query(alias="lastUpdatedStartTime")] = None,
) -> dict[str, Any]:
    """The biller's payment requests matching every filter given (ranges inclusive), paged."""
    refuse_nul(
        customerId=customer_id,
        externalCustomerId=external_customer_id,
        invoiceId=invoice_id,
        externalIds=external_ids or [],
    )
    filters = {
        "customerId": customer_id,
        "externalCustomerId": external_customer_id,
        "statuses": _statuses(statuses),
        "associationTypes": enum_filter(
            association_types, payment_requests.ASSOCIATION_TYPES, "associationTypes"
        ),
        "payByStartDate": pay_by_start,
        "payByEndDate": pay_by_end,
        "createdStartDate": created_start,
        "createdEndDate": created_end,
        "paidStartTime": utc(paid_start),
        "paidEndTime": utc(paid_end),
        "invoiceId": invoice_id,
        "externalIds": multi(external_ids),
        "lastUpdatedStartTime": utc(updated_since),
    }
    today = state.now(session).date()
    return paginate(
        session,
        _filtered(str(principal.biller_id), filters),
        page,
        key="paymentRequests",
        sortable=SORTABLE,
        tiebreak=DEFAULT_ORDER,
        render=lambda pr: public_payment_request(session, pr, root, today),
    )


@router.post(
    "/payment_requests",
    operation_id="payment_requests.create",
    status_code=201,
    summary="Create a payment request",
)
def create(
    principal: BillerDep, session: SessionDep, root: RootDep, body: JsonBody
) -> dict[str, Any]:
    pr = payment_request_actions.create_payment_request(
        session, str(principal.biller_id), json_object(body)
    )
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/distribution",
    operation_id="payment_requests.update_distribution",
    summary="Update the distribution details of payment requests",
)
def update_distribution(
    principal: BillerDep, session: SessionDep, root: RootDep, body: JsonBody
) -> dict[str, Any]:
    requests = payment_request_actions.update_distribution(
        session, str(principal.biller_id), json_object(body)
    )
    return {"paymentRequests": [public_payment_request(session, pr, root) for pr in requests]}


@router.put(
    "/payment_requests/{id}:void",
    operation_id="payment_requests.void",
    summary="Void a payment request",
)
def void(
    principal: BillerDep, session: SessionDep, root: RootDep, pr_id: RequestId
) -> dict[str, Any]:
    pr = get_payment_request(session, str(principal.biller_id), pr_id)
    payment_requests.void(pr, state.now(session))
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{id}:mark-as-paid",
    operation_id="payment_requests.mark_as_paid",
    summary="Mark a standalone payment request as paid",
)
def mark_as_paid(
    principal: BillerDep, session: SessionDep, root: RootDep, pr_id: RequestUuid
) -> dict[str, Any]:
    pr = get_payment_request(session, str(principal.biller_id), str(pr_id))
    if pr.invoice_id is not None:
        raise payment_requests.invalid_state(
            "this payment request was raised for an invoice: mark the invoice as paid instead"
        )
    if pr.status in ("DRAFT", "SUBMITTED", "VOID"):
        raise payment_requests.invalid_state(
            f"payment request in status {pr.status} cannot be marked as paid"
        )
    payment_requests.mark_paid(pr, state.now(session))
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{id}:cancel",
    operation_id="payment_requests.cancel",
    summary="Cancel a payment request (deprecated; use :void)",
)
def cancel(
    principal: BillerDep, session: SessionDep, root: RootDep, pr_id: RequestId, response: Response
) -> dict[str, Any]:
    """Exactly ``:void``, with the deprecation headers the contract declares."""
    pr = get_payment_request(session, str(principal.biller_id), pr_id)
    payment_requests.void(pr, state.now(session))
    response.headers["Deprecation"] = payment_requests.CANCEL_DEPRECATED
    response.headers["Link"] = f'</api/payment_requests/{pr.id}:void>; rel="successor-version"'
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{id}:cancel-collection-on-failure",
    operation_id="payment_requests.cancel_collection_on_failure",
    summary="Cancel further collection if the next auto-collection fails",
)
def cancel_collection_on_failure(
    principal: BillerDep, session: SessionDep, root: RootDep, pr_id: RequestUuid
) -> dict[str, Any]:
    pr = get_payment_request(session, str(principal.biller_id), str(pr_id))
    payment_request_actions.cancel_collection_on_failure(session, pr)
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{id}:activate",
    operation_id="payment_requests.activate",
    summary="Activate (send) a payment request",
)
def activate(
    principal: BillerDep, session: SessionDep, root: RootDep, pr_id: RequestId, body: JsonBody
) -> dict[str, Any]:
    pr = get_payment_request(session, str(principal.biller_id), pr_id)
    payment_request_actions.activate_payment_request(session, pr, json_object(body))
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{paymentRequestId}:pause_collection",
    operation_id="payment_requests.pause_collection",
    status_code=204,
    summary="Pause collection methods of a payment request",
)
def pause_collection(
    principal: BillerDep, session: SessionDep, pr_id: RequestUuidNamed, body: JsonBody
) -> Response:
    pr = get_payment_request(session, str(principal.biller_id), str(pr_id))
    collection.pause(session, pr.customer_id, [pr], collection.parse_methods(body))
    return Response(status_code=204)


@router.put(
    "/payment_requests/{paymentRequestId}:resume_collection",
    operation_id="payment_requests.resume_collection",
    status_code=204,
    summary="Resume collection methods of a payment request",
)
def resume_collection(
    principal: BillerDep, session: SessionDep, pr_id: RequestUuidNamed, body: JsonBody
) -> Response:
    pr = get_payment_request(session, str(principal.biller_id), str(pr_id))
    collection.resume(session, pr.customer_id, [pr], collection.parse_methods(body))
    return Response(status_code=204)


@router.get(
    "/payment_requests/{id}",
    operation_id="payment_requests.retrieve",
    summary="Retrieve a payment request",
)
def retrieve(
    principal: BillerDep, session: SessionDep, root: RootDep, pr_id: RequestId
) -> dict[str, Any]:
    return public_payment_request(
        session, get_payment_request(session, str(principal.biller_id), pr_id), root
    )


@router.put(
    "/payment_requests/{id}",
    operation_id="payment_requests.update",
    summary="Update a payment request",
)
def update(
    principal: BillerDep, session: SessionDep, root: RootDep, pr_id: RequestId, body: JsonBody
) -> dict[str, Any]:
    pr = get_payment_request(session, str(principal.biller_id), pr_id)
    payment_request_actions.update_payment_request(session, pr, json_object(body))
    return public_payment_request(session, pr, root)
