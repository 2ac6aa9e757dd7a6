"""``client.customer_autopilot_settings``: guidance for the AI collections agent, per customer."""

from __future__ import annotations

from billing_api.resources._core import (
    Call,
    SyncResource,
    body,
    model_call,
    no_content_call,
    sync_op,
)
from billing_api.types import AutopilotSettings

__all__ = ["CustomerAutopilotSettings"]


def retrieve(customer_id: str) -> Call[AutopilotSettings]:
    """A customer's autopilot settings."""
    return model_call(
        "customer_autopilot_settings.retrieve",
        AutopilotSettings,
        path_params={"customerId": customer_id},
    )


def upsert(customer_id: str, *, guidance: str) -> Call[AutopilotSettings]:
    """Set a customer's guidance text."""
    return model_call(
        "customer_autopilot_settings.upsert",
        AutopilotSettings,
        path_params={"customerId": customer_id},
        json=body(guidance=guidance),
    )


def delete(customer_id: str) -> Call[None]:
    """Remove a customer's guidance."""
    return no_content_call(
        "customer_autopilot_settings.delete", path_params={"customerId": customer_id}
    )


class CustomerAutopilotSettings(SyncResource):
    """Autopilot settings (blocking)."""

    retrieve = sync_op(retrieve)
    upsert = sync_op(upsert)
    delete = sync_op(delete)
