"""What is owed: the biller's open invoices and standalone payment requests, as one table.

Fetched through the client with pagination (pages of 200, the contract's largest), filtered by
status on the service's side (or refreshed from an earlier run's by what changed since:
:func:`refresh_open_items`), and handed to matching as a pandas frame with Arrow-backed columns:
``kind`` (``invoice`` or ``payment_request``), ``id``, ``number``, ``reference`` (the biller's
own reference on a payment request), ``customer``, ``due`` (whole pennies), ``due_date``,
``status``. Payment requests raised for an invoice are left out: their invoice is what a
customer pays and what ``payments:import`` records against.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import date, datetime
from decimal import Decimal
from typing import Any

import pandas as pd
import pyarrow as pa

from billing_api import BillingClient
from tasks.bank_payments._references import canonical_numbers, plain_texts

PAGE_SIZE = 200
OPEN_INVOICE_STATUSES = ("UNPAID", "OVERDUE", "SCHEDULED")
OPEN_REQUEST_STATUSES = ("UNPAID", "SCHEDULED")
COLUMNS = ("kind", "id", "number", "reference", "customer", "due", "due_date", "status")
KEYS = ("key", "ref_key")


@dataclass(frozen=True)
class OpenItem:
    """One invoice or payment request with money still due."""

    kind: str
    id: str
    number: str
    reference: str
    customer: str
    due: int
    due_date: date | None
    status: str
    paid: int = 0  # pennies paid already (invoices: their paidAmount)


def _pennies(value: Decimal | int | str | None) -> int:
    return int((Decimal(str(value or 0)) * 100).to_integral_value())


def _invoice_item(invoice: Any) -> OpenItem | None:
    """An invoice as an open item, or None when nothing is due on it."""
    due = _pennies(invoice.due_amount)
    if due <= 0 or str(invoice.status) not in OPEN_INVOICE_STATUSES:
        return None
    customer = invoice.customer.name if invoice.customer is not None else ""
    return OpenItem(
        "invoice",
        str(invoice.id),
        invoice.invoice_no,
        "",
        str(customer or ""),
        due,
        invoice.due_date,
        str(invoice.status),
        _pennies(invoice.paid_amount),
    )


def _request_item(pr: Any) -> OpenItem | None:
    """A standalone payment request as an open item, or None (raised for an invoice, not open,
    nothing due)."""
    if pr.invoice_ids or str(pr.status) not in OPEN_REQUEST_STATUSES:
        return None
    due = _pennies(pr.due_amount if pr.due_amount is not None else pr.total_amount)
    if due <= 0:
        return None
    customer = getattr(pr.customer, "name", "") if pr.customer is not None else ""
    return OpenItem(
        "payment_request",
        str(pr.id),
        pr.payment_request_no,
        str(pr.reference or ""),
        str(customer or ""),
        due,
        pr.pay_by_date,
        str(pr.status),
    )


def fetch_open_items(client: BillingClient) -> list[OpenItem]:
    """Every open invoice and standalone payment request of the client's biller."""
    invoices = client.invoices.list(statuses=list(OPEN_INVOICE_STATUSES), page_size=PAGE_SIZE)
    requests = client.payment_requests.list(
        statuses=list(OPEN_REQUEST_STATUSES), association_types=["SINGLE"], page_size=PAGE_SIZE
    )
    found = [*map(_invoice_item, invoices), *map(_request_item, requests)]
    return [item for item in found if item is not None]


def refresh_open_items(
    client: BillingClient, previous: Iterable[OpenItem], since: datetime
) -> list[OpenItem]:
    """What is open now, from an earlier run's open items and what changed since then: the
    invoices and payment requests updated from ``since`` (any status, so those paid or voided
    meanwhile drop out, and those created meanwhile come in). The contract's
    ``lastUpdatedStartTime`` filter lets a biller with 100,000 open items be refreshed with a
    page or two instead of 500."""
    items = {item.id: item for item in previous}
    for invoice in client.invoices.list(last_updated_start_time=since, page_size=PAGE_SIZE):
        _replace(items, str(invoice.id), _invoice_item(invoice))
    requests = client.payment_requests.list(
        last_updated_start_time=since, association_types=["SINGLE"], page_size=PAGE_SIZE
    )
    for pr in requests:
        _replace(items, str(pr.id), _request_item(pr))
    return list(items.values())


def _replace(items: dict[str, OpenItem], item_id: str, item: OpenItem | None) -> None:
    if item is None:
        items.pop(item_id, None)
    else:
        items[item_id] = item


def items_frame(items: Iterable[OpenItem]) -> pd.DataFrame:
    """Open items as a frame (see the module docstring for the columns), with the keys a
    statement line may name each by: ``key``, the number in canonical form (``INV-42``), and
    ``ref_key``, the biller's reference in plain form (``ACMEJUNE``)."""
    rows = [
        (i.kind, i.id, i.number, i.reference, i.customer, i.due, i.due_date, i.status)
        for i in items
    ]
    frame = pd.DataFrame(rows, columns=list(COLUMNS))
    frame["due"] = frame["due"].astype("int64")
    numbers = pa.array(frame["number"].astype(str).tolist(), pa.string())
    references = pa.array(frame["reference"].fillna("").astype(str).tolist(), pa.string())
    frame["key"] = canonical_numbers(numbers).to_numpy(zero_copy_only=False)
    frame["ref_key"] = plain_texts(references).to_numpy(zero_copy_only=False)
    return frame
