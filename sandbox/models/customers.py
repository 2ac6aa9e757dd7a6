"""Tables around customers: cards on file, card-detail requests, autopilot guidance, the biller's
catalogues (tax rates, items) and workflows.

Every row belongs to one biller.
"""

from __future__ import annotations

from datetime import datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import ForeignKey, Index, String, Text
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base, DecimalText


def _biller_fk() -> Mapped[str]:
    return mapped_column(ForeignKey("billers.id", ondelete="CASCADE"), index=True)


def _customer_fk() -> Mapped[str]:
    return mapped_column(ForeignKey("customers.id", ondelete="CASCADE"), index=True)


class CardOnFile(Base):
    """A saved card. ``status`` is ACTIVE or REMOVED as stored; EXPIRED is derived from the expiry
    month and the sandbox's date, so a card expires without anyone writing to it."""

    __tablename__ = "cards_on_file"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    customer_id: Mapped[str] = _customer_fk()
    brand: Mapped[str] = mapped_column(String(16))
    last4: Mapped[str] = mapped_column(String(4))
    expiry_month: Mapped[int]
    expiry_year: Mapped[int]
    status: Mapped[str] = mapped_column(String(16))
    created_at: Mapped[datetime]
    removed_at: Mapped[datetime | None]


class CardOnFileRequest(Base):
    """A card-detail request sent to a customer; ``token`` names its hosted page."""

    __tablename__ = "card_on_file_requests"
    token: Mapped[str] = mapped_column(String(64), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    customer_id: Mapped[str] = _customer_fk()
    redirect_url: Mapped[str | None] = mapped_column(String(2048))
    custom_message: Mapped[str | None] = mapped_column(Text)
    sent_to: Mapped[list[Any]]
    requested_at: Mapped[datetime]
    expires_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]


class AutopilotSettings(Base):
    """Free-text guidance for the AI collections agent; at most one per customer."""

    __tablename__ = "customer_autopilot_settings"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    customer_id: Mapped[str] = mapped_column(
        ForeignKey("customers.id", ondelete="CASCADE"), unique=True
    )
    guidance: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


class TaxRate(Base):
    """A tax rate of the biller (a percentage, exact)."""

    __tablename__ = "tax_rates"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    name: Mapped[str] = mapped_column(String(255))
    rate: Mapped[Decimal] = mapped_column(DecimalText())
    is_default: Mapped[bool] = mapped_column(default=False)
    created_at: Mapped[datetime]


class CatalogItem(Base):
    """A product or service of the biller's line-item catalogue."""

    __tablename__ = "catalog_items"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    code: Mapped[str] = mapped_column(String(64))
    name: Mapped[str] = mapped_column(String(255))
    description: Mapped[str | None] = mapped_column(String(1024))
    unit_amount: Mapped[Decimal | None]
    tax_rate_id: Mapped[str | None] = mapped_column(String(36))
    account_code_id: Mapped[str | None] = mapped_column(String(64))
    created_at: Mapped[datetime]


class Workflow(Base):
    """A workflow of the biller, optionally scoped to one customer or one invoice."""

    __tablename__ = "workflows"
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = _biller_fk()
    name: Mapped[str] = mapped_column(String(50))
    type: Mapped[str] = mapped_column(String(32))
    template_id: Mapped[str | None] = mapped_column(String(64))
    customer_id: Mapped[str | None] = mapped_column(String(36))
    invoice_id: Mapped[str | None] = mapped_column(String(36))
    events: Mapped[list[Any]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]


Index("ix_tax_rates__biller_created", TaxRate.biller_id, TaxRate.created_at)
Index("ix_catalog_items__biller_code", CatalogItem.biller_id, CatalogItem.code)
