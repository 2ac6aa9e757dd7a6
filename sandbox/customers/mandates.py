"""Direct-debit mandates: create-if-missing, cancel, reinstate, forced states, the public shape.

A customer has at most one live (not ``CANCELLED``) mandate. Lifecycle [C]: ``CREATED`` (awaiting
the signature) → ``PENDING`` (signed, awaiting the bank) → ``ACTIVE``; any → ``CANCELLED``;
a reinstatable cancelled mandate goes back to ``PENDING`` with ``REINSTATED`` [I for the path].
The simulation (signing page, bank confirmation) moves mandates with :func:`set_status`.
"""

from __future__ import annotations

import string
from collections.abc import Sequence
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, field_validator
from sqlalchemy import and_, not_, select
from sqlalchemy.orm import Session

from sandbox.core import ids
from sandbox.core.errors import INVALID_STATE, ApiError, not_found
from sandbox.core.pagination import Listing, column, sortable
from sandbox.core.timefmt import iso
from sandbox.core.validation import check_https_url, parse_body
from sandbox.customers.lookup import mandate_url
from sandbox.models import Biller
from sandbox.models.billing import Customer, Mandate
from sandbox.webhooks import events

STATUSES = ("CREATED", "PENDING", "ACTIVE", "CANCELLED", "MIGRATING")
REASON_CODES = (
    "PENDING_DD_CAPABILITY",
    "PENDING_ACTIVATION",
    "MIGRATED",
    "BANK_ACCOUNT_CHANGED",
    "INCORRECT_BANK_DETAILS",
    "INSTRUCTION_CANCELLED_BY_PAYER",
    "PAYER_DECEASED",
    "ACCOUNT_TRANSFERRED",
    "ADVANCE_NOTICE_DISPUTED",
    "AMOUNT_DISPUTED",
    "MANDATE_NOT_FOUND",
    "DISPUTE_TOO_EARLY",
    "DISPUTE_TOO_LATE",
    "INVALID_SORT_CODE",
    "INVALID_ACC_NUMBER",
    "ACCOUNT_CLOSED",
    "CANCELLED_ON_DEMAND",
    "REINSTATED",
    "OTHER",
)
# Cancellations after which the same mandate can never collect again: the account or the payer
# is gone, or the bank details were wrong. Others (the payer or biller cancelled, a dispute) can
# be reinstated [I].
FINAL_REASONS = frozenset(
    {
        "PAYER_DECEASED",
        "ACCOUNT_CLOSED",
        "ACCOUNT_TRANSFERRED",
        "BANK_ACCOUNT_CHANGED",
        "INCORRECT_BANK_DETAILS",
        "INVALID_SORT_CODE",
        "INVALID_ACC_NUMBER",
        "MANDATE_NOT_FOUND",
    }
)
_ID_ALPHABET = string.ascii_letters + string.digits


def new_mandate_id() -> str:
    """A short opaque id like the real service's (``WiGr3EBGuORksFWPEj``, 18 characters)."""
    return ids.random_string(_ID_ALPHABET, 18)


def get_mandate(session: Session, biller_id: str, mandate_id: str) -> Mandate:
    mandate = session.get(Mandate, mandate_id)
    if mandate is None or mandate.biller_id != biller_id:
        raise not_found("mandate")
    return mandate


def live_mandate(session: Session, customer_id: str) -> Mandate | None:
    """The customer's mandate that is not cancelled, if any."""
    return session.scalars(
        select(Mandate)
        .where(Mandate.customer_id == customer_id, Mandate.status != "CANCELLED")
        .order_by(Mandate.created_at.desc(), Mandate.id.desc())
    ).first()


def create_or_get(
    session: Session, customer: Customer, redirect_url: str | None, now: datetime
) -> tuple[Mandate, bool]:
    """The customer's live mandate (its ``redirectUrl`` replaced when one is sent), or a new one
    in ``CREATED``; and whether it is new."""
    mandate = live_mandate(session, customer.id)
    if mandate is not None:
        if redirect_url is not None and redirect_url != mandate.redirect_url:
            mandate.redirect_url = redirect_url
            mandate.updated_at = now
        return mandate, False
    # A new mandate supersedes the cancelled ones: they can no longer be reinstated.
    for old in session.scalars(select(Mandate).where(Mandate.customer_id == customer.id)):
        old.can_be_reinstated = False
    mandate = Mandate(
        id=new_mandate_id(),
        biller_id=customer.biller_id,
        customer_id=customer.id,
        status="CREATED",
        status_reason_code=None,
        can_be_reinstated=False,
        redirect_url=redirect_url,
        distribution_time=now,
        created_at=now,
        updated_at=now,
    )
    session.add(mandate)
    session.flush()
    events.mandate_event(session, mandate, "DIRECT_DEBIT_MANDATE_INITIATED")
    return mandate, True


def cancel(mandate: Mandate, now: datetime) -> Mandate:
    """Cancel on the biller's demand; a cancelled mandate answers unchanged."""
    if mandate.status == "MIGRATING":
        raise ApiError(400, INVALID_STATE, "a mandate being migrated cannot be cancelled")
    if mandate.status == "CANCELLED":
        return mandate
    mandate.status = "CANCELLED"
    mandate.status_reason_code = "CANCELLED_ON_DEMAND"
    # Only a mandate the payer signed can be brought back.
    mandate.can_be_reinstated = mandate.authorisation_time is not None
    mandate.updated_at = now
    events.mandate_event(events.session_of(mandate), mandate, "DIRECT_DEBIT_MANDATE_CANCELLED")
    return mandate


