"""The payout-reconciliation job's tables: payouts (each with its items in one block), the
payment service's credits on bank statements, the statements seen, the latest results.

Every table is keyed by business ids (``docs/service.md`` §6 Payouts): a payout by its id, a
credit by its bank line's stable key, a result by its subject.
"""

from __future__ import annotations

from datetime import date, datetime

from sqlalchemy import (
    JSON,
    BigInteger,
    Date,
    Index,
    Integer,
    LargeBinary,
    String,
    UniqueConstraint,
)
from sqlalchemy.orm import Mapped, mapped_column

from ledger._models import Base
from ledger._types import UTCDateTime


class PayoutRow(Base):
    """One payout of a biller, as the latest report showing it had it, with its items."""

    __tablename__ = "ledger_payouts"
    __table_args__ = (
        UniqueConstraint("biller", "payout_id", name="uq_ledger_payouts_biller_payout_id"),
        Index("ix_ledger_payouts_biller_arrival_date", "biller", "arrival_date"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    payout_id: Mapped[str] = mapped_column(String(200))
    reference: Mapped[str] = mapped_column(String(200))
    arrival_date: Mapped[date] = mapped_column(Date)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    gross_pennies: Mapped[int] = mapped_column(BigInteger)
    deduction_pennies: Mapped[int] = mapped_column(BigInteger)
    item_count: Mapped[int] = mapped_column(Integer)
    items_digest: Mapped[str] = mapped_column(String(64))
    report_sha256: Mapped[str] = mapped_column(String(64))
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # The payout's items, one compressed block (ledger/_payout_blocks.py has the format).
    items_format: Mapped[str] = mapped_column(String(40))
    items_block: Mapped[bytes] = mapped_column(LargeBinary)


class PayoutCreditRow(Base):
    """A bank credit from the payment service, by the bank line's stable key."""

    __tablename__ = "ledger_payout_credits"
    __table_args__ = (
        UniqueConstraint("biller", "line_key", name="uq_ledger_payout_credits_biller_line_key"),
        Index("ix_ledger_payout_credits_biller_booked_on", "biller", "booked_on"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    line_key: Mapped[str] = mapped_column(String(300))
    booked_on: Mapped[date] = mapped_column(Date)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    payer: Mapped[str] = mapped_column(String(300))
    reference: Mapped[str] = mapped_column(String(300))
    text: Mapped[str] = mapped_column(String(500))
    file_sha256: Mapped[str] = mapped_column(String(64))
    line: Mapped[int] = mapped_column(Integer)
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PayoutStatementRow(Base):
    """A bank statement the job saw: the days it covered."""

    __tablename__ = "ledger_payout_statements"
    __table_args__ = (
        UniqueConstraint(
            "biller", "file_sha256", name="uq_ledger_payout_statements_biller_file_sha256"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    file_sha256: Mapped[str] = mapped_column(String(64))
    first_day: Mapped[date] = mapped_column(Date)
    last_day: Mapped[date] = mapped_column(Date)
    lines: Mapped[int] = mapped_column(Integer)
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PayoutResultRow(Base):
    """The latest result of one payout or one credit, and since when it has been in it."""

    __tablename__ = "ledger_payout_results"
    __table_args__ = (
        UniqueConstraint(
            "biller", "subject", "subject_id", name="uq_ledger_payout_results_biller_subject"
        ),
        Index("ix_ledger_payout_results_biller_day", "biller", "day"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    subject: Mapped[str] = mapped_column(String(20))
    subject_id: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(40))
    day: Mapped[date] = mapped_column(Date)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    difference_pennies: Mapped[int] = mapped_column(BigInteger)
    linked: Mapped[list[str]] = mapped_column(JSON)
    reasons: Mapped[list[str]] = mapped_column(JSON)
    run_id: Mapped[str | None] = mapped_column(String(200))
    first_state: Mapped[str] = mapped_column(String(40))
    state_since: Mapped[datetime] = mapped_column(UTCDateTime)
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime)


PAYOUTS = Base.metadata.tables[PayoutRow.__tablename__]
CREDITS = Base.metadata.tables[PayoutCreditRow.__tablename__]
STATEMENTS = Base.metadata.tables[PayoutStatementRow.__tablename__]
RESULTS = Base.metadata.tables[PayoutResultRow.__tablename__]
PAYOUT_FIELDS = (
    "payout_id",
    "reference",
    "arrival_date",
    "amount_pennies",
    "gross_pennies",
    "deduction_pennies",
    "item_count",
    "items_digest",
    "report_sha256",
)
