"""The biller's tax rates and line-item catalogue.

Each biller starts with UK defaults, written the first time anything asks for its catalogue
(:func:`ensure_catalog`), so its lists are never empty. Invoices resolve ``taxRateId`` with
:func:`find_tax_rate` and ``productId`` with :func:`find_item`.
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from sqlalchemy import ColumnElement, exists, func, or_, select
from sqlalchemy.exc import IntegrityError
from sqlalchemy.orm import Session

from sandbox.core import state
from sandbox.core.money import as_number
from sandbox.core.pagination import Listing, column, sortable
from sandbox.models.customers import CatalogItem, TaxRate

# (key, name, rate, default) — names as Xero shows UK VAT rates.
DEFAULT_TAX_RATES = (
    ("standard", "20% (VAT on Income)", Decimal("20"), True),
    ("reduced", "5% (VAT on Income)", Decimal("5"), False),
    ("zero", "Zero Rated Income", Decimal("0"), False),
    ("exempt", "Exempt Income", Decimal("0"), False),
    ("none", "No VAT", Decimal("0"), False),
)
# (code, name, description, unit amount, tax rate key, account code)
DEFAULT_ITEMS = (
    ("CONSULT-HR", "Consulting", "Consulting, per hour", Decimal("120.00"), "standard", "200"),
    (
        "SUPPORT-M",
        "Monthly support",
        "Support contract, one month",
        Decimal("450.00"),
        "standard",
        "200",
    ),
    ("TRAINING-D", "Training day", "On-site training, one day", Decimal("950.00"), "exempt", "260"),
    ("BOOK", "Printed book", "Printed book (zero rated)", Decimal("24.99"), "zero", "200"),
    (
        "ENERGY-KWH",
        "Domestic energy",
        "Domestic energy, per kWh",
        Decimal("0.28"),
        "reduced",
        "200",
    ),
    (
        "LICENCE-Y",
        "Software licence",
        "Annual software licence",
        Decimal("1200.00"),
        "standard",
        "200",
    ),
)


def _seeded_id(biller_id: str, kind: str, key: str) -> str:
    """Stable ids per biller, so two requests seeding at once collide instead of duplicating."""
    return str(uuid.uuid5(uuid.NAMESPACE_URL, f"sandbox:{biller_id}:{kind}:{key}"))


def ensure_catalog(session: Session, biller_id: str, now: datetime) -> None:
    """Write the default tax rates and items for a biller that has none yet."""
    has_rates = session.scalar(select(exists().where(TaxRate.biller_id == biller_id)))
    has_items = session.scalar(select(exists().where(CatalogItem.biller_id == biller_id)))
    if has_rates and has_items:
        return
    rate_ids = {key: _seeded_id(biller_id, "tax", key) for key, *_ in DEFAULT_TAX_RATES}
    rows: list[Any] = []
    if not has_rates:
        # A microsecond apart, so the default order (creation time) is the order listed here.
        rows += [
            TaxRate(
                id=rate_ids[key],
                biller_id=biller_id,
                name=name,
                rate=rate,
                is_default=default,
                created_at=now + timedelta(microseconds=index),
            )
            for index, (key, name, rate, default) in enumerate(DEFAULT_TAX_RATES)
        ]
    if not has_items:
        rows += [
            CatalogItem(
                id=_seeded_id(biller_id, "item", code),
                biller_id=biller_id,
                code=code,
                name=name,
                description=description,
                unit_amount=amount,
                tax_rate_id=rate_ids[rate_key],
                account_code_id=account,
                created_at=now + timedelta(microseconds=index),
            )
            for index, (code, name, description, amount, rate_key, account) in enumerate(
                DEFAULT_ITEMS
            )
        ]
    try:
        with session.begin_nested():
            session.add_all(rows)
    except IntegrityError:
        pass  # another request seeded this biller first


def find_tax_rate(
    session: Session, biller_id: str, tax_rate_id: str, now: datetime
) -> TaxRate | None:
    ensure_catalog(session, biller_id, now)
    rate = session.get(TaxRate, tax_rate_id)
    return rate if rate is not None and rate.biller_id == biller_id else None


def find_item(session: Session, biller_id: str, item_id: str, now: datetime) -> CatalogItem | None:
    ensure_catalog(session, biller_id, now)
    item = session.get(CatalogItem, item_id)
    return item if item is not None and item.biller_id == biller_id else None


def _contains(column: Any, text: str) -> ColumnElement[bool]:
    return func.lower(column).contains(text.lower(), autoescape=True)


def tax_rates(session: Session, biller_id: str, search_text: str | None) -> Listing:
    """The biller's tax rates (UK defaults written on first use) whose name has the text."""
    ensure_catalog(session, biller_id, state.now(session))
    query = select(TaxRate).where(TaxRate.biller_id == biller_id)
    if search_text:
        query = query.where(_contains(TaxRate.name, search_text))
    return Listing(query, TAX_RATE_SORTABLE, column(TaxRate.id), ("creationTime,asc",))


def items(session: Session, biller_id: str, search_text: str | None, codes: list[str]) -> Listing:
    """The biller's catalogue items matching the text (code, name or description) and codes."""
    ensure_catalog(session, biller_id, state.now(session))
    query = select(CatalogItem).where(CatalogItem.biller_id == biller_id)
    if search_text:
        query = query.where(
            or_(
                _contains(CatalogItem.code, search_text),
                _contains(CatalogItem.name, search_text),
                _contains(CatalogItem.description, search_text),
            )
        )
    if codes:
        query = query.where(CatalogItem.code.in_(codes))
    return Listing(query, ITEM_SORTABLE, column(CatalogItem.id), ("creationTime,asc",))


def rate_number(rate: Decimal) -> int | float:
    """A percentage as a JSON number (``20``, ``17.5``)."""
    return int(rate) if rate == rate.to_integral_value() else float(rate)


def public_tax_rate(rate: TaxRate) -> dict[str, Any]:
    return {
        "id": rate.id,
        "name": rate.name,
        "rate": rate_number(rate.rate),
        "isDefault": rate.is_default,
    }


def public_item(item: CatalogItem) -> dict[str, Any]:
    return {
        "id": item.id,
        "code": item.code,
        "name": item.name,
        "description": item.description,
        "unitAmount": as_number(item.unit_amount) if item.unit_amount is not None else None,
        "taxRateId": item.tax_rate_id,
        "accountCodeId": item.account_code_id,
    }


# Not ``rate``: it is stored as exact text, which would sort "20" before "5".
TAX_RATE_SORTABLE = sortable(
    name=TaxRate.name, isDefault=TaxRate.is_default, creationTime=TaxRate.created_at
)
ITEM_SORTABLE = sortable(
    code=CatalogItem.code,
    name=CatalogItem.name,
    unitAmount=CatalogItem.unit_amount,
    creationTime=CatalogItem.created_at,
)
