"""payouts and their items, the payment service's bank credits, statements seen, results

Revision ID: 0004
Revises: 0003
Create Date: 2026-11-24
"""

from __future__ import annotations

import sqlalchemy as sa
from alembic import op

revision: str = "0004"
down_revision: str | None = "0003"
branch_labels: str | None = None
depends_on: str | None = None


def _id(table: str) -> list[sa.Column[int] | sa.PrimaryKeyConstraint | sa.Column[str]]:
    return [
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f(f"pk_{table}")),
        sa.Column("biller", sa.String(200), nullable=False),
    ]


def upgrade() -> None:
    """The payout-reconciliation job's tables."""
    op.create_table(
        "ledger_payouts",
        *_id("ledger_payouts"),
        sa.Column("payout_id", sa.String(200), nullable=False),
        sa.Column("reference", sa.String(200), nullable=False),
        sa.Column("arrival_date", sa.Date(), nullable=False),
        sa.Column("amount_pennies", sa.BigInteger(), nullable=False),
        sa.Column("gross_pennies", sa.BigInteger(), nullable=False),
        sa.Column("deduction_pennies", sa.BigInteger(), nullable=False),
        sa.Column("item_count", sa.Integer(), nullable=False),
        sa.Column("items_digest", sa.String(64), nullable=False),
        sa.Column("report_sha256", sa.String(64), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.Column("updated_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("biller", "payout_id", name="uq_ledger_payouts_biller_payout_id"),
    )
    op.create_index(
        "ix_ledger_payouts_biller_arrival_date", "ledger_payouts", ["biller", "arrival_date"]
    )
    op.create_table(
        "ledger_payout_items",
        *_id("ledger_payout_items"),
        sa.Column("payout_id", sa.String(200), nullable=False),
        sa.Column("position", sa.Integer(), nullable=False),
        sa.Column("kind", sa.String(20), nullable=False),
        sa.Column("amount_pennies", sa.BigInteger(), nullable=False),
        sa.Column("payment_id", sa.String(200), nullable=False),
        sa.Column("invoice_number", sa.String(200), nullable=False),
        sa.Column("payment_request_number", sa.String(200), nullable=False),
        sa.Column("invoice_id", sa.String(200), nullable=False),
        sa.Column("payment_request_id", sa.String(200), nullable=False),
        sa.Column("customer", sa.String(300), nullable=False),
        sa.Column("description", sa.String(500), nullable=False),
        sa.UniqueConstraint(
            "biller", "payout_id", "position", name="uq_ledger_payout_items_biller_payout_id"
        ),
    )
    op.create_index(
        "ix_ledger_payout_items_biller_payment_id", "ledger_payout_items", ["biller", "payment_id"]
    )
    op.create_table(
        "ledger_payout_credits",
        *_id("ledger_payout_credits"),
        sa.Column("line_key", sa.String(300), nullable=False),
        sa.Column("booked_on", sa.Date(), nullable=False),
        sa.Column("amount_pennies", sa.BigInteger(), nullable=False),
        sa.Column("payer", sa.String(300), nullable=False),
        sa.Column("reference", sa.String(300), nullable=False),
        sa.Column("text", sa.String(500), nullable=False),
        sa.Column("file_sha256", sa.String(64), nullable=False),
        sa.Column("line", sa.Integer(), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint("biller", "line_key", name="uq_ledger_payout_credits_biller_line_key"),
    )
    op.create_index(
        "ix_ledger_payout_credits_biller_booked_on",
        "ledger_payout_credits",
        ["biller", "booked_on"],
    )
    op.create_table(
        "ledger_payout_statements",
        *_id("ledger_payout_statements"),
        sa.Column("file_sha256", sa.String(64), nullable=False),
        sa.Column("first_day", sa.Date(), nullable=False),
        sa.Column("last_day", sa.Date(), nullable=False),
        sa.Column("lines", sa.Integer(), nullable=False),
        sa.Column("seen_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint(
            "biller", "file_sha256", name="uq_ledger_payout_statements_biller_file_sha256"
        ),
    )
    op.create_table(
        "ledger_payout_results",
        *_id("ledger_payout_results"),
        sa.Column("subject", sa.String(20), nullable=False),
        sa.Column("subject_id", sa.String(300), nullable=False),
        sa.Column("state", sa.String(40), nullable=False),
        sa.Column("day", sa.Date(), nullable=False),
        sa.Column("amount_pennies", sa.BigInteger(), nullable=False),
        sa.Column("difference_pennies", sa.BigInteger(), nullable=False),
        sa.Column("linked", sa.JSON(), nullable=False),
        sa.Column("reasons", sa.JSON(), nullable=False),
        sa.Column("run_id", sa.String(200), nullable=True),
        sa.Column("first_state", sa.String(40), nullable=False),
        sa.Column("state_since", sa.DateTime(timezone=True), nullable=False),
        sa.Column("checked_at", sa.DateTime(timezone=True), nullable=False),
        sa.UniqueConstraint(
            "biller", "subject", "subject_id", name="uq_ledger_payout_results_biller_subject"
        ),
    )
    op.create_index(
        "ix_ledger_payout_results_biller_day", "ledger_payout_results", ["biller", "day"]
    )


def downgrade() -> None:
    """Drop the tables."""
    op.drop_index("ix_ledger_payout_results_biller_day", table_name="ledger_payout_results")
    op.drop_table("ledger_payout_results")
    op.drop_table("ledger_payout_statements")
    op.drop_index("ix_ledger_payout_credits_biller_booked_on", table_name="ledger_payout_credits")
    op.drop_table("ledger_payout_credits")
    op.drop_index("ix_ledger_payout_items_biller_payment_id", table_name="ledger_payout_items")
    op.drop_table("ledger_payout_items")
    op.drop_index("ix_ledger_payouts_biller_arrival_date", table_name="ledger_payouts")
    op.drop_table("ledger_payouts")
