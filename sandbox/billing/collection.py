"""Collection pause and resume: the effective ``collection`` state and the spec's five rules.

A payment request keeps its own setting per method in ``collection_override``
(``{"AUTO_COLLECT": "PAUSED", "ON_DEMAND": "RESUMED"}``; absent = follow the customer). The
effective state of a method (contract ``CollectionState``): with an override, paused exactly when
the override is ``PAUSED`` (source ``PAYMENT_REQUEST``); without one, paused when the customer's
payment settings pause it today (source ``CUSTOMER``), else not paused (source ``NONE``).
Invoice-level calls write the same overrides on the invoice's payment requests, and nowhere else.

The simulation asks :func:`is_paused` before it collects.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date
from typing import Any

from sqlalchemy.orm import Session

from sandbox.core import state
from sandbox.core.errors import BAD_REQUEST, ApiError
from sandbox.customers.lookup import current_mandate, direct_debit_available, paused_methods
from sandbox.models.billing import Customer, Invoice, PaymentRequest
from sandbox.webhooks import events

METHODS = ("AUTO_COLLECT", "ON_DEMAND")
PAUSED = "PAUSED"
RESUMED = "RESUMED"
# Payment requests in these statuses can no longer collect (contract, pause rule 2).
FINISHED = frozenset({"SUBMITTED", "PAID", "SETTLED", "VOID"})
NOT_ELIGIBLE = "COLLECTION_METHOD_NOT_ELIGIBLE"
DD_NOT_AVAILABLE = "DIRECT_DEBIT_NOT_AVAILABLE"
FIELD = "collectionMethods"


def parse_methods(body: Any) -> list[str]:
    """``collectionMethods`` of a pause/resume body; 400 ``BAD_REQUEST`` (rule 4, never 422)."""
    if not isinstance(body, dict):
        raise ApiError(400, BAD_REQUEST, "send a JSON object with collectionMethods", field=FIELD)
    methods = body.get(FIELD)
    if not isinstance(methods, list) or not methods:
        raise ApiError(400, BAD_REQUEST, "must be a non-empty array", field=FIELD)
    for index, method in enumerate(methods):
        if method not in METHODS:
            detail = f"unrecognised collection method {method!r}; use {' or '.join(METHODS)}"
            raise ApiError(400, BAD_REQUEST, detail, field=f"{FIELD}[{index}]")
    if len(set(methods)) != len(methods):
        raise ApiError(400, BAD_REQUEST, "must not repeat a method", field=FIELD)
    return list(methods)


def _customer(session: Session, customer_id: str) -> Customer:
    customer = session.get(Customer, customer_id)
    assert customer is not None  # the foreign key guarantees it
    return customer


def method_state(override: str | None, customer_paused: bool) -> dict[str, Any]:
    """Paused/source of one method from the request's override and the customer's pause."""
    if override is not None:
        return {"paused": override == PAUSED, "source": "PAYMENT_REQUEST", "override": override}
    return {"paused": customer_paused, "source": "CUSTOMER" if customer_paused else "NONE"}


def collection_state(session: Session, pr: PaymentRequest, today: date) -> dict[str, Any]:
    """The contract's ``CollectionState`` of a payment request."""
    customer_paused = paused_methods(_customer(session, pr.customer_id), today)
    overrides = pr.collection_override or {}
    methods = []
    for method in METHODS:
        state = method_state(overrides.get(method), method in customer_paused)
        methods.append({"method": method, "override": None, **state})
    return {"methods": methods}


def is_paused(session: Session, pr: PaymentRequest, method: str, today: date) -> bool:
    """Whether ``method`` must not collect for ``pr`` today (what the simulation checks)."""
    override = (pr.collection_override or {}).get(method)
    if override is not None:
        return bool(override == PAUSED)
    return method in paused_methods(_customer(session, pr.customer_id), today)


def invoice_collection_state(
    session: Session, invoice: Invoice, requests: Sequence[PaymentRequest], today: date
) -> dict[str, Any]:
    """The invoice's summary over its payment requests that can still collect: paused when all of
    them pause the method (false when there are none); override when they all agree."""
    live = [pr for pr in requests if pr.status not in FINISHED]
    customer_paused = paused_methods(_customer(session, invoice.customer_id), today)
    methods = []
    for method in METHODS:
        overrides = {(pr.collection_override or {}).get(method) for pr in live}
        common = overrides.pop() if len(overrides) == 1 else None
        paused = bool(live) and all(is_paused(session, pr, method, today) for pr in live)
        state = method_state(common, method in customer_paused)
        methods.append({"method": method, "override": None, **state, "paused": paused})
    return {"methods": methods}


def _auto_collect_pausable(session: Session, customer_id: str) -> bool:
    """[I] AUTO_COLLECT can be paused only for a customer whose mandate is not CANCELLED."""
    mandate = current_mandate(session, customer_id)
    return mandate is not None and mandate.status != "CANCELLED"


def _not_eligible(detail: str) -> ApiError:
    return ApiError(400, NOT_ELIGIBLE, detail, field=FIELD)


def _set(
    session: Session, requests: Iterable[PaymentRequest], methods: Sequence[str], value: str
) -> None:
    now = state.now(session)
    for pr in requests:
        # A new dict: the JSON column notices an assignment, not an in-place change.
        changed = {**(pr.collection_override or {}), **dict.fromkeys(methods, value)}
        if changed != (pr.collection_override or {}):
            pr.collection_override = changed
            pr.updated_at = now  # pollers of lastUpdatedStartTime see it; a repeat changes nothing
            events.payment_request_event(session, pr, f"PAYMENT_REQUEST_COLLECTION_{value}")


def pause(
    session: Session, customer_id: str, requests: Sequence[PaymentRequest], methods: Sequence[str]
) -> None:
    """Rule 1 and 2: every request gets ``PAUSED`` for the named methods, or nothing changes."""
    live = [pr for pr in requests if pr.status not in FINISHED]
    if not live:
        raise _not_eligible("nothing to pause: no payment request here can still collect")
    if "AUTO_COLLECT" in methods and not _auto_collect_pausable(session, customer_id):
        raise _not_eligible(
            "AUTO_COLLECT cannot be paused for a customer without a direct debit mandate"
        )
    _set(session, live, methods, PAUSED)


def resume(
    session: Session, customer_id: str, requests: Sequence[PaymentRequest], methods: Sequence[str]
) -> None:
    """Rule 1 and 3 of resume: ``RESUMED`` for the named methods, or nothing when direct debit is
    unavailable and AUTO_COLLECT is named. A request that can no longer collect records it too."""
    if "AUTO_COLLECT" in methods and not direct_debit_available(session, customer_id):
        raise ApiError(
            400,
            DD_NOT_AVAILABLE,
            "the customer has no active or pending direct debit mandate",
            field=FIELD,
        )
    _set(session, requests, methods, RESUMED)
