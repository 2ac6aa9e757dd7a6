"""``client.mandates``: Bacs direct-debit mandates (signed by the customer on a hosted page)."""

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
from billing_api.types import Mandate, MandateStatus

__all__ = ["Mandates"]


def list_(
    *,
    customer_id: str | None = None,
    statuses: Sequence[MandateStatus | str] | None = None,
    status_reason_codes: Sequence[str] | None = None,
    can_be_reinstated: bool | None = None,
    sort: Sort = None,
    page_size: int | None = None,
) -> ListCall[Mandate]:
    """Every mandate of the biller matching the filters."""
    params = query(
        customer_id=customer_id,
        statuses=statuses,
        status_reason_codes=status_reason_codes,
        can_be_reinstated=can_be_reinstated,
        sort=sort,
    )
    return list_call("mandates.list", "mandates", Mandate, params=params, page_size=page_size)


def list_for_customer(
    customer_id: str, *, sort: Sort = None, page_size: int | None = None
) -> ListCall[Mandate]:
    """Every mandate of one customer."""
    return list_call(
        "mandates.list_for_customer",
        "mandates",
        Mandate,
        path_params={"id": customer_id},
        params=query(sort=sort),
        page_size=page_size,
    )


def create(customer_id: str, *, redirect_url: str | None = None) -> Call[Mandate]:
    """Start a mandate for a customer; the customer signs at the mandate's ``url``."""
    return model_call(
        "mandates.create",
        Mandate,
        path_params={"id": customer_id},
        json=body(redirect_url=redirect_url),
    )


def retrieve(mandate_id: str) -> Call[Mandate]:
    """One mandate."""
    return model_call("mandates.retrieve", Mandate, path_params={"id": mandate_id})


def cancel(mandate_id: str) -> Call[Mandate]:
    """Cancel a mandate."""
    return model_call("mandates.cancel", Mandate, path_params={"id": mandate_id})


def reinstate(mandate_id: str) -> Call[Mandate]:
    """Reinstate a cancelled mandate (when ``can_be_reinstated``)."""
    return model_call("mandates.reinstate", Mandate, path_params={"id": mandate_id})


class Mandates(SyncResource):
    """Direct-debit mandates (blocking)."""

    list = sync_list(list_)
    list_for_customer = sync_list(list_for_customer)
    create = sync_op(create)
    retrieve = sync_op(retrieve)
    cancel = sync_op(cancel)
    reinstate = sync_op(reinstate)
