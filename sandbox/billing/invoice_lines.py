"""Invoice lines: checking them and computing their tax and totals (contract ``ItemsTaxType``).

Per line, ``net = quantity × unitAmount`` and ``round`` is half-up to the penny:
EXCLUSIVE ``tax = round(round(net) × rate / 100)``, ``total = round(net) + tax``;
INCLUSIVE ``total = round(net)``, ``tax = round(total × rate / (100 + rate))``;
NONE ``tax = 0``, ``total = round(net)``. The invoice's tax and total are the sums of its lines.
Lines are stored with their amounts as exact decimal strings and rendered as JSON numbers.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy.orm import Session

from sandbox.billing import catalogs
from sandbox.core import ids, state
from sandbox.core.bodies import Fields
from sandbox.core.money import round_penny

TAX_TYPES = ("EXCLUSIVE", "INCLUSIVE", "NONE")
MAX_QUANTITY = Decimal(1_000_000)
MAX_LINES = 500
# An invoice total the exact penny columns hold with room to spare [I].
MAX_TOTAL = Decimal("99999999999.99")
ZERO = Decimal(0)
CONNECTORS = ("XERO", "QUICKBOOKS", "BRIDGE", "STRIPE", "PLATFORM")


def line_amounts(
    quantity: Decimal, unit_amount: Decimal, rate: Decimal, tax_type: str
) -> tuple[Decimal, Decimal]:
    """``(taxAmount, totalAmount)`` of one line."""
    net = round_penny(quantity * unit_amount)
    if tax_type == "EXCLUSIVE":
        tax = round_penny(net * rate / 100)
        return tax, net + tax
    if tax_type == "INCLUSIVE":
        return round_penny(net * rate / (100 + rate)), net
    return ZERO.quantize(Decimal("0.01")), net


def _rate(session: Session, biller_id: str, item: Fields) -> Decimal:
    """``taxRate`` when given, else the rate of the catalogue's ``taxRateId``, else 0 [I]."""
    rate = item.tax_rate("taxRate")
    if rate is not None:
        return rate
    rate_id = item.text("taxRateId", max_length=64)
    if rate_id is None:
        return ZERO
    found = catalogs.find_tax_rate(session, biller_id, rate_id, state.now(session))
    if found is None:
        item.fail("taxRateId", "no tax rate of the biller has this id")
    return Decimal(found.rate)


def parse_lines(
    session: Session, biller_id: str, fields: Fields, tax_type: str
) -> list[dict[str, Any]]:
    """The body's ``items`` checked and computed, as stored on the invoice."""
    items = fields.objects("items", required=True, max_items=MAX_LINES)
    if not items:
        fields.fail("items", "an invoice needs at least one line")
    lines = []
    for item in items:
        quantity = item.decimal("quantity", required=True, places=4, above=ZERO)
        unit_amount = item.money("unitAmount", required=True, positive=False)
        assert quantity is not None and unit_amount is not None
        if quantity > MAX_QUANTITY:
            item.fail("quantity", f"must be at most {MAX_QUANTITY}")
        rate = _rate(session, biller_id, item)
        tax, total = line_amounts(quantity, unit_amount, rate, tax_type)
        given_id = item.data.get("id")
        lines.append(
            {
                "id": given_id if isinstance(given_id, str) and 0 < len(given_id) <= 64 else None,
                "description": item.text("description", required=True, max_length=4000),
                "quantity": str(quantity),
                "unitAmount": str(unit_amount),
                "taxRate": str(rate),
                "taxAmount": str(tax),
                "totalAmount": str(total),
                "taxRateId": item.text("taxRateId", max_length=64),
                "productId": item.text("productId", max_length=255),
                "accountCodeId": item.text("accountCodeId", max_length=255),
                "externalData": external_data(item),
            }
        )
        lines[-1]["id"] = lines[-1]["id"] or ids.new_uuid()
    return lines


def external_data(fields: Fields) -> list[dict[str, Any]]:
    """``externalData`` references as the contract's ``ExternalData`` (checked, since they are
    echoed back): ``connectorType`` one of the known systems, ``id`` and ``name`` strings."""
    out = []
    for entry in fields.objects("externalData", max_items=50):
        entry.choice("connectorType", CONNECTORS)
        entry.text("id", max_length=255)
        entry.text("name", max_length=255)
        # connectorType and id are not nullable in the contract: a null is left out.
        out.append({k: v for k, v in entry.data.items() if v is not None or k == "name"})
    return out


def totals(lines: list[dict[str, Any]]) -> tuple[Decimal, Decimal]:
    """``(totalAmount, taxAmount)`` of the invoice: the sums over its lines."""
    total = sum((Decimal(line["totalAmount"]) for line in lines), ZERO)
    tax = sum((Decimal(line["taxAmount"]) for line in lines), ZERO)
    return total, tax


def number(value: Decimal | str) -> int | float:
    """An exact decimal as a JSON number (integral values without a fraction)."""
    amount = Decimal(value)
    return int(amount) if amount == amount.to_integral_value() else float(amount)


def public_line(line: dict[str, Any]) -> dict[str, Any]:
    """The contract's ``InvoiceItem``: the line with its amounts as numbers."""
    shown = dict(line)
    for key in ("quantity", "unitAmount", "taxRate", "taxAmount", "totalAmount"):
        shown[key] = number(line[key])
    return shown
