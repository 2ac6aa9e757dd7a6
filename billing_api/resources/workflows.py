"""``client.workflows``: workflow configurations per customer or invoice."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from billing_api.resources._core import (
    Call,
    SyncResource,
    body,
    model_call,
    sync_op,
)
from billing_api.types import EntityRef, Workflow, WorkflowEvent, WorkflowType

__all__ = ["Workflows"]

RefArg = EntityRef | Mapping[str, Any] | None


def upsert(
    *,
    name: str,
    type: WorkflowType | str,
    id: str | None = None,
    template_id: str | None = None,
    customer_details: RefArg = None,
    invoice_details: RefArg = None,
    events: Sequence[WorkflowEvent | Mapping[str, Any]] | None = None,
) -> Call[Workflow]:
    """Create a workflow, or replace the one named by ``id``. Not idempotent without ``id``."""
    payload = body(
        name=name,
        type=type,
        id=id,
        template_id=template_id,
        customer_details=customer_details,
        invoice_details=invoice_details,
        events=events,
    )
    return model_call("workflows.upsert", Workflow, json=payload)


class Workflows(SyncResource):
    """Workflows (blocking)."""

    upsert = sync_op(upsert)
