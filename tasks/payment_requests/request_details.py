"""What finance asks of each payment request in a report: its number (``PR-31``), its status
(``DRAFT``, ``UNPAID``…) and the link the customer pays through — as the service shows them after
the run, read in one listing of what changed since the run's first import job was created (never
one call per row, and never the biller's whole history).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from billing_api import BillingClient
    from ledger import Operation


@dataclass(frozen=True)
class RequestDetails:
    """One payment request as the report shows it."""

    number: str
    status: str
    link: str


def first_job_created(client: BillingClient, operations: list[Operation]) -> datetime | None:
    """When the service created the earliest import job of these operations, on its own clock
    (one call per job): what the run changed was changed after it, what came before was not."""
    created = [
        client.payment_requests.retrieve_bulk_import(op.remote_id).creation_time
        for op in operations
        if op.remote_id
    ]
    return min(created) if created else None


def request_details(client: BillingClient, since: datetime | None) -> dict[str, RequestDetails]:
    """Number, status and payment link of every payment request changed since ``since``."""
    if since is None:
        return {}
    found = client.payment_requests.list(last_updated_start_time=since)
    return {
        str(request.id): RequestDetails(
            number=request.payment_request_no,
            status=str(request.status),
            link=request.payment_link.url if request.payment_link else "",
        )
        for request in found
    }
