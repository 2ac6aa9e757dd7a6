"""the refresh token's recovery journal, for workers on several machines (encrypted records)

Revision ID: 0007
Revises: 0001
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0007"
down_revision: str | None = "0001"
branch_labels: str | None = None
depends_on: str | None = None


def upgrade() -> None:
    """One row per credential block with something pending (``ledger/token_journal.py``)."""
    op.create_table(
        "ledger_token_journal",
        sa.Column("store", sa.String(200), nullable=False),
        sa.Column("rotation", sa.Integer(), nullable=False),
        sa.Column("sealed", sa.LargeBinary(), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.PrimaryKeyConstraint("store", name=op.f("pk_ledger_token_journal")),
    )


def downgrade() -> None:
    """Drop the table (any record pending in it is lost with it)."""
    op.drop_table("ledger_token_journal")
