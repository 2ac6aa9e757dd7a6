"""Cards on file and card-detail requests.

A card is stored ACTIVE or REMOVED; EXPIRED is derived: an ACTIVE card whose expiry month is
before the sandbox's current month. A card-detail request gets a token whose hosted page is
``<root>/pay/card-on-file/<token>`` (the page itself belongs to the simulation, which calls
:func:`find_request` and :func:`add_card`).
"""

from __future__ import annotations

import secrets
from collections.abc import Sequence
from datetime import date, datetime, timedelta
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import ColumnElement, and_, or_, select
from sqlalchemy.orm import Session

from sandbox.core import ids
from sandbox.core.errors import not_found
from sandbox.core.pagination import Listing, column, sortable
from sandbox.core.timefmt import iso
from sandbox.core.validation import check_https_url, invalid, parse_body
from sandbox.models.billing import Customer
from sandbox.models.customers import CardOnFile, CardOnFileRequest

CARD_STATUSES = ("ACTIVE", "EXPIRED", "REMOVED")
REQUEST_LIFETIME = timedelta(days=7)
Brand = Literal["VISA", "MASTERCARD", "AMEX", "MAESTRO", "OTHER"]


def _expired(today: date) -> ColumnElement[bool]:
    return or_(
        CardOnFile.expiry_year < today.year,
        and_(CardOnFile.expiry_year == today.year, CardOnFile.expiry_month < today.month),
    )


def status_clause(status: str, today: date) -> ColumnElement[bool]:
    """SQL for "the card's status today is ``status``"."""
    if status == "REMOVED":
        return CardOnFile.status == "REMOVED"
    active = CardOnFile.status == "ACTIVE"
    if status == "EXPIRED":
        return and_(active, _expired(today))
    return and_(active, ~_expired(today))


def card_status(card: CardOnFile, today: date) -> str:
    if card.status != "ACTIVE":
        return card.status
    expired = (card.expiry_year, card.expiry_month) < (today.year, today.month)
    return "EXPIRED" if expired else "ACTIVE"


def public_card(card: CardOnFile, today: date) -> dict[str, Any]:
    return {
        "id": card.id,
        "customerId": card.customer_id,
        "brand": card.brand,
        "last4": card.last4,
        "expiryMonth": card.expiry_month,
        "expiryYear": card.expiry_year,
        "status": card_status(card, today),
        "creationTime": iso(card.created_at),
    }


def get_card(session: Session, customer: Customer, card_id: str) -> CardOnFile:
    card = session.get(CardOnFile, card_id)
    if card is None or card.customer_id != customer.id:
        raise not_found("card on file")
    return card


def remove_card(card: CardOnFile, now: datetime) -> CardOnFile:
    """REMOVED from now on; removing a removed card changes nothing."""
    if card.status != "REMOVED":
        card.status = "REMOVED"
        card.removed_at = now
    return card


class CardIn(BaseModel):
    """A test card for the admin API (and the simulation's card page)."""

    model_config = ConfigDict(extra="forbid")
    brand: Brand = "VISA"
    last4: str = Field("4242", pattern=r"^\d{4}$")
    expiryMonth: int = Field(12, ge=1, le=12)
    expiryYear: int | None = Field(None, ge=2000, le=2100)


def add_card(session: Session, customer: Customer, body: Any, now: datetime) -> CardOnFile:
    """Save a card for ``customer`` (fields of :class:`CardIn`; the expiry year defaults to three
    years from now)."""
    data = parse_body(CardIn, body or {})
    card = CardOnFile(
        id=ids.new_uuid(),
        biller_id=customer.biller_id,
        customer_id=customer.id,
        brand=data.brand,
        last4=data.last4,
        expiry_month=data.expiryMonth,
        expiry_year=data.expiryYear if data.expiryYear is not None else now.year + 3,
        status="ACTIVE",
        created_at=now,
    )
    session.add(card)
    session.flush()
    return card


class CardRequestIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    redirectUrl: str | None = Field(None, max_length=2048)
    customMessage: str | None = Field(None, max_length=1000)

    _https = field_validator("redirectUrl")(check_https_url)


def recipients(customer: Customer) -> list[str]:
    """Who a message to the customer goes to: its primary contacts that are included in
    communications and have an email, else every included person with an email."""
    people = [
        person
        for person in customer.document.get("people", [])
        if person.get("email") and person.get("isIncludedInCommunications", True)
    ]
    primary = [person for person in people if person.get("isPrimaryContact")]
    return [str(person["email"]) for person in (primary or people)]


def request_card(
    session: Session, customer: Customer, body: Any, now: datetime
) -> CardOnFileRequest:
    """Record a card-detail request sent to the customer's contact (422 when it has none)."""
    data = parse_body(CardRequestIn, body if body is not None else {})
    sent_to = recipients(customer)
    if not sent_to:
        raise invalid("people", "the customer has no contact with an email to send the request to")
    request = CardOnFileRequest(
        token=secrets.token_urlsafe(24),
        biller_id=customer.biller_id,
        customer_id=customer.id,
        redirect_url=data.redirectUrl,
        custom_message=data.customMessage,
        sent_to=sent_to,
        requested_at=now,
        expires_at=now + REQUEST_LIFETIME,
    )
    session.add(request)
    return request


def request_url(root: str, token: str) -> str:
    return f"{root}/pay/card-on-file/{token}"


def public_request(request: CardOnFileRequest, root: str) -> dict[str, Any]:
    return {
        "customerId": request.customer_id,
        "url": request_url(root, request.token),
        "sentTo": list(request.sent_to),
        "requestedTime": iso(request.requested_at),
        "expiresAt": iso(request.expires_at),
    }


def find_request(session: Session, token: str) -> CardOnFileRequest | None:
    """The card-detail request behind a hosted page's token (for the simulation's page)."""
    return session.get(CardOnFileRequest, token)


SORTABLE = sortable(
    creationTime=CardOnFile.created_at,
    expiryYear=CardOnFile.expiry_year,
    brand=CardOnFile.brand,
)


def of_customer(customer: Customer, statuses: Sequence[str], today: date) -> Listing:
    """The customer's cards whose status today is one of ``statuses`` (all when empty)."""
    query = select(CardOnFile).where(CardOnFile.customer_id == customer.id)
    if statuses:
        query = query.where(or_(*(status_clause(status, today) for status in statuses)))
    return Listing(query, SORTABLE, column(CardOnFile.id), ("creationTime,asc",))
