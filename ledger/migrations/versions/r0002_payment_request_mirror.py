"""payment requests seen, sync marks, the ledger's identity, import rounds of a file

Revision ID: 0002
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import uuid

import sqlalchemy as sa
from alembic import op

revision: str = "0002"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """What the import checks files against, and the identity a run checks at its end."""
    op.create_table(
        "ledger_payment_requests",
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("payment_request_id", sa.String(200), nullable=False),
        sa.Column("number", sa.String(100), nullable=True),
        sa.Column("external_id", sa.String(300), nullable=True),
        sa.Column("reference", sa.String(300), nullable=True),
        sa.Column("customer_id", sa.String(200), nullable=True),
        sa.Column("description", sa.Text(), nullable=True),
        sa.Column("amount_pennies", sa.BigInteger(), nullable=False),
        sa.Column("paid_pennies", sa.BigInteger(), nullable=False),
        sa.Column("pay_by_date", sa.Date(), nullable=True),
        sa.Column("status", sa.String(40), nullable=False),
        sa.Column("source", sa.String(40), nullable=True),
        sa.Column("last_updated", sa.DateTime(timezone=True), nullable=True),
        sa.PrimaryKeyConstraint(
            "biller", "payment_request_id", name=op.f("pk_ledger_payment_requests")
        ),
    )
    op.create_index(
        "ix_ledger_payment_requests_external_id",
        "ledger_payment_requests",
        ["biller", "external_id"],
    )
    op.create_index(
        "ix_ledger_payment_requests_reference", "ledger_payment_requests", ["biller", "reference"]
    )
    op.create_index(
        "ix_ledger_payment_requests_customer", "ledger_payment_requests", ["biller", "customer_id"]
    )
    op.create_table(
        "ledger_sync_marks",
        sa.Column("biller", sa.String(200), nullable=False),
        sa.Column("stream", sa.String(100), nullable=False),
        sa.Column("mark", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("biller", "stream", name=op.f("pk_ledger_sync_marks")),
    )
    meta = op.create_table(
        "ledger_meta",
        sa.Column("key", sa.String(100), nullable=False),
        sa.Column("value", sa.String(300), nullable=False),
        sa.PrimaryKeyConstraint("key", name=op.f("pk_ledger_meta")),
    )
    # An identity, not an idempotency key: random on purpose (each ledger is a different one).
    op.bulk_insert(meta, [{"key": "ledger_id", "value": str(uuid.uuid4())}])
    with op.batch_alter_table("ledger_files") as files:
        files.add_column(sa.Column("generation", sa.Integer(), server_default="0", nullable=False))


def downgrade() -> None:
    """Drop them again."""
    with op.batch_alter_table("ledger_files") as files:
        files.drop_column("generation")
    op.drop_table("ledger_meta")
    op.drop_table("ledger_sync_marks")
    op.drop_index("ix_ledger_payment_requests_customer", table_name="ledger_payment_requests")
    op.drop_index("ix_ledger_payment_requests_reference", table_name="ledger_payment_requests")
    op.drop_index("ix_ledger_payment_requests_external_id", table_name="ledger_payment_requests")
    op.drop_table("ledger_payment_requests")
