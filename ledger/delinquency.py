"""What the ledger hands out about delinquency: frozen dataclasses, never ORM rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Any

# Every delinquency write is an operation whose key starts with this, then the biller and the
# customer (so one customer's operations are one index range).
OPERATION_PREFIX = "delinquency"


def operation_prefix(biller: str, customer_id: str) -> str:
    """The start of every operation key of one customer of one biller."""
    return f"{OPERATION_PREFIX}:{biller}:{customer_id}:"


@dataclass(frozen=True)
class SnapshotHeader:
    """A run's look at one biller: when, under which policy, how big."""

    id: int
    biller: str
    run_id: str
    as_of: date
    taken_at: datetime
    policy_name: str
    policy_digest: str
    customers: int
    items: int


@dataclass(frozen=True)
class Rows:
    """Rows of one table of a snapshot, as tuples in ``columns`` order (cheap to read in bulk)."""

    columns: tuple[str, ...]
    rows: list[tuple[Any, ...]]

    def dicts(self) -> list[dict[str, Any]]:
        return [dict(zip(self.columns, row, strict=True)) for row in self.rows]


@dataclass(frozen=True)
class Standing:
    """A customer's state under the policy, since when and why, and its open hold."""

    biller: str
    customer_id: str
    name: str
    state: str
    since: date | None
    hold_period: str
    hold_count: int
    mandate_at_entry: str
    left_on: dict[str, str] = field(default_factory=dict)
    reasons: list[str] = field(default_factory=list)
    policy_name: str = ""
    policy_digest: str = ""
    run_id: str = ""
    updated_at: datetime | None = None


@dataclass(frozen=True)
class Failure:
    """A failed collection billops observed."""

    customer_id: str
    payment_request_id: str
    observed_on: date
    evidence: str
    run_id: str
