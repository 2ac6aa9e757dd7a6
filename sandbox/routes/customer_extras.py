"""``/customers/{customerId}/autopilot_settings`` and the customer's cards on file.

Registered on :data:`sandbox.routes.customers.router` by :func:`register`.
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Body, Path, Query, Request, Response
from sqlalchemy import or_, select

from sandbox import cards, customer_settings, state
from sandbox.customer_models import CardOnFile
from sandbox.customers import get_customer
from sandbox.deps import SessionDep
from sandbox.pagination import PageDep, paginate
from sandbox.routes.common import BillerId, JsonBody, root_of
from sandbox.validation import column, default_sort, enum_filter

CustomerIdPath = Annotated[str, Path(alias="customerId", min_length=1)]


def retrieve_autopilot(
    biller_id: BillerId, session: SessionDep, customer_id: CustomerIdPath
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    return customer_settings.public_autopilot(
        customer_settings.require_autopilot(session, customer)
    )


def upsert_autopilot(
    biller_id: BillerId, session: SessionDep, customer_id: CustomerIdPath, body: JsonBody
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    settings = customer_settings.upsert_autopilot(session, customer, body, state.now(session))
    return customer_settings.public_autopilot(settings)


def delete_autopilot(
    biller_id: BillerId, session: SessionDep, customer_id: CustomerIdPath
) -> Response:
    customer = get_customer(session, biller_id, customer_id)
    settings = customer_settings.autopilot_of(session, customer)
    if settings is not None:
        session.delete(settings)
    return Response(status_code=204)


def list_cards(
    biller_id: BillerId,
    session: SessionDep,
    customer_id: CustomerIdPath,
    page: PageDep,
    statuses: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    today = state.now(session).date()
    query = select(CardOnFile).where(CardOnFile.customer_id == customer.id)
    wanted = enum_filter(statuses, cards.CARD_STATUSES, "statuses")
    if wanted:
        query = query.where(or_(*(cards.status_clause(status, today) for status in wanted)))
    return paginate(
        session,
        query,
        default_sort(page, "creationTime,asc"),
        key="cardsOnFile",
        sortable=cards.SORTABLE,
        tiebreak=column(CardOnFile.id),
        render=lambda card: cards.public_card(card, today),
    )


def remove_card(
    biller_id: BillerId,
    session: SessionDep,
    customer_id: CustomerIdPath,
    card_id: Annotated[str, Path(alias="cardOnFileId", min_length=1)],
) -> dict[str, Any]:
    now = state.now(session)
    customer = get_customer(session, biller_id, customer_id)
    card = cards.remove_card(cards.get_card(session, customer, card_id), now)
    return cards.public_card(card, now.date())


def request_card(
    biller_id: BillerId,
    session: SessionDep,
    request: Request,
    customer_id: CustomerIdPath,
    body: Annotated[dict[str, Any] | None, Body()] = None,
) -> dict[str, Any]:
    customer = get_customer(session, biller_id, customer_id)
    sent = cards.request_card(session, customer, body, state.now(session))
    return cards.public_request(sent, root_of(request))


def register(router: APIRouter) -> None:
    """Add these routes to the customers router (FastAPI keeps included routers apart, and the
    contract test reads each router's own routes)."""
    router.add_api_route(
        "/customers/{customerId}/autopilot_settings",
        retrieve_autopilot,
        methods=["GET"],
        operation_id="customer_autopilot_settings.retrieve",
        tags=["customer_autopilot_settings"],
        summary="Retrieve autopilot guidance for a customer",
    )
    router.add_api_route(
        "/customers/{customerId}/autopilot_settings",
        upsert_autopilot,
        methods=["PUT"],
        operation_id="customer_autopilot_settings.upsert",
        tags=["customer_autopilot_settings"],
        summary="Create or update autopilot guidance",
    )
    router.add_api_route(
        "/customers/{customerId}/autopilot_settings",
        delete_autopilot,
        methods=["DELETE"],
        operation_id="customer_autopilot_settings.delete",
        tags=["customer_autopilot_settings"],
        summary="Delete autopilot guidance",
        status_code=204,
    )
    router.add_api_route(
        "/customers/{customerId}/cards_on_file",
        list_cards,
        methods=["GET"],
        operation_id="cards_on_file.list",
        tags=["cards_on_file"],
        summary="List the customer's cards on file",
    )
    router.add_api_route(
        "/customers/{customerId}/cards_on_file/{cardOnFileId}:remove",
        remove_card,
        methods=["PUT"],
        operation_id="cards_on_file.remove",
        tags=["cards_on_file"],
        summary="Remove a card on file",
    )
    router.add_api_route(
        "/customers/{customerId}/card_on_file:request",
        request_card,
        methods=["PUT"],
        operation_id="cards_on_file.request",
        tags=["cards_on_file"],
        summary="Request card details from the customer",
    )
