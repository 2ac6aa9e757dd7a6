"""``client.recurring_payment_requests``: schedules generating payment requests (``SCH-n``)."""

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
from billing_api.types import (
    RecurringPaymentRequest,
    RecurringPaymentRequestDetails,
    ScheduleCadence,
)

__all__ = ["RecurringPaymentRequests"]

CadenceArg = ScheduleCadence | Mapping[str, Any]
DetailsArg = RecurringPaymentRequestDetails | Mapping[str, Any]


def _on(operation_id: str, schedule_id: str, **request: Any) -> Call[RecurringPaymentRequest]:
    return model_call(
        operation_id, RecurringPaymentRequest, path_params={"id": schedule_id}, **request
    )


def create(
    *, cadence: CadenceArg, payment_request_details: DetailsArg
) -> Call[RecurringPaymentRequest]:
    """Create a schedule. Not idempotent."""
    payload = body(cadence=cadence, payment_request_details=payment_request_details)
    return model_call("recurring_payment_requests.create", RecurringPaymentRequest, json=payload)


def retrieve(schedule_id: str) -> Call[RecurringPaymentRequest]:
    """One schedule."""
    return _on("recurring_payment_requests.retrieve", schedule_id)


def update(
    schedule_id: str, *, cadence: CadenceArg, payment_request_details: DetailsArg
) -> Call[RecurringPaymentRequest]:
    """Replace a schedule's cadence and payment request."""
    payload = body(cadence=cadence, payment_request_details=payment_request_details)
    return _on("recurring_payment_requests.update", schedule_id, json=payload)


def delete(schedule_id: str) -> Call[None]:
    """Delete a schedule."""
    return no_content_call("recurring_payment_requests.delete", path_params={"id": schedule_id})


def cancel(schedule_id: str) -> Call[RecurringPaymentRequest]:
    """Stop a schedule."""
    return _on("recurring_payment_requests.cancel", schedule_id)


class RecurringPaymentRequests(SyncResource):
    """Recurring payment requests (blocking)."""

    create = sync_op(create)
    retrieve = sync_op(retrieve)
    update = sync_op(update)
    delete = sync_op(delete)
    cancel = sync_op(cancel)
