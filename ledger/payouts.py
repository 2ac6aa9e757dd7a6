"""What the ledger hands out about payouts: frozen dataclasses, never ORM rows, and a payout's
items as an Arrow table (``ledger/_payout_blocks.py`` keeps them, a block per payout).

Money is kept in whole pennies (``int``), as the payout job works in pennies until it reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

# The columns of a payout item: of the Arrow table :meth:`~ledger.Ledger.record_payout_report`
# takes and the ledger's item look-ups hand out, and the order of :func:`items_table`'s tuples.
ITEM_FIELDS = (
    "payout_id",
    "position",
    "kind",
    "amount_pennies",
    "payment_id",
    "invoice_number",
    "payment_request_number",
    "invoice_id",
    "payment_request_id",
    "customer",
    "description",
)


def items_table(rows: Iterable[Sequence[Any]]) -> Any:
    """Items given as tuples in :data:`ITEM_FIELDS` order as the Arrow table the ledger takes."""
    from ledger._payout_blocks import items_table as make

    return make(rows)


@dataclass(frozen=True)
class PayoutRecord:
    """One payout as a report showed it: its totals and a digest of its items."""

    payout_id: str
    reference: str
    arrival_date: date
    amount_pennies: int
    gross_pennies: int
    deduction_pennies: int
    item_count: int
    items_digest: str = ""  # the ledger's digest of the items kept (set when it keeps them)
    report_sha256: str = ""


@dataclass(frozen=True)
class PayoutStored:
    """What recording a report did: payouts new to the ledger, changed, unchanged."""

    new: int
    changed: int
    unchanged: int


@dataclass(frozen=True)
class PayoutCredit:
    """A bank credit the bank statement shows from the payment service (a payout arriving)."""

    line_key: str
    booked_on: date
    amount_pennies: int
    payer: str
    reference: str
    text: str
    file_sha256: str
    line: int


@dataclass(frozen=True)
class BankCoverage:
    """Which days a bank statement covered (so a missing credit can be told from a day the bank
    has not reported yet)."""

    file_sha256: str
    first_day: date
    last_day: date
    lines: int


@dataclass(frozen=True)
class PayoutResult:
    """The latest reconciliation result of one payout (``subject`` "payout") or one bank credit
    (``subject`` "credit"): its state, since when, what it is matched with, and why."""

    subject: str
    subject_id: str
    state: str
    day: date
    amount_pennies: int
    difference_pennies: int = 0
    linked: tuple[str, ...] = field(default=())
    reasons: tuple[str, ...] = field(default=())
    run_id: str | None = None
    first_state: str = ""
    state_since: datetime | None = None
    checked_at: datetime | None = None
