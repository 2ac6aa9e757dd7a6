"""``client.biller``: the biller of the authenticated user."""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from billing_api.resources._core import (
    Call,
    SyncResource,
    json_value,
    model_call,
    sync_op,
)
from billing_api.types import Biller

__all__ = ["BillerResource"]


def retrieve() -> Call[Biller]:
    """The biller (``GET /biller``)."""
    return model_call("biller.retrieve", Biller)


def update(operations: Sequence[Mapping[str, Any]]) -> Call[Biller]:
    """Apply a JSON Patch (RFC 6902) to the biller, e.g.
    ``[{"op": "replace", "path": "/website", "value": "https://example.com"}]``."""
    if isinstance(operations, Mapping):
        raise TypeError("operations: a list of JSON Patch operations, not a single mapping")
    for index, operation in enumerate(operations):
        if "op" not in operation or "path" not in operation:
            raise ValueError(f"operations[{index}]: a JSON Patch operation needs 'op' and 'path'")
    return model_call(
        "biller.update",
        Biller,
        json=json_value(list(operations), "operations"),
        headers={"Content-Type": "application/json-patch+json"},
    )


class BillerResource(SyncResource):
    """The biller (blocking)."""

    retrieve = sync_op(retrieve)
    update = sync_op(update)
