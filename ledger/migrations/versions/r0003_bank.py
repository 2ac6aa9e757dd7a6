"""bank statement lines (with the payments each was set to record) and open-item snapshots

Revision ID: 0003
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0003"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """The bank-payments job's tables: lines seen, and what was owed per run."""
    op.create_table(
        "ledger_bank_lines",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("line_key", sa.String(300), nullable=False),
        sa.Column("file_sha256", sa.String(64), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("booked_on", sa.Date(), nullable=False),
        sa.Column("amount_pennies", sa.BigInteger(), nullable=False),
        sa.Column("klass", sa.String(40), nullable=False),
        sa.Column("outcome", sa.String(40), nullable=False),
        sa.Column("allocations", sa.JSON(), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=True),
        sa.Column("done", sa.Boolean(), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_bank_lines")),
        sa.UniqueConstraint("biller", "line_key", name="uq_ledger_bank_lines_biller_line_key"),
    )
    op.create_index(
        "ix_ledger_bank_lines_biller_booked_on", "ledger_bank_lines", ["biller", "booked_on"]
    )
    op.create_table(
        "ledger_bank_open_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("item_id", sa.String(200), nullable=False),
        sa.Column("number", sa.String(200), nullable=False),
        sa.Column("reference", sa.String(300), nullable=False),
        sa.Column("customer", sa.String(300), nullable=False),
        sa.Column("due_pennies", sa.BigInteger(), nullable=False),
        sa.Column("paid_pennies", sa.BigInteger(), nullable=False),
        sa.Column("due_date", sa.Date(), nullable=True),
        sa.Column("status", sa.String(40), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_bank_open_items")),
        sa.UniqueConstraint("run_id", "item_id", name="uq_ledger_bank_open_items_run_id"),
    )
    op.create_index(
        "ix_ledger_bank_open_items_biller", "ledger_bank_open_items", ["biller", "taken_at"]
    )


def downgrade() -> None:
    """Drop both tables."""
    op.drop_index("ix_ledger_bank_open_items_biller", table_name="ledger_bank_open_items")
    op.drop_table("ledger_bank_open_items")
    op.drop_index("ix_ledger_bank_lines_biller_booked_on", table_name="ledger_bank_lines")
    op.drop_table("ledger_bank_lines")
