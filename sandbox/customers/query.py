"""Listing customers: the filters of ``GET /customers`` and the customer's financial summary.

The mandate filters look at the customer's current mandate (its newest, as
:func:`sandbox.customers.lookup.current_mandate` does). ``financialStatuses`` is decided from the
customer's invoices, which are summarised in Python: a sandbox biller has few enough of them.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, Select, and_, exists, false, or_, select
from sqlalchemy.orm import Session, aliased

from sandbox.core import state
from sandbox.core.money import as_string
from sandbox.core.pagination import Listing, column, sortable
from sandbox.customers.lookup import public_customer
from sandbox.models.billing import Customer, Invoice, Mandate, PaymentRequest

# Invoices still to be paid, and those whose payment is with the bank.
_OPEN = frozenset({"UNPAID", "SCHEDULED", "SUBMITTED", "OVERDUE"})


@dataclass
class CustomerFilters:
    only_with_activity: bool = False
    search_text: str | None = None
    signed_from: datetime | None = None
    signed_until: datetime | None = None
    mandate_statuses: Sequence[str] = ()
    financial_statuses: Sequence[str] = ()
    updated_from: datetime | None = None
    tag_ids: Sequence[str] = ()
    customer_ids: Sequence[str] = ()
    external_ids: Sequence[str] = ()


def _current_mandate_id() -> Any:
    """A correlated subquery: the id of the customer's newest mandate."""
    newest = aliased(Mandate)
    return (
        select(newest.id)
        .where(newest.customer_id == Customer.id)
        .order_by(newest.created_at.desc(), newest.id.desc())
        .limit(1)
        .correlate(Customer)
        .scalar_subquery()
    )


def _search(text: str) -> ColumnElement[bool]:
    """Every word must appear in the name, externalId, or a person's name or email."""
    clauses = []
    for word in text.lower().split():
        clauses.append(
            or_(
                Customer.search_text.contains(word, autoescape=True),
                # Rows written without search_text (by other code) still match on these.
                and_(
                    Customer.search_text.is_(None),
                    or_(
                        Customer.name.ilike(f"%{_escape(word)}%", escape="\\"),
                        Customer.external_id.ilike(f"%{_escape(word)}%", escape="\\"),
                    ),
                ),
            )
        )
    return and_(*clauses)


def _escape(word: str) -> str:
    return word.replace("\\", "\\\\").replace("%", "\\%").replace("_", "\\_")


def _activity() -> ColumnElement[bool]:
    """Customers with invoices, payment requests or mandates (aliases, so the subqueries stay
    correlated to the customer only when the outer query also joins mandates)."""
    invoice, request, mandate = aliased(Invoice), aliased(PaymentRequest), aliased(Mandate)
    return or_(
        exists().where(invoice.customer_id == Customer.id).correlate(Customer),
        exists().where(request.customer_id == Customer.id).correlate(Customer),
        exists().where(mandate.customer_id == Customer.id).correlate(Customer),
    )


FINANCIAL_STATUSES = (
    "DRAFT",
    "OUTSTANDING",
    "PENDING_PAYMENTS",
    "OVERDUE",
    "FULLY_PAID",
    "NO_INVOICES",
)


def customers(session: Session, biller_id: str, filters: CustomerFilters, today: date) -> Listing:
    """The biller's customers matching every filter, oldest first unless sorted."""
    query = _filtered(session, biller_id, filters, today)
    return Listing(query, SORTABLE, column(Customer.id), ("creationTime,asc",))


