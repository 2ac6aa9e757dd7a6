"""What the payment-request operations do: create, edit, send, distribution, collection intent.

Bodies are checked with :class:`sandbox.core.bodies.Fields` (422 naming the field); a status that
does not allow the operation is 400 INVALID_STATE, except ``:cancel-collection-on-failure``, which
the spec answers with 422.
"""

from __future__ import annotations

import re
from datetime import datetime
from typing import Any

from sqlalchemy import select
from sqlalchemy.orm import Session

from sandbox.billing.payment_requests import (
    DISTRIBUTION_METHODS,
    EDITABLE,
    activated_status,
    check_template,
    due_amount,
    invalid_state,
    mark_paid,
    new_payment_request,
    parse_activation,
    resolve_customer,
    send,
)
from sandbox.core import state
from sandbox.core.bodies import Fields
from sandbox.core.errors import INVALID_STATE, VALIDATION_ERROR, ApiError
from sandbox.models.billing import PaymentRequest
from sandbox.webhooks import events

_URI = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:\S+$")
MAX_BATCH = 200


def _redirect_url(fields: Fields) -> str | None:
    url = fields.text("redirectUrl", max_length=2048)
    if url is not None and not _URI.match(url):
        fields.fail("redirectUrl", "must be an absolute URI")
    return url


def _currency(fields: Fields, *, required: bool) -> None:
    code = fields.text("currencyCode", required=required, max_length=3)
    if code is not None and code != "GBP":
        fields.fail("currencyCode", "only GBP is accepted")


def distribution_changes(session: Session, biller_id: str, fields: Fields | None) -> dict[str, Any]:
    """The ``Distribution`` fields the body sets (absent ones are left as they are)."""
    if fields is None:
        return {}
    changes: dict[str, Any] = {}
    if fields.has("collectionMethod"):
        changes["collectionMethod"] = fields.choice("collectionMethod", DISTRIBUTION_METHODS)
    if "customMessage" in fields.data:
        changes["customMessage"] = fields.text("customMessage", max_length=1000)
    if "templateId" in fields.data:
        changes["templateId"] = check_template(session, biller_id, fields)
    if fields.has("approvedForSending"):
        changes["approvedForSending"] = fields.boolean("approvedForSending", False)
    return changes


def _apply_distribution(pr: PaymentRequest, changes: dict[str, Any], now: datetime) -> None:
    """Merge the changes; approving a DRAFT sends it (once: a repeat changes nothing)."""
    merged = {**(pr.distribution or {}), **changes}
    if merged != (pr.distribution or {}):
        pr.distribution = merged
        pr.updated_at = now
    if merged.get("approvedForSending") and pr.status == "DRAFT":
        send(pr, "UNPAID", now)


def create_payment_request(
    session: Session, biller_id: str, body: dict[str, Any]
) -> PaymentRequest:
    """A standalone (SINGLE) request: DRAFT, or UNPAID when approved for sending."""
    fields = Fields(body)
    customer_ref = fields.obj("customer", required=True)
    assert customer_ref is not None
    customer = resolve_customer(session, biller_id, customer_ref)
    description = fields.text("description", required=True, max_length=4000, blank=False)
    total = fields.money("totalAmount", required=True)
    _currency(fields, required=True)
    external_id = fields.text("externalId", max_length=255)
    if (
        external_id is not None
        and session.scalars(
            select(PaymentRequest.id).where(
                PaymentRequest.biller_id == biller_id, PaymentRequest.external_id == external_id
            )
        ).first()
    ):
        fields.fail("externalId", "another payment request already has this externalId")
    default_method = (customer.payment_settings or {}).get("defaultCollectionMethod")
    distribution = {
        "collectionMethod": default_method or "ON_DEMAND",
        "approvedForSending": False,
        **distribution_changes(session, biller_id, fields.obj("distribution")),
    }
    assert description is not None and total is not None
    pr = new_payment_request(
        session,
        customer_id=customer.id,
        biller_id=biller_id,
        description=description,
        total=total,
        now=state.now(session),
        pay_by=fields.date("payByDate"),
        distribution=distribution,
        reference=fields.text("reference", max_length=255),
        tax_rate=fields.tax_rate("taxRate"),
        external_id=external_id,
        document={"source": "API", "redirectUrl": _redirect_url(fields)},
    )
    if distribution.get("approvedForSending"):
        send(pr, "UNPAID", pr.created_at)
    session.flush()
    return pr


