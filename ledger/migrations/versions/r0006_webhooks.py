"""webhook events received, and which credential block serves which biller

Revision ID: 0006
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0006"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """The webhook receiver's tables (``ledger/_webhooks.py``)."""
    op.create_table(
        "ledger_webhook_events",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.Column("dedup_key", sa.String(300), nullable=False),
        sa.Column("event_id", sa.String(200), nullable=True),
        sa.Column("biller_id", sa.String(200), nullable=False),
        sa.Column("kind", sa.String(40), nullable=False),
        sa.Column("type", sa.String(100), nullable=False),
        sa.Column("payload", sa.JSON(), nullable=False),
        sa.Column("deliveries", sa.Integer(), nullable=False),
        sa.Column("received_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("last_delivery_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("emitted_at", sa.DateTime(timezone=True), nullable=True),
        sa.Column("emissions", sa.Integer(), nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_webhook_events")),
        sa.UniqueConstraint("dedup_key", name="uq_ledger_webhook_events_dedup_key"),
    )
    op.create_index(
        "ix_ledger_webhook_events_received_at", "ledger_webhook_events", ["received_at"]
    )
    op.create_index("ix_ledger_webhook_events_emitted_at", "ledger_webhook_events", ["emitted_at"])
    op.create_table(
        "ledger_webhook_billers",
        sa.Column("biller_id", sa.String(200), nullable=False),
        sa.Column("block", sa.String(200), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("biller_id", name=op.f("pk_ledger_webhook_billers")),
    )


def downgrade() -> None:
    """Drop both tables."""
    op.drop_table("ledger_webhook_billers")
    op.drop_index("ix_ledger_webhook_events_emitted_at", table_name="ledger_webhook_events")
    op.drop_index("ix_ledger_webhook_events_received_at", table_name="ledger_webhook_events")
    op.drop_table("ledger_webhook_events")
