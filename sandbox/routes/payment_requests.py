"""Routes of the contract's `payment_requests` operations (bulk import has its own module).

Literal paths (``/payment_requests/distribution``) and ``:action`` routes come before
``/payment_requests/{id}``. Where the contract types the id as a uuid (``:mark-as-paid``,
``:cancel-collection-on-failure``, pause and resume) a malformed one is 400 ``BAD_REQUEST``.
"""

from __future__ import annotations

import uuid
from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from sandbox.billing import listing, payment_request_actions, payment_requests
from sandbox.billing.payment_requests import get_payment_request, public_payment_request
from sandbox.core import state
from sandbox.core.bodies import JsonBody, json_object, refuse_nul
from sandbox.core.deps import BillerId, DocumentQueryDep, RootDep, SessionDep
from sandbox.core.pagination import PageDep, paginate
from sandbox.core.validation import QueryDate, QueryTime, multi, utc

router = APIRouter(tags=["payment_requests"])

RequestId = Annotated[str, Path(alias="id", min_length=1)]
RequestUuid = Annotated[uuid.UUID, Path(alias="id")]


@router.get(
    "/payment_requests", operation_id="payment_requests.list", summary="List payment requests"
)
def list_payment_requests(
    biller_id: BillerId,
    session: SessionDep,
    root: RootDep,
    page: PageDep,
    shared: DocumentQueryDep,
    association_types: Annotated[list[str] | None, Query(alias="associationTypes")] = None,
    pay_by_start: Annotated[QueryDate | None, Query(alias="payByStartDate")] = None,
    pay_by_end: Annotated[QueryDate | None, Query(alias="payByEndDate")] = None,
    paid_start: Annotated[QueryTime | None, Query(alias="paidStartTime")] = None,
    paid_end: Annotated[QueryTime | None, Query(alias="paidEndTime")] = None,
    invoice_id: Annotated[str | None, Query(alias="invoiceId")] = None,
    external_ids: Annotated[list[str] | None, Query(alias="externalIds")] = None,
) -> dict[str, Any]:
    """The biller's payment requests matching every filter given (ranges inclusive), paged."""
    refuse_nul(invoiceId=invoice_id, externalIds=external_ids or [])
    only = listing.PaymentRequestFilters(
        association_types=multi(association_types),
        pay_by_start=pay_by_start,
        pay_by_end=pay_by_end,
        paid_start=utc(paid_start),
        paid_end=utc(paid_end),
        invoice_id=invoice_id,
        external_ids=multi(external_ids),
    )
    today = state.now(session).date()
    return paginate(
        session,
        listing.payment_requests_listing(biller_id, shared, only),
        page,
        key="paymentRequests",
        render=lambda pr: public_payment_request(session, pr, root, today),
    )


@router.post(
    "/payment_requests",
    operation_id="payment_requests.create",
    status_code=201,
    summary="Create a payment request",
)
def create(
    biller_id: BillerId, session: SessionDep, root: RootDep, body: JsonBody
) -> dict[str, Any]:
    pr = payment_request_actions.create_payment_request(session, biller_id, json_object(body))
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/distribution",
    operation_id="payment_requests.update_distribution",
    summary="Update the distribution details of payment requests",
)
def update_distribution(
    biller_id: BillerId, session: SessionDep, root: RootDep, body: JsonBody
) -> dict[str, Any]:
    requests = payment_request_actions.update_distribution(session, biller_id, json_object(body))
    return {"paymentRequests": [public_payment_request(session, pr, root) for pr in requests]}


@router.put(
    "/payment_requests/{id}:void",
    operation_id="payment_requests.void",
    summary="Void a payment request",
)
def void(
    biller_id: BillerId, session: SessionDep, root: RootDep, pr_id: RequestId
) -> dict[str, Any]:
    pr = get_payment_request(session, biller_id, pr_id)
    payment_requests.void(pr, state.now(session))
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{id}:mark-as-paid",
    operation_id="payment_requests.mark_as_paid",
    summary="Mark a standalone payment request as paid",
)
def mark_as_paid(
    biller_id: BillerId, session: SessionDep, root: RootDep, pr_id: RequestUuid
) -> dict[str, Any]:
    pr = get_payment_request(session, biller_id, str(pr_id))
    payment_request_actions.mark_standalone_paid(session, pr)
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{id}:cancel",
    operation_id="payment_requests.cancel",
    summary="Cancel a payment request (deprecated; use :void)",
)
def cancel(
    biller_id: BillerId, session: SessionDep, root: RootDep, pr_id: RequestId, response: Response
) -> dict[str, Any]:
    """Exactly ``:void``, with the deprecation headers the contract declares."""
    voided = void(biller_id, session, root, pr_id)  # 404 first for an unknown id
    response.headers["Deprecation"] = payment_requests.CANCEL_DEPRECATED
    link = f'</api/payment_requests/{voided["id"]}:void>; rel="successor-version"'
    response.headers["Link"] = link
    return voided


@router.put(
    "/payment_requests/{id}:cancel-collection-on-failure",
    operation_id="payment_requests.cancel_collection_on_failure",
    summary="Cancel further collection if the next auto-collection fails",
)
def cancel_collection_on_failure(
    biller_id: BillerId, session: SessionDep, root: RootDep, pr_id: RequestUuid
) -> dict[str, Any]:
    pr = get_payment_request(session, biller_id, str(pr_id))
    payment_request_actions.cancel_collection_on_failure(session, pr)
    return public_payment_request(session, pr, root)


@router.put(
    "/payment_requests/{id}:activate",
    operation_id="payment_requests.activate",
    summary="Activate (send) a payment request",
)
def activate(
    biller_id: BillerId, session: SessionDep, root: RootDep, pr_id: RequestId, body: JsonBody
) -> dict[str, Any]:
    pr = get_payment_request(session, biller_id, pr_id)
    payment_request_actions.activate_payment_request(session, pr, json_object(body))
    return public_payment_request(session, pr, root)


@router.get(
    "/payment_requests/{id}",
    operation_id="payment_requests.retrieve",
    summary="Retrieve a payment request",
)
def retrieve(
    biller_id: BillerId, session: SessionDep, root: RootDep, pr_id: RequestId
) -> dict[str, Any]:
    return public_payment_request(session, get_payment_request(session, biller_id, pr_id), root)


@router.put(
    "/payment_requests/{id}",
    operation_id="payment_requests.update",
    summary="Update a payment request",
)
def update(
    biller_id: BillerId, session: SessionDep, root: RootDep, pr_id: RequestId, body: JsonBody
) -> dict[str, Any]:
    pr = get_payment_request(session, biller_id, pr_id)
    payment_request_actions.update_payment_request(session, pr, json_object(body))
    return public_payment_request(session, pr, root)
