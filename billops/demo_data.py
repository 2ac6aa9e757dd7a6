"""The demo's payment-request file: what a finance team would drop, with a few honest mistakes."""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path


@dataclass(frozen=True)
class DemoCustomer:
    """A customer of the demo biller, as the service lists it."""

    id: str
    name: str


# What each deliberately bad row gets wrong, so the demo can say what to expect in the report.
BAD_ROWS = (
    "a customer the biller does not have",
    "an amount with three decimal places",
    "a pay-by date in the past",
    "a reference used twice in the file (both rows are rejected)",
)


def write_demo_file(
    path: Path, customers: list[DemoCustomer], *, today: date, good_rows: int = 16
) -> Path:
    """A CSV as finance keeps it (names, £ amounts, dd/mm/yyyy dates), bad rows mixed in."""
    if not customers:
        raise ValueError("the demo biller has no customers to bill")
    pay_by = (today + timedelta(days=21)).strftime("%d/%m/%Y")
    rows: list[list[str]] = []
    for number in range(1, good_rows + 1):
        customer = customers[number % len(customers)]
        amount = Decimal(40 + 7 * number) + Decimal("0.50")
        rows.append(
            [
                customer.name,
                f"£{amount:,.2f}",
                f"Consulting, week {number}",
                f"DEMO-{number:04d}",
                pay_by,
                "20",
            ]
        )
    first = customers[0].name
    rows.insert(3, ["Nobody Trading Ltd", "£120.00", "Unknown customer", "DEMO-9001", pay_by, "20"])
    rows.insert(7, [first, "£99.999", "Too many decimals", "DEMO-9002", pay_by, "20"])
    past = (today - timedelta(days=10)).strftime("%d/%m/%Y")
    rows.insert(11, [first, "£75.00", "Pay-by in the past", "DEMO-9003", past, "20"])
    rows.insert(13, [first, "£10.00", "Reference reused (1)", "DEMO-9004", pay_by, "0"])
    rows.insert(14, [first, "£11.00", "Reference reused (2)", "DEMO-9004", pay_by, "0"])
    path.parent.mkdir(parents=True, exist_ok=True)
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Customer", "Amount", "Description", "Reference", "Pay by", "Tax rate"])
        writer.writerows(rows)
    return path