def reinstate(session: Session, mandate: Mandate, now: datetime) -> Mandate:
    """CANCELLED (reinstatable) → PENDING with ``REINSTATED``; PENDING/ACTIVE answer unchanged."""
    if mandate.status in ("PENDING", "ACTIVE"):
        return mandate
    if mandate.status != "CANCELLED" or not mandate.can_be_reinstated:
        raise ApiError(
            400,
            INVALID_STATE,
            f"mandate in status {mandate.status} cannot be reinstated"
            + ("" if mandate.status != "CANCELLED" else " (canBeReinstated is false)"),
        )
    other = live_mandate(session, mandate.customer_id)
    if other is not None:
        raise ApiError(400, INVALID_STATE, "the customer has another mandate that is not cancelled")
    mandate.status = "PENDING"
    mandate.status_reason_code = "REINSTATED"
    mandate.can_be_reinstated = False
    mandate.updated_at = now
    events.mandate_event(session, mandate, "DIRECT_DEBIT_MANDATE_REINSTATED")
    return mandate


def set_status(
    mandate: Mandate,
    status: str,
    reason: str | None,
    now: datetime,
    *,
    can_be_reinstated: bool | None = None,
    bank_account_number: str | None = None,
) -> Mandate:
    """Move a mandate to ``status`` as the bank or the payer would (admin API, simulation)."""
    if status in ("PENDING", "ACTIVE"):
        mandate.authorisation_time = mandate.authorisation_time or now
        mandate.bank_account_number = (
            bank_account_number
            or mandate.bank_account_number
            or ("****" + ids.random_string(string.digits, 4))
        )
    if status == "ACTIVE":
        mandate.submission_time = mandate.submission_time or now
    if status == "CANCELLED":
        reason = reason or "INSTRUCTION_CANCELLED_BY_PAYER"
        if can_be_reinstated is None:
            can_be_reinstated = (
                mandate.authorisation_time is not None and reason not in FINAL_REASONS
            )
    mandate.status = status
    mandate.status_reason_code = reason
    mandate.can_be_reinstated = bool(can_be_reinstated) and status == "CANCELLED"
    mandate.updated_at = now
    return mandate


def public(session: Session, mandate: Mandate, root: str) -> dict[str, Any]:
    """The contract's ``Mandate`` (``root``: the sandbox's root URL, for the signing page)."""
    customer = session.get(Customer, mandate.customer_id)
    biller = session.get(Biller, mandate.biller_id)
    return {
        "id": mandate.id,
        "customerId": mandate.customer_id,
        "customer": {"id": mandate.customer_id, "name": customer.name if customer else ""},
        "status": mandate.status,
        "statusReasonCode": mandate.status_reason_code,
        "failureReason": mandate.failure_reason,
        "canBeReinstated": mandate.status == "CANCELLED" and mandate.can_be_reinstated,
        "url": mandate_url(root, mandate.id),
        "redirectUrl": mandate.redirect_url,
        "sender": {"name": str(biller.document.get("name", "")) if biller else ""},
        "bankAccountNumber": mandate.bank_account_number,
        "creationTime": iso(mandate.created_at),
        "lastUpdateTime": iso(mandate.updated_at),
        "distributionTime": _maybe(mandate.distribution_time),
        "authorisationTime": _maybe(mandate.authorisation_time),
        "submissionTime": _maybe(mandate.submission_time),
        "lastSeenTime": None,
    }


def _maybe(moment: datetime | None) -> str | None:
    return iso(moment) if moment is not None else None


SORTABLE = sortable(
    creationTime=Mandate.created_at,
    lastUpdateTime=Mandate.updated_at,
    status=Mandate.status,
    authorisationTime=Mandate.authorisation_time,
)


@dataclass(frozen=True)
class MandateFilters:
    """The filters of ``GET /customers/directdebitmandates`` (empty: no condition)."""

    customer_ids: Sequence[str] = ()
    statuses: Sequence[str] = ()
    reason_codes: Sequence[str] = ()
    can_be_reinstated: bool | None = None


def search(biller_id: str, filters: MandateFilters) -> Listing:
    """The biller's mandates matching every filter, oldest first unless sorted."""
    query = select(Mandate).where(Mandate.biller_id == biller_id)
    if filters.customer_ids:
        query = query.where(Mandate.customer_id.in_(filters.customer_ids))
    if filters.statuses:
        query = query.where(Mandate.status.in_(filters.statuses))
    if filters.reason_codes:
        query = query.where(Mandate.status_reason_code.in_(filters.reason_codes))
    if filters.can_be_reinstated is not None:
        reinstatable = and_(Mandate.status == "CANCELLED", Mandate.can_be_reinstated.is_(True))
        query = query.where(reinstatable if filters.can_be_reinstated else not_(reinstatable))
    return Listing(query, SORTABLE, column(Mandate.id), ("creationTime,asc",))


def of_customer(customer: Customer) -> Listing:
    """A customer's mandates, newest first unless sorted [I]."""
    query = select(Mandate).where(Mandate.customer_id == customer.id)
    return Listing(query, SORTABLE, column(Mandate.id), ("creationTime,desc",))


class MandateCreateIn(BaseModel):
    """Only ``redirectUrl`` is read; bank details cannot be sent, other fields are ignored [I]."""

    model_config = ConfigDict(extra="ignore")
    redirectUrl: str | None = Field(None, max_length=2048)

    _https = field_validator("redirectUrl")(check_https_url)


def create_from_body(session: Session, customer: Customer, body: Any, now: datetime) -> Mandate:
    """``PUT /customers/{id}/directdebitmandates``: the live mandate, created when missing [C]."""
    data = parse_body(MandateCreateIn, body if body is not None else {})
    mandate, _created = create_or_get(session, customer, data.redirectUrl, now)
    return mandate
