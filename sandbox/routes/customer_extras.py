"""``/customers/{customerId}/autopilot_settings`` and the customer's cards on file."""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Path, Query, Response

from sandbox.core import state
from sandbox.core.bodies import JsonBody
from sandbox.core.deps import RootDep, SessionDep
from sandbox.core.pagination import PageDep, paginate
from sandbox.core.validation import enum_filter
from sandbox.customers import cards
from sandbox.customers import settings as customer_settings
from sandbox.customers.paths import CustomerInPath

router = APIRouter()

AUTOPILOT = "/customers/{customerId}/autopilot_settings"


@router.get(
    AUTOPILOT,
    operation_id="customer_autopilot_settings.retrieve",
    tags=["customer_autopilot_settings"],
    summary="Retrieve autopilot guidance for a customer",
)
def retrieve_autopilot(
    session: SessionDep,
    customer: CustomerInPath,
) -> dict[str, Any]:
    return customer_settings.public_autopilot(
        customer_settings.require_autopilot(session, customer)
    )


@router.put(
    AUTOPILOT,
    operation_id="customer_autopilot_settings.upsert",
    tags=["customer_autopilot_settings"],
    summary="Create or update autopilot guidance",
)
def upsert_autopilot(
    session: SessionDep, customer: CustomerInPath, body: JsonBody
) -> dict[str, Any]:
    settings = customer_settings.upsert_autopilot(session, customer, body, state.now(session))
    return customer_settings.public_autopilot(settings)


@router.delete(
    AUTOPILOT,
    operation_id="customer_autopilot_settings.delete",
    tags=["customer_autopilot_settings"],
    summary="Delete autopilot guidance",
    status_code=204,
)
def delete_autopilot(
    session: SessionDep,
    customer: CustomerInPath,
) -> Response:
    customer_settings.delete_autopilot(session, customer)
    return Response(status_code=204)


@router.get(
    "/customers/{customerId}/cards_on_file",
    operation_id="cards_on_file.list",
    tags=["cards_on_file"],
    summary="List the customer's cards on file",
)
def list_cards(
    session: SessionDep,
    customer: CustomerInPath,
    page: PageDep,
    statuses: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:
    today = state.now(session).date()
    wanted = enum_filter(statuses, cards.CARD_STATUSES, "statuses")
    return paginate(
        session,
        cards.of_customer(customer, wanted, today),
        page,
        key="cardsOnFile",
        render=lambda card: cards.public_card(card, today),
    )


@router.put(
    "/customers/{customerId}/cards_on_file/{cardOnFileId}:remove",
    operation_id="cards_on_file.remove",
    tags=["cards_on_file"],
    summary="Remove a card on file",
)
def remove_card(
    session: SessionDep,
    customer: CustomerInPath,
    card_id: Annotated[str, Path(alias="cardOnFileId", min_length=1)],
) -> dict[str, Any]:
    now = state.now(session)
    card = cards.remove_card(cards.get_card(session, customer, card_id), now)
    return cards.public_card(card, now.date())


@router.put(
    "/customers/{customerId}/card_on_file:request",
    operation_id="cards_on_file.request",
    tags=["cards_on_file"],
    summary="Request card details from the customer",
)
def request_card(
    session: SessionDep,
    root: RootDep,
    customer: CustomerInPath,
    body: JsonBody,
) -> dict[str, Any]:
    sent = cards.request_card(session, customer, body, state.now(session))
    return cards.public_request(sent, root)
