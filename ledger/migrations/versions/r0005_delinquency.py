"""delinquency snapshots, observed failures and customer standings

Revision ID: 0005
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0005"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """The delinquency job's tables (``ledger/_delinquency_models.py``)."""
    op.create_table(
        "ledger_delinquency_snapshots",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("as_of", sa.Date(), nullable=False),
        sa.Column("taken_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("policy_name", sa.String(200), nullable=False),
        sa.Column("policy_digest", sa.String(64), nullable=False),
        sa.Column("customers", sa.Integer(), nullable=False),
        sa.Column("items", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_delinquency_snapshots")),
        sa.UniqueConstraint("biller", "run_id", name="uq_ledger_delinquency_snapshots_biller_run"),
    )
    op.create_table(
        "ledger_delinquency_snapshot_customers",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("customer_id", sa.String(200), nullable=False),
        sa.Column("external_id", sa.String(200), nullable=False),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("tags", sa.JSON(), nullable=False),
        sa.Column("mandate_id", sa.String(200), nullable=False),
        sa.Column("mandate_status", sa.String(40), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["ledger_delinquency_snapshots.id"],
            # Named by hand: the naming convention's name passes PostgreSQL's 63 characters.
            name="fk_ledger_delinquency_snapshot_customers_snapshot",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "snapshot_id", "customer_id", name=op.f("pk_ledger_delinquency_snapshot_customers")
        ),
    )
    op.create_table(
        "ledger_delinquency_snapshot_items",
        sa.Column("snapshot_id", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("item_id", sa.String(200), nullable=False),
        sa.Column("number", sa.String(200), nullable=False),
        sa.Column("customer_id", sa.String(200), nullable=False),
        sa.Column("status", sa.String(40), nullable=False),
        sa.Column("due_on", sa.Date(), nullable=True),
        sa.Column("due_pence", sa.BigInteger(), nullable=False),
        sa.Column("invoice_id", sa.String(200), nullable=False),
        sa.Column("collection_method", sa.String(40), nullable=False),
        sa.Column("auto_paused", sa.Boolean(), nullable=False),
        sa.Column("auto_source", sa.String(40), nullable=False),
        sa.Column("auto_override", sa.String(40), nullable=False),
        sa.Column("reason_code", sa.String(100), nullable=False),
        sa.ForeignKeyConstraint(
            ["snapshot_id"],
            ["ledger_delinquency_snapshots.id"],
            name="fk_ledger_delinquency_snapshot_items_snapshot",
            ondelete="CASCADE",
        ),
        sa.PrimaryKeyConstraint(
            "snapshot_id", "kind", "item_id", name=op.f("pk_ledger_delinquency_snapshot_items")
        ),
    )
    op.create_table(
        "ledger_delinquency_failures",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("customer_id", sa.String(200), nullable=False),
        sa.Column("payment_request_id", sa.String(200), nullable=False),
        sa.Column("observed_on", sa.Date(), nullable=False),
        sa.Column("evidence", sa.Text(), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("recorded_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_delinquency_failures")),
        sa.UniqueConstraint(
            "biller", "payment_request_id", "run_id", name="uq_ledger_delinquency_failures_seen"
        ),
    )
    op.create_index(
        "ix_ledger_delinquency_failures_biller_observed",
        "ledger_delinquency_failures",
        ["biller", "observed_on"],
    )
    op.create_table(
        "ledger_delinquency_standings",
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("customer_id", sa.String(200), nullable=False),
        sa.Column("name", sa.String(500), nullable=False),
        sa.Column("state", sa.String(40), nullable=False),
        sa.Column("since", sa.Date(), nullable=True),
        sa.Column("hold_period", sa.String(40), nullable=False),
        sa.Column("hold_count", sa.Integer(), nullable=False),
        sa.Column("mandate_at_entry", sa.String(200), nullable=False),
        sa.Column("left_on", sa.JSON(), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("policy_name", sa.String(200), nullable=False),
        sa.Column("policy_digest", sa.String(64), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint(
            "biller", "customer_id", name=op.f("pk_ledger_delinquency_standings")
        ),
    )


def downgrade() -> None:
    """Drop the job's tables, children first."""
    op.drop_table("ledger_delinquency_standings")
    op.drop_index(
        "ix_ledger_delinquency_failures_biller_observed", table_name="ledger_delinquency_failures"
    )
    op.drop_table("ledger_delinquency_failures")
    op.drop_table("ledger_delinquency_snapshot_items")
    op.drop_table("ledger_delinquency_snapshot_customers")
    op.drop_table("ledger_delinquency_snapshots")
