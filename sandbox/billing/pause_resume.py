"""Pausing and resuming collection of an invoice (all its payment requests) or of one payment
request: the four ``:pause_collection`` / ``:resume_collection`` operations, one code path.

The rules themselves are :mod:`sandbox.billing.collection`'s; an invoice also remembers the
setting, so the requests it raises later (a changed plan) start with it.
"""

from __future__ import annotations

from typing import Any, Literal

from sqlalchemy.orm import Session

from sandbox.billing import collection
from sandbox.billing.invoices import get_invoice, payment_requests_of
from sandbox.billing.payment_requests import get_payment_request
from sandbox.core import state
from sandbox.models import Invoice
from sandbox.webhooks import events

Document = Literal["invoices", "payment_requests"]
Action = Literal["pause", "resume"]


def change_collection(
    session: Session,
    biller_id: str,
    document: Document,
    document_id: str,
    action: Action,
    body: Any,
) -> None:
    """Apply ``action`` to the methods the body names; raises the contract's 400s and 404."""
    if document == "invoices":
        invoice = get_invoice(session, biller_id, document_id)
        methods = collection.parse_methods(body)
        requests, customer_id = payment_requests_of(session, invoice), invoice.customer_id
    else:
        pr = get_payment_request(session, biller_id, document_id)
        methods = collection.parse_methods(body)
        invoice, requests, customer_id = None, [pr], pr.customer_id
    change = collection.pause if action == "pause" else collection.resume
    change(session, customer_id, requests, methods)
    if invoice is not None:
        value = collection.PAUSED if action == "pause" else collection.RESUMED
        _remember_override(session, invoice, methods, value)


def _remember_override(session: Session, invoice: Invoice, methods: list[str], value: str) -> None:
    """Requests the invoice raises later (a changed plan) start with the same setting."""
    document = invoice.document or {}
    current = document.get("collectionOverride") or {}
    override = {**current, **dict.fromkeys(methods, value)}
    if override != current:
        invoice.document = {**document, "collectionOverride": override}
        invoice.updated_at = state.now(session)
        events.invoice_event(session, invoice, f"INVOICE_COLLECTION_{value}")
