"""Writing customers: the body rules of create and update (docs/service.md §17.1) and the records.

Create is idempotent by body hash [C]: the canonical JSON of the body is hashed, and an identical
body returns the customer the first call created. Update is a full-object replace: fields left out
are cleared. People and addresses keep their ids when the body sends them back.
"""

from __future__ import annotations

import hashlib
from datetime import datetime
from functools import lru_cache
from typing import Any, Literal
from zoneinfo import available_timezones

from pydantic import BaseModel, ConfigDict, Field, StrictBool, field_validator
from sqlalchemy import select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sandbox.core import ids
from sandbox.core.bodies import dumps
from sandbox.core.validation import ValidationFailed, check_email, invalid, parse_body
from sandbox.models.billing import Customer
from sandbox.webhooks import events

DEFAULT_TIMEZONE = "Europe/London"


class PersonIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = None
    firstName: str | None = Field(None, max_length=255)
    lastName: str | None = Field(None, max_length=255)
    email: str | None = Field(None, max_length=320)
    phoneNo: str | None = Field(None, max_length=64)
    isPrimaryContact: StrictBool = False
    isIncludedInCommunications: StrictBool = True

    _email = field_validator("email")(check_email)


class AddressIn(BaseModel):
    model_config = ConfigDict(extra="ignore")
    id: str | None = None
    addressLine1: str | None = Field(None, max_length=255)
    addressLine2: str | None = Field(None, max_length=255)
    city: str | None = Field(None, max_length=255)
    postalCode: str | None = Field(None, max_length=32)
    country: str | None = Field(None, max_length=64)


class ExternalDataIn(BaseModel):
    """A link to the accounting system's record; unknown fields are kept as sent."""

    model_config = ConfigDict(extra="allow")
    connectorType: Literal["XERO", "QUICKBOOKS", "BRIDGE", "STRIPE", "PLATFORM"] | None = None
    id: str | None = Field(None, max_length=255)
    name: str | None = Field(None, max_length=255)


class CustomerIn(BaseModel):
    """``CustomerCreate`` / ``CustomerUpdate``; read-only fields of a returned customer are
    ignored, so a client may send back what it read."""

    model_config = ConfigDict(extra="ignore")
    id: str | None = Field(None, min_length=1, max_length=36)
    name: str = Field(min_length=1, max_length=255)
    externalId: str | None = Field(None, min_length=1, max_length=255)
    people: list[PersonIn] = Field(default_factory=list)
    addresses: list[AddressIn] = Field(default_factory=list, max_length=1)
    externalData: ExternalDataIn | None = None
    timezone: str | None = Field(None, max_length=64)

    @field_validator("name")
    @classmethod
    def _not_blank(cls, value: str) -> str:
        if not value.strip():
            raise ValueError("name must not be blank")
        return value

    @field_validator("timezone")
    @classmethod
    def _known_zone(cls, value: str | None) -> str | None:
        if value is not None and value not in _zones():
            raise ValueError("not a known IANA time zone (e.g. Europe/London)")
        return value


@lru_cache(maxsize=1)
def _zones() -> frozenset[str]:
    return frozenset(available_timezones())


def body_hash(body: Any) -> str:
    canonical = dumps(body, sort_keys=True, separators=(",", ":"), ensure_ascii=False)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _with_ids(items: list[Any], kept: set[str], what: str, noun: str) -> list[dict[str, Any]]:
    """Entries as stored: an id sent back must be one the customer has; new entries get one."""
    out = []
    for index, item in enumerate(items):
        data = item.model_dump(mode="json")
        if data["id"] is None:
            data["id"] = ids.new_uuid()
        elif data["id"] not in kept:
            raise invalid(
                f"{what}[{index}].id",
                f"this customer has no {noun} with this id; leave id out to add one",
            )
        out.append(data)
    return out


def _search_text(name: str, external_id: str | None, people: list[dict[str, Any]]) -> str:
    parts = [name, external_id or ""]
    for person in people:
        parts += [person.get("firstName") or "", person.get("lastName") or ""]
        parts.append(person.get("email") or "")
    return "\n".join(part for part in parts if part).lower()


