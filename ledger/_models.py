"""The ledger's tables as SQLAlchemy 2 models (the Alembic migrations create the same schema).

Callers never see these rows: the :class:`~ledger.Ledger` hands out frozen dataclasses, so a row
cannot be changed behind the ledger's back and nothing holds a session open.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    CheckConstraint,
    ForeignKey,
    Index,
    Integer,
    MetaData,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column

from ledger._types import UTCDateTime

# Named constraints, so later migrations can alter them by name on both databases.
NAMING_CONVENTION = {
    "ix": "ix_%(column_0_label)s",
    "uq": "uq_%(table_name)s_%(column_0_name)s",
    "ck": "ck_%(table_name)s_%(constraint_name)s",
    "fk": "fk_%(table_name)s_%(column_0_name)s_%(referred_table_name)s",
    "pk": "pk_%(table_name)s",
}
OPERATION_STATES = ("intended", "sent", "confirmed", "failed", "unknown")
KEY_LENGTH = 400


class Base(DeclarativeBase):
    """The ledger's declarative base (its own metadata, shared with the migrations' env)."""

    metadata = MetaData(naming_convention=NAMING_CONVENTION)


class OperationRow(Base):
    """One intended write to the service, keyed by a deterministic idempotency key."""

    __tablename__ = "ledger_operations"
    __table_args__ = (
        CheckConstraint(
            "state IN ('intended', 'sent', 'confirmed', 'failed', 'unknown')", name="state"
        ),
        Index("ix_ledger_operations_biller_state", "biller", "state"),
        Index("ix_ledger_operations_state", "state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    key: Mapped[str] = mapped_column(String(KEY_LENGTH), unique=True)
    kind: Mapped[str] = mapped_column(String(100))
    biller: Mapped[str] = mapped_column(String(200))
    request_digest: Mapped[str] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(20))
    remote_id: Mapped[str | None] = mapped_column(String(200))
    run_id: Mapped[str | None] = mapped_column(String(200))
    payload: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    result: Mapped[dict[str, Any] | None] = mapped_column(JSON)
    error: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(300))
    claimed_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    sent_at: Mapped[datetime | None] = mapped_column(UTCDateTime)
    settled_at: Mapped[datetime | None] = mapped_column(UTCDateTime)


class ItemRow(Base):
    """The outcome of one row of a bulk import, upserted by (operation, item key)."""

    __tablename__ = "ledger_items"
    __table_args__ = (
        UniqueConstraint("operation_key", "item_key", name="uq_ledger_items_operation_item"),
        Index("ix_ledger_items_run_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    operation_key: Mapped[str] = mapped_column(
        String(KEY_LENGTH), ForeignKey("ledger_operations.key", ondelete="CASCADE")
    )
    # externalId when the service reported one; otherwise "#<row>" so rows without one stay apart.
    item_key: Mapped[str] = mapped_column(String(300))
    external_id: Mapped[str] = mapped_column(String(300))
    row_number: Mapped[int | None] = mapped_column(Integer)
    status: Mapped[str] = mapped_column(String(40))
    payment_request_id: Mapped[str | None] = mapped_column(String(200))
    errors: Mapped[list[str]] = mapped_column(JSON)
    run_id: Mapped[str | None] = mapped_column(String(200))
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)


class FileRow(Base):
    """An input file seen, by content hash, per biller and kind of file."""

    __tablename__ = "ledger_files"
    __table_args__ = (
        UniqueConstraint("sha256", "biller", "kind", name="uq_ledger_files_sha256_biller_kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    sha256: Mapped[str] = mapped_column(String(64))
    biller: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(100))
    name: Mapped[str] = mapped_column(String(500))
    size: Mapped[int] = mapped_column(BigInteger)
    folder: Mapped[str] = mapped_column(Text)
    run_id: Mapped[str | None] = mapped_column(String(200))
    state: Mapped[str] = mapped_column(String(40))
    report_path: Mapped[str | None] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)
    # How many times the file was imported again on purpose (``--force``): each round's writes
    # are operations of their own, so a forced import sends again instead of finding the last.
    generation: Mapped[int] = mapped_column(Integer, server_default="0")


class AuditRow(Base):
    """Who or what changed what, and why. Rows are only ever added."""

    __tablename__ = "ledger_audit"
    __table_args__ = (
        Index("ix_ledger_audit_subject", "subject"),
        Index("ix_ledger_audit_run_id", "run_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime)
    actor: Mapped[str] = mapped_column(String(200))
    action: Mapped[str] = mapped_column(String(200))
    subject: Mapped[str] = mapped_column(String(500))
    reason: Mapped[str | None] = mapped_column(Text)
    approver: Mapped[str | None] = mapped_column(String(200))
    comment: Mapped[str | None] = mapped_column(Text)
    run_id: Mapped[str | None] = mapped_column(String(200))
    details: Mapped[dict[str, Any] | None] = mapped_column(JSON)
