"""What the ledger hands out about payouts: frozen dataclasses, never ORM rows.

Money is kept in whole pennies (``int``), as the payout job works in pennies until it reports.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime

# The columns of a payout item, in the order :meth:`~ledger.Ledger.record_payout_report` takes
# them (one tuple per item).
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
    items_digest: str
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
