"""Tables of the biller's business data: customers, mandates, invoices, payment requests, payments.

Columns hold what the sandbox filters, sorts or enforces rules on; ``document`` (JSON) holds the
rest of the contract's fields as the client sent them. Money is ``Decimal`` in pounds, stored
exactly (``Money``); every row belongs to one biller (tenancy is enforced by always filtering on
``biller_id``). Numbers shown to people (``INV-12``, ``PR-98``, ``SCH-3``) come from
:func:`sandbox.core.numbering.next_number`.
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base, DecimalText


def _biller_fk() -> Mapped[str]:
    return mapped_column(ForeignKey("billers.id", ondelete="CASCADE"), index=True)


class Sequence(Base):
    """Per-biller counters behind human-readable numbers (INV-n, PR-n, SCH-n)."""

    __tablename__ = "sequences"
    biller_id: Mapped[str] = mapped_column(
        ForeignKey("billers.id", ondelete="CASCADE"), primary_key=True
    )
    kind: Mapped[str] = mapped_column(String(32), primary_key=True)
    last_value: Mapped[int]


class Customer(Base):
    """A customer of a biller.

    ``document``: people, addresses, externalData, timezone. ``workflow_settings`` and
    ``payment_settings`` hold the two settings objects of the contract (payment settings carry the
    customer-level collection pause: ``pausedCollectionMethods``, ``collectionPausedUntil``).
    ``body_hash`` makes create idempotent by body [C]. ``search_text`` is the lower-case text the
    list's ``searchText`` matches (name, externalId, people's names and emails).
    """

    __tablename__ = "customers"
    __table_args__ = (UniqueConstraint("biller_id", "body_hash"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    name: Mapped[str] = mapped_column(String(255), index=True)
    external_id: Mapped[str | None] = mapped_column(String(255), index=True)
    body_hash: Mapped[str | None] = mapped_column(String(64))
    search_text: Mapped[str | None] = mapped_column(Text)
    document: Mapped[dict[str, Any]]
    workflow_settings: Mapped[dict[str, Any]]
    payment_settings: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Mandate(Base):
    """A direct-debit mandate (``lastUpdateTime`` in the contract, after the real service [C])."""

    __tablename__ = "mandates"
    id: Mapped[str] = mapped_column(String(32), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    customer_id: Mapped[str] = mapped_column(
        ForeignKey("customers.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(32), index=True)
    status_reason_code: Mapped[str | None] = mapped_column(String(64))
    failure_reason: Mapped[str | None] = mapped_column(String(255))
    can_be_reinstated: Mapped[bool] = mapped_column(default=False)
    redirect_url: Mapped[str | None] = mapped_column(String(2048))
    bank_account_number: Mapped[str | None] = mapped_column(String(16))
    # Which documented test account signed it (sandbox.pages.test_accounts.KINDS): decides what the
    # simulation does with the mandate and its collections. Null until signed on the page.
    test_account_kind: Mapped[str | None] = mapped_column(String(32))
    authorisation_time: Mapped[datetime | None]
    submission_time: Mapped[datetime | None]
    distribution_time: Mapped[datetime | None]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class Invoice(Base):
    """An invoice. ``items`` holds the computed lines (amounts as strings, exact);
    ``document`` the other contract fields (instalmentPlanDetails, externalData, voidReason...)."""

    __tablename__ = "invoices"
    __table_args__ = (UniqueConstraint("biller_id", "invoice_no"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    customer_id: Mapped[str] = mapped_column(
        ForeignKey("customers.id", ondelete="RESTRICT"), index=True
    )
    invoice_no: Mapped[str] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(32), index=True)
    status_reason_code: Mapped[str | None] = mapped_column(String(64))
    description: Mapped[str | None] = mapped_column(String(4000))
    currency_code: Mapped[str] = mapped_column(String(3))
    items_tax_type: Mapped[str] = mapped_column(String(16))
    issue_date: Mapped[date]
    due_date: Mapped[date] = mapped_column(index=True)
    total_amount: Mapped[Decimal]
    tax_amount: Mapped[Decimal]
    paid_amount: Mapped[Decimal]
    credit_notes_amount: Mapped[Decimal]
    items: Mapped[list[Any]]
    document: Mapped[dict[str, Any]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class PaymentRequest(Base):
    """A payment request, standalone or raised for an invoice.

    ``collection_override`` is the request's own pause setting per collection method
    (``{"AUTO_COLLECT": "PAUSED"}``; absent = follow the customer). ``import_job_id`` and
    ``external_id`` tie a request to the bulk import that created or last updated it.
    """

    __tablename__ = "payment_requests"
    __table_args__ = (
        UniqueConstraint("biller_id", "payment_request_no"),
        UniqueConstraint("biller_id", "external_id"),
    )
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    customer_id: Mapped[str] = mapped_column(
        ForeignKey("customers.id", ondelete="RESTRICT"), index=True
    )
    invoice_id: Mapped[str | None] = mapped_column(
        ForeignKey("invoices.id", ondelete="CASCADE"), index=True
    )
    payment_request_no: Mapped[str] = mapped_column(String(32))
    external_id: Mapped[str | None] = mapped_column(String(255))
    import_job_id: Mapped[str | None] = mapped_column(String(36), index=True)
    status: Mapped[str] = mapped_column(String(32), index=True)
    status_reason_code: Mapped[str | None] = mapped_column(String(64))
    association_type: Mapped[str] = mapped_column(String(16))
    description: Mapped[str] = mapped_column(String(4000))
    reference: Mapped[str | None] = mapped_column(String(255))
    currency_code: Mapped[str] = mapped_column(String(3))
    total_amount: Mapped[Decimal]
    paid_amount: Mapped[Decimal]
    tax_rate: Mapped[Decimal | None] = mapped_column(DecimalText())
    pay_by_date: Mapped[date | None] = mapped_column(index=True)
    distribution: Mapped[dict[str, Any]]
    collection_override: Mapped[dict[str, Any]]
    cancel_collection_on_failure: Mapped[bool] = mapped_column(default=False)
    document: Mapped[dict[str, Any]]
    created_at: Mapped[datetime] = mapped_column(index=True)
    updated_at: Mapped[datetime]
    distribution_time: Mapped[datetime | None]
    paid_time: Mapped[datetime | None]
    # When the simulation next submits the direct debit of a SCHEDULED request (a retry after a
    # failure); null = two working days before the pay-by date (sandbox.simulation.direct_debit).
    next_collection_date: Mapped[date | None] = mapped_column(default=None, index=True)


class Payment(Base):
    """A payment: imported by ``payments:import`` (IMPORTED), or collected by the simulation."""

    __tablename__ = "payments"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    invoice_id: Mapped[str | None] = mapped_column(
        ForeignKey("invoices.id", ondelete="CASCADE"), index=True
    )
    payment_request_id: Mapped[str | None] = mapped_column(
        ForeignKey("payment_requests.id", ondelete="CASCADE"), index=True
    )
    amount: Mapped[Decimal]
    currency_code: Mapped[str] = mapped_column(String(3))
    status: Mapped[str] = mapped_column(String(16))
    payment_method: Mapped[str] = mapped_column(String(32))
    reference: Mapped[str | None] = mapped_column(String(255))
    document: Mapped[dict[str, Any]]
    payment_time: Mapped[datetime]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    # The day the simulation next acts on a direct debit (confirm a SUBMITTED one, fail a SUCCESS
    # one late); null when nothing more will happen to it (sandbox.simulation.direct_debit).
    next_step_date: Mapped[date | None] = mapped_column(default=None, index=True)


Index("ix_payment_requests__biller_status", PaymentRequest.biller_id, PaymentRequest.status)
Index("ix_invoices__biller_status", Invoice.biller_id, Invoice.status)