def _check_external_id(
    session: Session, biller_id: str, external_id: str | None, own_id: str | None
) -> None:
    """``externalId`` is unique per biller [I]."""
    if external_id is None:
        return
    query = select(Customer.id).where(
        Customer.biller_id == biller_id, Customer.external_id == external_id
    )
    if own_id is not None:
        query = query.where(Customer.id != own_id)
    if session.scalars(query).first() is not None:
        raise invalid("externalId", "another customer of this biller has this externalId")


def _apply(customer: Customer, data: CustomerIn, current: dict[str, Any]) -> bool:
    """Write ``data`` over ``customer`` (full replace); whether anything changed."""
    person_ids = {p["id"] for p in current.get("people", [])}
    address_ids = {a["id"] for a in current.get("addresses", [])}
    people = _with_ids(data.people, person_ids, "people", "person")
    addresses = _with_ids(data.addresses, address_ids, "addresses", "address")
    external = data.externalData.model_dump(mode="json") if data.externalData else None
    document = {
        "people": people,
        "addresses": addresses,
        "externalData": external,
        "timezone": data.timezone or DEFAULT_TIMEZONE,
    }
    changed = (
        customer.name != data.name
        or customer.external_id != data.externalId
        or customer.document != document
    )
    customer.name = data.name
    customer.external_id = data.externalId
    customer.document = document
    customer.search_text = _search_text(data.name, data.externalId, people)
    return changed


def create_customer(
    session: Session, biller_id: str, body: Any, now: datetime
) -> tuple[Customer, bool]:
    """The customer for ``body`` and whether it is new (an identical body returns the first)."""
    digest = body_hash(body)
    existing = session.scalars(
        select(Customer).where(Customer.biller_id == biller_id, Customer.body_hash == digest)
    ).first()
    if existing is not None:
        return existing, False
    data = parse_body(CustomerIn, body)
    if data.id is not None:
        raise invalid("id", "the service assigns the id; leave it out on create")
    _check_external_id(session, biller_id, data.externalId, None)
    customer = Customer(
        id=ids.new_uuid(),
        biller_id=biller_id,
        body_hash=digest,
        workflow_settings={},
        payment_settings={},
        created_at=now,
        updated_at=now,
    )
    _apply(customer, data, {})
    try:
        # A savepoint: two identical bodies racing on PostgreSQL meet the unique (biller, hash).
        with session.begin_nested():
            session.add(customer)
    except IntegrityError:
        existing = session.scalars(
            select(Customer).where(Customer.biller_id == biller_id, Customer.body_hash == digest)
        ).one()
        return existing, False
    _emit(session, customer, "CUSTOMER_CREATED")
    return customer, True


def update_customer(
    session: Session, customer: Customer, body: Any, now: datetime, *, path_id: str | None
) -> Customer:
    """Replace ``customer`` with ``body`` (``path_id``: the id of ``PUT /customers/{id}``)."""
    data = parse_body(CustomerIn, body)
    if path_id is not None and data.id is not None and data.id != path_id:
        raise invalid("id", "the id in the body differs from the id in the path")
    _check_external_id(session, customer.biller_id, data.externalId, customer.id)
    if _apply(customer, data, customer.document or {}):
        customer.updated_at = now
        _emit(session, customer, "CUSTOMER_UPDATED")
    return customer


def _emit(session: Session, customer: Customer, name: str) -> None:
    ids = {"customerId": customer.id}
    events.emit(session, biller_id=customer.biller_id, kind="customer", type=name, ids=ids)


def require_body_id(body: Any) -> str:
    """The ``id`` of a ``PUT /customers`` body, or a 422 naming ``id``."""
    value = body.get("id") if isinstance(body, dict) else None
    if not isinstance(value, str) or not value:
        problems: list[tuple[str | None, str]] = [("id", "the customer's id is required")]
        raise ValidationFailed(problems)
    return value
