"""The table of schedules: recurring invoices and recurring payment requests (``SCH-n``)."""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base

INVOICE = "invoice"
PAYMENT_REQUEST = "payment_request"


class Schedule(Base):
    """A schedule that generates invoices (``kind`` ``invoice``) or payment requests.

    ``cadence`` and ``details`` hold the contract's ``cadence`` and ``invoiceDetails`` /
    ``paymentRequestDetails`` as validated (amounts as exact decimal strings; the customer as
    ``customer_id``). ``next_date`` is the date of the next generation (kept for the simulation
    to find due schedules); ``generated_count`` how many documents it generated so far.
    """

    __tablename__ = "schedules"
    __table_args__ = (UniqueConstraint("biller_id", "schedule_no"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = mapped_column(ForeignKey("billers.id", ondelete="CASCADE"), index=True)
    kind: Mapped[str] = mapped_column(String(16))
    schedule_no: Mapped[str] = mapped_column(String(32))
    customer_id: Mapped[str] = mapped_column(
        ForeignKey("customers.id", ondelete="CASCADE"), index=True
    )
    status: Mapped[str] = mapped_column(String(16))
    cadence: Mapped[dict[str, Any]]
    details: Mapped[dict[str, Any]]
    next_date: Mapped[date | None]
    generated_count: Mapped[int] = mapped_column(default=0)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


Index("ix_schedules__status_next_date", Schedule.status, Schedule.next_date)
