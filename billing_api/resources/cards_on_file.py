"""``client.cards_on_file``: saved cards of a customer, and requests for card details."""

from __future__ import annotations

from collections.abc import Sequence

from billing_api.resources._common import Sort
from billing_api.resources._core import (
    Call,
    ListCall,
    SyncResource,
    body,
    list_call,
    model_call,
    query,
    sync_list,
    sync_op,
)
from billing_api.types import CardOnFile, CardOnFileRequestResult, CardOnFileStatus

__all__ = ["CardsOnFile"]


def list_(
    customer_id: str,
    *,
    statuses: Sequence[CardOnFileStatus | str] | None = None,
    sort: Sort = None,
    page_size: int | None = None,
) -> ListCall[CardOnFile]:
    """Every saved card of a customer."""
    return list_call(
        "cards_on_file.list",
        "cardsOnFile",
        CardOnFile,
        path_params={"customerId": customer_id},
        params=query(statuses=statuses, sort=sort),
        page_size=page_size,
    )


def remove(customer_id: str, card_on_file_id: str) -> Call[CardOnFile]:
    """Remove a saved card."""
    return model_call(
        "cards_on_file.remove",
        CardOnFile,
        path_params={"customerId": customer_id, "cardOnFileId": card_on_file_id},
    )


def request(
    customer_id: str, *, redirect_url: str | None = None, custom_message: str | None = None
) -> Call[CardOnFileRequestResult]:
    """Ask the customer (by email) to save a card; not idempotent (each call sends a message)."""
    return model_call(
        "cards_on_file.request",
        CardOnFileRequestResult,
        path_params={"customerId": customer_id},
        json=body(redirect_url=redirect_url, custom_message=custom_message),
    )


class CardsOnFile(SyncResource):
    """Saved cards (blocking)."""

    list = sync_list(list_)
    remove = sync_op(remove)
    request = sync_op(request)
