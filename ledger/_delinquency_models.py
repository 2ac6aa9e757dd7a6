"""The delinquency job's tables (migration ``r0005_delinquency``).

- ``ledger_delinquency_snapshots``: one row per run that looked at a biller (the day, the policy);
  its customers and open debts in ``ledger_delinquency_snapshot_customers`` / ``_items`` (amounts
  in whole pence, exact). Only the newest few runs per biller are kept.
- ``ledger_delinquency_failures``: failed direct-debit collections observed, one per payment
  request per run that saw it (they outlive the snapshots: policies count them over windows).
- ``ledger_delinquency_standings``: each customer's state under the policy, since when, why, and
  the open *hold* (the period billops keeps its collection paused).

The pause and resume calls themselves are operations in ``ledger_operations`` (write-once).
"""

from __future__ import annotations

from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from ledger._models import Base
from ledger._types import UTCDateTime

ID = 200  # the service's ids and numbers


class DelinquencySnapshotRow(Base):
    """A run's look at one biller."""

    __tablename__ = "ledger_delinquency_snapshots"
    __table_args__ = (
        UniqueConstraint("biller", "run_id", name="uq_ledger_delinquency_snapshots_biller_run"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(ID))
    run_id: Mapped[str] = mapped_column(String(ID))
    as_of: Mapped[date] = mapped_column(Date)
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime)
    policy_name: Mapped[str] = mapped_column(String(ID))
    policy_digest: Mapped[str] = mapped_column(String(64))
    customers: Mapped[int] = mapped_column(Integer)
    items: Mapped[int] = mapped_column(Integer)


def _snapshot_key(name: str) -> Mapped[int]:
    # Named by hand: the naming convention's name passes PostgreSQL's 63 characters.
    return mapped_column(
        Integer,
        ForeignKey("ledger_delinquency_snapshots.id", ondelete="CASCADE", name=name),
        primary_key=True,
    )


class DelinquencyCustomerRow(Base):
    """A customer as the snapshot saw it."""

    __tablename__ = "ledger_delinquency_snapshot_customers"

    snapshot_id: Mapped[int] = _snapshot_key("fk_ledger_delinquency_snapshot_customers_snapshot")
    customer_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    external_id: Mapped[str] = mapped_column(String(ID))
    name: Mapped[str] = mapped_column(String(500))
    tags: Mapped[list[str]] = mapped_column(JSON)
    mandate_id: Mapped[str] = mapped_column(String(ID))
    mandate_status: Mapped[str] = mapped_column(String(40))


class DelinquencyItemRow(Base):
    """An open invoice or payment request as the snapshot saw it."""

    __tablename__ = "ledger_delinquency_snapshot_items"

    snapshot_id: Mapped[int] = _snapshot_key("fk_ledger_delinquency_snapshot_items_snapshot")
    kind: Mapped[str] = mapped_column(String(20), primary_key=True)
    item_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    number: Mapped[str] = mapped_column(String(ID))
    customer_id: Mapped[str] = mapped_column(String(ID))
    status: Mapped[str] = mapped_column(String(40))
    due_on: Mapped[date | None] = mapped_column(Date)
    due_pence: Mapped[int] = mapped_column(BigInteger)
    invoice_id: Mapped[str] = mapped_column(String(ID))
    collection_method: Mapped[str] = mapped_column(String(40))
    auto_paused: Mapped[bool] = mapped_column(Boolean)
    auto_source: Mapped[str] = mapped_column(String(40))
    auto_override: Mapped[str] = mapped_column(String(40))
    reason_code: Mapped[str] = mapped_column(String(100))


class DelinquencyFailureRow(Base):
    """A failed collection billops observed."""

    __tablename__ = "ledger_delinquency_failures"
    __table_args__ = (
        UniqueConstraint(
            "biller", "payment_request_id", "run_id", name="uq_ledger_delinquency_failures_seen"
        ),
        Index("ix_ledger_delinquency_failures_biller_observed", "biller", "observed_on"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(ID))
    customer_id: Mapped[str] = mapped_column(String(ID))
    payment_request_id: Mapped[str] = mapped_column(String(ID))
    observed_on: Mapped[date] = mapped_column(Date)
    evidence: Mapped[str] = mapped_column(Text)
    run_id: Mapped[str] = mapped_column(String(ID))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)


class DelinquencyStandingRow(Base):
    """A customer's standing under the policy (absent: good standing, never in a state)."""

    __tablename__ = "ledger_delinquency_standings"

    biller: Mapped[str] = mapped_column(String(ID), primary_key=True)
    customer_id: Mapped[str] = mapped_column(String(ID), primary_key=True)
    name: Mapped[str] = mapped_column(String(500))
    state: Mapped[str] = mapped_column(String(40))
    since: Mapped[date | None] = mapped_column(Date)
    hold_period: Mapped[str] = mapped_column(String(40))
    hold_count: Mapped[int] = mapped_column(Integer)
    mandate_at_entry: Mapped[str] = mapped_column(String(ID))
    left_on: Mapped[dict[str, Any]] = mapped_column(JSON)
    reasons: Mapped[list[str]] = mapped_column(JSON)
    policy_name: Mapped[str] = mapped_column(String(ID))
    policy_digest: Mapped[str] = mapped_column(String(64))
    run_id: Mapped[str] = mapped_column(String(ID))
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