def _filtered(
    session: Session, biller_id: str, filters: CustomerFilters, today: date
) -> Select[Any]:
    query = select(Customer).where(Customer.biller_id == biller_id)
    if filters.only_with_activity:
        query = query.where(_activity())
    if filters.search_text and filters.search_text.strip():
        query = query.where(_search(filters.search_text))
    if filters.signed_from or filters.signed_until or filters.mandate_statuses:
        query = query.join(Mandate, Mandate.id == _current_mandate_id())
        if filters.signed_from:
            query = query.where(Mandate.authorisation_time >= filters.signed_from)
        if filters.signed_until:
            query = query.where(Mandate.authorisation_time <= filters.signed_until)
        if filters.mandate_statuses:
            query = query.where(Mandate.status.in_(filters.mandate_statuses))
    if filters.updated_from:
        query = query.where(Customer.updated_at >= filters.updated_from)
    if filters.tag_ids:
        # Customers carry no tags in this contract, so no customer has any of them.
        query = query.where(false())
    if filters.customer_ids:
        query = query.where(Customer.id.in_(filters.customer_ids))
    if filters.external_ids:
        query = query.where(Customer.external_id.in_(filters.external_ids))
    if filters.financial_statuses:
        wanted = set(filters.financial_statuses)
        summaries = summarise(session, biller_id, None, today)
        ids = [cid for cid, summary in summaries.items() if summary.status in wanted]
        if "NO_INVOICES" in wanted:
            query = query.where(or_(Customer.id.in_(ids), Customer.id.not_in(list(summaries))))
        else:
            query = query.where(Customer.id.in_(ids))
    return query


@dataclass
class Summary:
    count: int = 0
    outstanding: Decimal = Decimal("0")
    overdue: Decimal = Decimal("0")
    paid: Decimal = Decimal("0")
    statuses: set[str] = field(default_factory=set)

    @property
    def status(self) -> str:
        if not self.count:
            return "NO_INVOICES"
        if self.statuses == {"DRAFT"}:
            return "DRAFT"
        if self.overdue > 0:
            return "OVERDUE"
        if "SUBMITTED" in self.statuses:
            return "PENDING_PAYMENTS"
        if self.outstanding > 0:
            return "OUTSTANDING"
        return "FULLY_PAID"


def summarise(
    session: Session, biller_id: str, customer_id: str | None, today: date
) -> dict[str, Summary]:
    """Per customer (with at least one invoice that is not void): counts and amounts."""
    query = select(Invoice).where(Invoice.biller_id == biller_id, Invoice.status != "VOID")
    if customer_id is not None:
        query = query.where(Invoice.customer_id == customer_id)
    out: dict[str, Summary] = defaultdict(Summary)
    for invoice in session.scalars(query):
        summary = out[invoice.customer_id]
        summary.count += 1
        summary.statuses.add(invoice.status)
        summary.paid += invoice.paid_amount
        if invoice.status in _OPEN:
            due = max(
                invoice.total_amount - invoice.paid_amount - invoice.credit_notes_amount,
                Decimal("0"),
            )
            summary.outstanding += due
            if invoice.status == "OVERDUE" or (
                invoice.status != "SUBMITTED" and invoice.due_date < today
            ):
                summary.overdue += due
    return dict(out)


def financial_details(session: Session, customer: Customer, today: date) -> dict[str, Any]:
    """The contract's ``CustomerFinancialDetails`` (amounts as strings, like invoices')."""
    summary = summarise(session, customer.biller_id, customer.id, today).get(customer.id, Summary())
    return {
        "financialStatus": summary.status,
        "outstandingAmount": as_string(summary.outstanding),
        "overdueAmount": as_string(summary.overdue),
        "paidAmount": as_string(summary.paid),
        "invoiceCount": summary.count,
    }


SORTABLE = sortable(
    name=Customer.name,
    externalId=Customer.external_id,
    creationTime=Customer.created_at,
    lastUpdatedTime=Customer.updated_at,
    id=Customer.id,
)


def render_customer(
    session: Session, customer: Customer, root: str, financial: bool
) -> dict[str, Any]:
    """The contract's ``Customer``, with ``financialDetails`` when asked for."""
    data = public_customer(session, customer, root)
    if financial:
        data["financialDetails"] = financial_details(session, customer, state.now(session).date())
    return data