def update_payment_request(session: Session, pr: PaymentRequest, body: dict[str, Any]) -> None:
    """The full-object edit of the editable fields (DRAFT, UNPAID, SCHEDULED only)."""
    if pr.status not in EDITABLE:
        raise invalid_state(f"payment request in status {pr.status} cannot be edited")
    fields = Fields(body)
    description = fields.text("description", required=True, max_length=4000, blank=False)
    total = fields.money("totalAmount", required=True)
    assert description is not None and total is not None
    if pr.invoice_id is not None and total != pr.total_amount:
        fields.fail("totalAmount", "the amount of an invoice's payment request follows the invoice")
    if total < pr.paid_amount:
        fields.fail("totalAmount", f"must not be below what has been paid ({pr.paid_amount})")
    _currency(fields, required=False)
    changes = distribution_changes(session, pr.biller_id, fields.obj("distribution"))
    now = state.now(session)
    pr.description = description
    pr.total_amount = total
    pr.tax_rate = fields.tax_rate("taxRate")
    pr.reference = fields.text("reference", max_length=255)
    pr.pay_by_date = fields.date("payByDate")
    pr.document = {**(pr.document or {}), "redirectUrl": _redirect_url(fields)}
    pr.updated_at = now
    events.payment_request_event(session, pr, "PAYMENT_REQUEST_UPDATED")
    _apply_distribution(pr, changes, now)
    if pr.paid_amount > 0 and due_amount(pr) == 0:
        mark_paid(pr, now)


def update_distribution(
    session: Session, biller_id: str, body: dict[str, Any]
) -> list[PaymentRequest]:
    """All or nothing: every named request exists (422) and may change (400), then all change."""
    fields = Fields(body)
    ids = fields.array("paymentRequestIds", required=True, max_items=MAX_BATCH)
    if not ids:
        fields.fail("paymentRequestIds", "must name at least one payment request")
    distribution = fields.obj("distribution", required=True)
    changes = distribution_changes(session, biller_id, distribution)
    requests = []
    for index, pr_id in enumerate(ids):
        pr = session.get(PaymentRequest, pr_id) if isinstance(pr_id, str) else None
        if pr is None or pr.biller_id != biller_id:
            field = f"paymentRequestIds[{index}]"
            raise ApiError(422, VALIDATION_ERROR, "no payment request has this id", field=field)
        if pr in requests:
            fields.fail("paymentRequestIds", "must not repeat an id")
        requests.append(pr)
    for pr in requests:
        if pr.status not in EDITABLE:
            raise invalid_state(
                f"{pr.payment_request_no} in status {pr.status} cannot change its distribution"
            )
    now = state.now(session)
    for pr in requests:
        _apply_distribution(pr, changes, now)
        events.payment_request_event(session, pr, "PAYMENT_REQUEST_UPDATED")
    return requests


def activate_payment_request(session: Session, pr: PaymentRequest, body: dict[str, Any]) -> None:
    """Send a DRAFT: SCHEDULED by direct debit (a usable mandate is needed), else UNPAID."""
    if pr.status != "DRAFT":
        raise invalid_state(f"payment request in status {pr.status} cannot be activated")
    activation = parse_activation(session, pr.biller_id, body)
    status = activated_status(session, pr.customer_id, activation.collection_method)
    send(
        pr,
        status,
        state.now(session),
        collectionMethod=activation.distribution_method,
        customMessage=activation.custom_message,
        templateId=activation.template_id,
    )


def cancel_collection_on_failure(session: Session, pr: PaymentRequest) -> None:
    """Record the intent (SCHEDULED or SUBMITTED with direct debit; otherwise 422)."""
    if pr.cancel_collection_on_failure:
        return
    direct_debit = (pr.distribution or {}).get("collectionMethod") == "AUTO_COLLECT"
    if pr.status not in ("SCHEDULED", "SUBMITTED") or not direct_debit:
        raise ApiError(
            422,
            INVALID_STATE,
            f"payment request in status {pr.status} is not being collected by direct debit",
        )
    pr.cancel_collection_on_failure = True
    pr.updated_at = state.now(session)


def mark_standalone_paid(session: Session, pr: PaymentRequest) -> None:
    """``:mark-as-paid``: only for a payment request raised on its own, in a payable status."""
    if pr.invoice_id is not None:
        raise invalid_state(
            "this payment request was raised for an invoice: mark the invoice as paid instead"
        )
    if pr.status in ("DRAFT", "SUBMITTED", "VOID"):
        raise invalid_state(f"payment request in status {pr.status} cannot be marked as paid")
    mark_paid(pr, state.now(session))
