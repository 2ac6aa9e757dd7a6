"""``client.recurring_invoices``: schedules that generate invoices on a cadence (``SCH-n``)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from billing_api.resources._core import (
    Call,
    SyncResource,
    body,
    model_call,
    no_content_call,
    sync_op,
)
from billing_api.types import RecurringInvoice, RecurringInvoiceDetails, ScheduleCadence

__all__ = ["RecurringInvoices"]

CadenceArg = ScheduleCadence | Mapping[str, Any]
DetailsArg = RecurringInvoiceDetails | Mapping[str, Any]


def _on(operation_id: str, schedule_id: str, **request: Any) -> Call[RecurringInvoice]:
    return model_call(operation_id, RecurringInvoice, path_params={"id": schedule_id}, **request)


def create(*, cadence: CadenceArg, invoice_details: DetailsArg) -> Call[RecurringInvoice]:
    """Create a schedule (a draft until activated). Not idempotent."""
    payload = body(cadence=cadence, invoice_details=invoice_details)
    return model_call("recurring_invoices.create", RecurringInvoice, json=payload)


def retrieve(schedule_id: str) -> Call[RecurringInvoice]:
    """One schedule."""
    return _on("recurring_invoices.retrieve", schedule_id)


def update(
    schedule_id: str, *, cadence: CadenceArg, invoice_details: DetailsArg
) -> Call[RecurringInvoice]:
    """Replace a schedule's cadence and invoice."""
    payload = body(cadence=cadence, invoice_details=invoice_details)
    return _on("recurring_invoices.update", schedule_id, json=payload)


def delete(schedule_id: str) -> Call[None]:
    """Delete a schedule."""
    return no_content_call("recurring_invoices.delete", path_params={"id": schedule_id})


def cancel(schedule_id: str) -> Call[RecurringInvoice]:
    """Stop a schedule (nothing more is generated)."""
    return _on("recurring_invoices.cancel", schedule_id)


def activate(schedule_id: str) -> Call[RecurringInvoice]:
    """Start a draft schedule. Not idempotent."""
    return _on("recurring_invoices.activate", schedule_id)


class RecurringInvoices(SyncResource):
    """Recurring invoices (blocking)."""

    create = sync_op(create)
    retrieve = sync_op(retrieve)
    update = sync_op(update)
    delete = sync_op(delete)
    cancel = sync_op(cancel)
    activate = sync_op(activate)
