"""The service's records of what the payout items name: invoices and payment requests, fetched
in pages through the client (read only).

The service has no payouts API and no way to list payments (``docs/service.md`` §6 Payouts,
§7.4 Payments), so an item is checked against its document: the payment request when the item
names one (the payment belongs to it), else the invoice. Documents are found by number among
those changed since shortly before the earliest payout in scope (a document is updated when it
is paid and again when it is paid out), then, for any still missing, by number (invoices) or in
a full listing (payment requests, which have no number filter).
"""

from __future__ import annotations

from collections.abc import Iterable
from datetime import date, datetime
from decimal import Decimal
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from billing_api import BillingClient

PAGE_SIZE = 200
MAX_SINGLE_LOOKUPS = 50  # more missing invoices than this: one full listing instead
INVOICE, PAYMENT_REQUEST = "invoice", "payment_request"
DOCUMENT_COLUMNS = ("kind", "number", "id", "status", "total", "paid", "updated")
LONDON = ZoneInfo("Europe/London")


Row = tuple[str, str, str, str, int, int, date | None]


def _pennies(value: Decimal | int | str | None) -> int:
    return int((Decimal(str(value or 0)) * 100).to_integral_value())


def _day(moment: datetime | None) -> date | None:
    """The London day of a document's last change (when its status last moved)."""
    return moment.astimezone(LONDON).date() if moment is not None else None


def document_numbers(items: pd.DataFrame) -> tuple[np.ndarray, pd.Series]:
    """Each item's document: whether it is a payment request (True) or an invoice (False), and
    its number (the payment request when named, else the invoice; an empty number when it names
    neither), by position (a text Series with a fresh index). The kind is a mask: the checks
    choose a year of items by kind, and comparing an object array of kinds cost a Python
    comparison per item."""
    request = items["payment_request_number"]
    has_request = (request != "").to_numpy(dtype=bool)
    numbers = request.where(has_request, items["invoice_number"]).reset_index(drop=True)
    return has_request, numbers


def fetch_documents(
    client: BillingClient,
    *,
    invoices: Iterable[str],
    requests: Iterable[str],
    since: datetime | None,
) -> pd.DataFrame:
    """The named invoices and payment requests as the service holds them now (see the module
    docstring): ``kind``, ``number``, ``id``, ``status``, ``total`` and ``paid`` (pennies),
    ``updated`` (the London day it last changed)."""
    want_invoices, want_requests = set(invoices) - {""}, set(requests) - {""}
    rows: dict[tuple[str, str], Row] = {}
    if since is not None:
        _keep(rows, _invoice_rows(client, want_invoices, since=since))
        _keep(rows, _request_rows(client, want_requests, since=since))
    missing_invoices = {n for n in want_invoices if (INVOICE, n) not in rows}
    if 0 < len(missing_invoices) <= MAX_SINGLE_LOOKUPS:
        for number in sorted(missing_invoices):
            _keep(rows, _invoice_rows(client, {number}, since=None, number=number))
    elif missing_invoices:
        _keep(rows, _invoice_rows(client, missing_invoices, since=None))
    missing_requests = {n for n in want_requests if (PAYMENT_REQUEST, n) not in rows}
    if missing_requests:
        _keep(rows, _request_rows(client, missing_requests, since=None))
    return pd.DataFrame(list(rows.values()), columns=list(DOCUMENT_COLUMNS))


def _keep(
    rows: dict[tuple[str, str], Row],
    found: Iterable[Row],
) -> None:
    for row in found:
        rows[(row[0], row[1])] = row


def _invoice_rows(
    client: BillingClient, wanted: set[str], *, since: datetime | None, number: str | None = None
) -> Iterable[Row]:
    pages = client.invoices.list(
        last_updated_start_time=since, invoice_no=number, page_size=PAGE_SIZE
    )
    for invoice in pages:
        if invoice.invoice_no in wanted:
            paid = _pennies(invoice.paid_amount)
            yield (
                INVOICE,
                invoice.invoice_no,
                str(invoice.id),
                str(invoice.status),
                _pennies(invoice.total_amount),
                paid,
                _day(invoice.last_updated_time),
            )


def _request_rows(
    client: BillingClient, wanted: set[str], *, since: datetime | None
) -> Iterable[Row]:
    pages = client.payment_requests.list(last_updated_start_time=since, page_size=PAGE_SIZE)
    for pr in pages:
        if pr.payment_request_no in wanted:
            yield (
                PAYMENT_REQUEST,
                pr.payment_request_no,
                str(pr.id),
                str(pr.status),
                _pennies(pr.total_amount),
                _pennies(pr.paid_amount),
                _day(pr.last_updated_time),
            )


def empty_documents() -> pd.DataFrame:
    return pd.DataFrame({name: pd.Series([], dtype=object) for name in DOCUMENT_COLUMNS})
