"""Tables of payouts: the transfers of collected money to a biller's bank account.

A payout is assembled by the simulation (:mod:`sandbox.simulation.payouts`) once per biller per
working day; its items are the payments it pays out (positive) and the late failures it deducts
(negative), and they sum exactly to ``amount``. The contract has no payout endpoint: payouts are
seen through ``payout`` webhook events and the admin exports (:mod:`sandbox.exports.files`).
"""

from __future__ import annotations

from datetime import date, datetime
from decimal import Decimal

from sqlalchemy import ForeignKey, Index, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base

PAYMENT, DEDUCTION = "PAYMENT", "DEDUCTION"


class Payout(Base):
    """One payout (contract ``Payout``). ``reference`` is what the biller's bank statement shows."""

    __tablename__ = "payouts"
    __table_args__ = (UniqueConstraint("biller_id", "arrival_date"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = mapped_column(ForeignKey("billers.id", ondelete="CASCADE"), index=True)
    reference: Mapped[str] = mapped_column(String(32), index=True)
    arrival_date: Mapped[date]
    amount: Mapped[Decimal]
    currency_code: Mapped[str] = mapped_column(String(3))
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class PayoutItem(Base):
    """One signed line of a payout (contract ``PayoutItem``); ``position`` keeps their order.

    A payment is paid out at most once (a ``PAYMENT`` item names it) and deducted at most once (a
    ``DEDUCTION`` item names it): these items are how the simulation knows what is left to do.
    """

    __tablename__ = "payout_items"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    payout_id: Mapped[str] = mapped_column(ForeignKey("payouts.id", ondelete="CASCADE"), index=True)
    biller_id: Mapped[str] = mapped_column(ForeignKey("billers.id", ondelete="CASCADE"), index=True)
    position: Mapped[int]
    type: Mapped[str] = mapped_column(String(16))
    amount: Mapped[Decimal]
    payment_id: Mapped[str | None] = mapped_column(String(36))
    payment_request_id: Mapped[str | None] = mapped_column(String(36))
    invoice_id: Mapped[str | None] = mapped_column(String(36))
    description: Mapped[str | None] = mapped_column(String(255))


Index("ix_payout_items__payment_type", PayoutItem.payment_id, PayoutItem.type)
