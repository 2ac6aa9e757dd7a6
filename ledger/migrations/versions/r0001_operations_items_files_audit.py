"""operations, items, files and audit

Revision ID: 0001
Revises:
Create Date: 2026-11-22
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0001"
down_revision: str | None = None
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """Create the first four tables of the ledger."""
    _operations()
    _items()
    _files()
    _audit()


def downgrade() -> None:
    """Drop them again (children first)."""
    op.drop_table("ledger_audit")
    op.drop_table("ledger_files")
    op.drop_table("ledger_items")
    op.drop_table("ledger_operations")


def _operations() -> None:
    op.create_table(
        "ledger_operations",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("key", sa.String(400), nullable=False),
        sa.Column("kind", sa.String(100), nullable=False),
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("request_digest", sa.String(200), nullable=False),
        sa.Column("state", sa.String(20), nullable=False),
        sa.Column("remote_id", sa.String(200), nullable=True),
        sa.Column("run_id", sa.String(200), nullable=True),
        sa.Column("payload", sa.JSON(), nullable=True),
        sa.Column("result", sa.JSON(), nullable=True),
        sa.Column("error", sa.Text(), nullable=True),
        sa.Column("attempts", sa.Integer(), nullable=False),
        sa.Column("claimed_by", sa.String(300), nullable=True),
        sa.Column("claimed_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("sent_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("settled_at", sa.DateTime(timezone=True), nullable=True),
        sa.CheckConstraint(
            "state IN ('intended', 'sent', 'confirmed', 'failed', 'unknown')",
            name=op.f("ck_ledger_operations_state"),
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_operations")),
        sa.UniqueConstraint("key", name=op.f("uq_ledger_operations_key")),
    )
    op.create_index("ix_ledger_operations_biller_state", "ledger_operations", ["biller", "state"])
    op.create_index("ix_ledger_operations_state", "ledger_operations", ["state"])


def _items() -> None:
    op.create_table(
        "ledger_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("operation_key", sa.String(400), nullable=False),
        sa.Column("item_key", sa.String(300), nullable=False),
        sa.Column("external_id", sa.String(300), nullable=False),
        sa.Column("row_number", sa.Integer(), nullable=True),
        sa.Column("status", sa.String(40), nullable=False),
        sa.Column("payment_request_id", sa.String(200), nullable=True),
        sa.Column("errors", sa.JSON(), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=True),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.ForeignKeyConstraint(
            ["operation_key"],
            ["ledger_operations.key"],
            name=op.f("fk_ledger_items_operation_key_ledger_operations"),
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_items")),
        sa.UniqueConstraint("operation_key", "item_key", name="uq_ledger_items_operation_item"),
    )
    op.create_index("ix_ledger_items_run_id", "ledger_items", ["run_id"])


def _files() -> None:
    op.create_table(
        "ledger_files",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("sha256", sa.String(64), nullable=False),
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(100), nullable=False),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("size", sa.BigInteger(), nullable=False),
        sa.Column("folder", sa.Text(), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=True),
        sa.Column("state", sa.String(40), nullable=False),
        sa.Column("report_path", sa.Text(), nullable=True),
        sa.Column("created_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_files")),
        sa.UniqueConstraint("sha256", "biller", "kind", name="uq_ledger_files_sha256_biller_kind"),
    )


def _audit() -> None:
    op.create_table(
        "ledger_audit",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("actor", sa.String(200), nullable=False),
        sa.Column("action", sa.String(200), nullable=False),
        sa.Column("subject", sa.String(500), nullable=False),
        sa.Column("reason", sa.Text(), nullable=True),
        sa.Column("approver", sa.String(200), nullable=True),
        sa.Column("comment", sa.Text(), nullable=True),
        sa.Column("run_id", sa.String(200), nullable=True),
        sa.Column("details", sa.JSON(), nullable=True),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_audit")),
    )
    op.create_index("ix_ledger_audit_subject", "ledger_audit", ["subject"])
    op.create_index("ix_ledger_audit_run_id", "ledger_audit", ["run_id"])
