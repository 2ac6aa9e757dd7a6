"""What the ledger hands out about bank statements: frozen dataclasses, never ORM rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from decimal import Decimal


@dataclass(frozen=True)
class PlannedPayment:
    """One payment a line leads to: the open item (kind, id, number) and the pennies."""

    kind: str
    item_id: str
    number: str
    pennies: int


@dataclass(frozen=True)
class BankLine:
    """A statement line a run set out to record, and the payments it planned."""

    line_key: str
    file_sha256: str
    line: int
    booked_on: date
    amount: Decimal
    klass: str
    outcome: str
    done: bool
    payments: tuple[PlannedPayment, ...] = field(default=())
    run_id: str | None = None


@dataclass(frozen=True)
class OpenItemSnapshot:
    """One open item as a run saw it."""

    kind: str
    item_id: str
    number: str
    reference: str
    customer: str
    due: Decimal
    due_date: date | None
    status: str
    paid: Decimal = Decimal("0.00")  # an invoice's paidAmount


@dataclass(frozen=True)
class OpenItemsTaken:
    """The open items a run saw, and when it began asking the service for them."""

    run_id: str
    taken_at: datetime
    items: list[OpenItemSnapshot]
