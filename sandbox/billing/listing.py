"""The invoice and payment-request lists: the filters they share and those of each.

Both lists take ``customerId``, ``externalCustomerId``, ``statuses``, ``createdStartDate`` /
``createdEndDate`` (UTC dates, inclusive) and ``lastUpdatedStartTime``; without a sort they are in
creation order, then id (the contract's default order).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, time, timedelta
from typing import Any, cast

from sqlalchemy import ColumnElement, select
from sqlalchemy.sql.expression import ClauseList

from sandbox.billing import payment_requests
from sandbox.billing.invoices import STATUSES as INVOICE_STATUSES
from sandbox.core.deps import DocumentQuery
from sandbox.core.pagination import Listing, sortable
from sandbox.core.validation import enum_filter
from sandbox.models import Customer, Invoice, PaymentRequest

INVOICE_SORTABLE = sortable(
    creationTime=Invoice.created_at,
    lastUpdatedTime=Invoice.updated_at,
    dueDate=Invoice.due_date,
    issueDate=Invoice.issue_date,
    invoiceNo=Invoice.invoice_no,
    totalAmount=Invoice.total_amount,
    status=Invoice.status,
)
PAYMENT_REQUEST_SORTABLE = sortable(
    creationTime=PaymentRequest.created_at,
    lastUpdatedTime=PaymentRequest.updated_at,
    payByDate=PaymentRequest.pay_by_date,
    paidTime=PaymentRequest.paid_time,
    distributionTime=PaymentRequest.distribution_time,
    paymentRequestNo=PaymentRequest.payment_request_no,
    totalAmount=PaymentRequest.total_amount,
    status=PaymentRequest.status,
)


def _creation_order(model: type[Invoice] | type[PaymentRequest]) -> ColumnElement[Any]:
    return cast(ColumnElement[Any], ClauseList(model.created_at, model.id))


def _day_start(day: date) -> datetime:
    return datetime.combine(day, time.min, UTC)


def _shared(
    model: type[Invoice] | type[PaymentRequest],
    biller_id: str,
    query: DocumentQuery,
    statuses: Sequence[str],
) -> list[Any]:
    """Conditions of the filters both lists take."""
    conditions: list[Any] = [model.biller_id == biller_id]
    if query.customer_id is not None:
        conditions.append(model.customer_id == query.customer_id)
    if query.external_customer_id is not None:
        customers = select(Customer.id).where(
            Customer.biller_id == biller_id, Customer.external_id == query.external_customer_id
        )
        conditions.append(model.customer_id.in_(customers))
    if statuses:
        conditions.append(model.status.in_(statuses))
    if query.created_start is not None:
        conditions.append(model.created_at >= _day_start(query.created_start))
    # The first moment after the end day (none after the last representable day).
    if query.created_end is not None and query.created_end < date.max:
        conditions.append(model.created_at < _day_start(query.created_end) + timedelta(days=1))
    if query.updated_since is not None:
        conditions.append(model.updated_at >= query.updated_since)
    return conditions


@dataclass(frozen=True)
class InvoiceFilters:
    """What only the invoice list filters on."""

    invoice_no: str | None = None
    due_start: date | None = None
    due_end: date | None = None


def invoices(biller_id: str, query: DocumentQuery, only: InvoiceFilters) -> Listing:
    """The biller's invoices matching every filter given."""
    statuses = enum_filter(query.statuses, INVOICE_STATUSES, "statuses")
    conditions = _shared(Invoice, biller_id, query, statuses)
    if only.invoice_no is not None:
        conditions.append(Invoice.invoice_no == only.invoice_no)
    if only.due_start is not None:
        conditions.append(Invoice.due_date >= only.due_start)
    if only.due_end is not None:
        conditions.append(Invoice.due_date <= only.due_end)
    statement = select(Invoice).where(*conditions)
    return Listing(statement, INVOICE_SORTABLE, _creation_order(Invoice))


@dataclass(frozen=True)
class PaymentRequestFilters:
    """What only the payment-request list filters on."""

    association_types: Sequence[str] = ()
    pay_by_start: date | None = None
    pay_by_end: date | None = None
    paid_start: datetime | None = None
    paid_end: datetime | None = None
    invoice_id: str | None = None
    external_ids: Sequence[str] = ()


def _payment_request_statuses(values: Sequence[str]) -> list[str]:
    """``statuses`` with the legacy names (REQUESTED, CANCELLED) read as today's."""
    allowed = (*payment_requests.STATUSES, *payment_requests.LEGACY_STATUSES)
    chosen = enum_filter(values, allowed, "statuses")
    return [payment_requests.LEGACY_STATUSES.get(value, value) for value in chosen]


def payment_requests_listing(
    biller_id: str, query: DocumentQuery, only: PaymentRequestFilters
) -> Listing:
    """The biller's payment requests matching every filter given (ranges inclusive)."""
    pr = PaymentRequest
    conditions = _shared(pr, biller_id, query, _payment_request_statuses(query.statuses))
    types = enum_filter(
        only.association_types, payment_requests.ASSOCIATION_TYPES, "associationTypes"
    )
    if types:
        conditions.append(pr.association_type.in_(types))
    bounds = (
        (pr.pay_by_date, only.pay_by_start, only.pay_by_end),
        (pr.paid_time, only.paid_start, only.paid_end),
    )
    for column, start, end in bounds:
        if start is not None:
            conditions.append(column >= start)
        if end is not None:
            conditions.append(column <= end)
    if only.invoice_id is not None:
        conditions.append(pr.invoice_id == only.invoice_id)
    if only.external_ids:
        conditions.append(pr.external_id.in_(only.external_ids))
    statement = select(pr).where(*conditions)
    return Listing(statement, PAYMENT_REQUEST_SORTABLE, _creation_order(pr))
