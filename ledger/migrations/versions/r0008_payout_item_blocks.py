"""payout items: one compressed block per payout instead of a row per item

Revision ID: 0008
Revises: 0004
Create Date: 2026-11-24

Upgrade: each payout's rows of ``ledger_payout_items`` become one block on its row of
``ledger_payouts`` (``items_format``, ``items_block``; ``ledger/_payout_blocks.py`` has the
format), its ``items_digest`` the digest of those items as the ledger computes it now (a
report seen again after the upgrade is unchanged), and the per-item table goes. Downgrade: the
blocks become rows again (digests stay: the first report seen after a downgrade rewrites its
payouts' items, the same items). Both work a group of payouts at a time, so a large ledger is
never all in memory.

The block encoder is the ledger's own (imported, not copied): the blocks this writes are the ones
the ledger reads, under the format name they carry.
"""

from __future__ import annotations

from collections.abc import Iterator

import sqlalchemy as sa
from alembic import op

from ledger._payout_blocks import FORMAT, decode_blocks, empty_block, encode_blocks, items_table
from ledger.errors import LedgerError
from ledger.payouts import ITEM_FIELDS

revision: str = "0008"
down_revision: str | None = "0004"
branch_labels: str | None = None
depends_on: str | None = None

GROUP = 200  # payouts converted together

PAYOUTS = sa.table(
    "ledger_payouts",
    sa.column("id", sa.Integer()),
    sa.column("biller", sa.String()),
    sa.column("payout_id", sa.String()),
    sa.column("items_digest", sa.String()),
    sa.column("items_format", sa.String()),
    sa.column("items_block", sa.LargeBinary()),
)
ITEMS = sa.table(
    "ledger_payout_items",
    sa.column("biller", sa.String()),
    *(
        sa.column(n, sa.Integer() if n == "position" else sa.BigInteger())
        if n in ("position", "amount_pennies")
        else sa.column(n, sa.String())
        for n in ITEM_FIELDS
    ),
)


def _groups(connection: sa.Connection) -> Iterator[tuple[str, list[tuple[int, str]]]]:
    """(biller, [(row id, payout id), ...]) in groups of at most :data:`GROUP` payouts."""
    rows = connection.execute(
        sa.select(PAYOUTS.c.biller, PAYOUTS.c.id, PAYOUTS.c.payout_id).order_by(
            PAYOUTS.c.biller, PAYOUTS.c.payout_id
        )
    ).all()
    group: list[tuple[int, str]] = []
    biller = None
    for row_biller, row_id, payout_id in rows:
        if group and (row_biller != biller or len(group) == GROUP):
            yield str(biller), group
            group = []
        biller = row_biller
        group.append((int(row_id), str(payout_id)))
    if group:
        yield str(biller), group


def _refuse_items_without_payout(connection: sa.Connection) -> None:
    """Revision 0004 has no foreign key from an item to its payout: an item row whose payout row
    is gone would be in no block and dropped with the table. Refused before anything changes."""
    payout = sa.select(PAYOUTS.c.id).where(
        PAYOUTS.c.biller == ITEMS.c.biller, PAYOUTS.c.payout_id == ITEMS.c.payout_id
    )
    found = connection.execute(
        sa.select(ITEMS.c.biller, ITEMS.c.payout_id, sa.func.count())
        .where(~payout.exists())
        .group_by(ITEMS.c.biller, ITEMS.c.payout_id)
        .order_by(ITEMS.c.biller, ITEMS.c.payout_id)
    ).all()
    if found:
        named = "; ".join(f"biller {b}, payout {p}: {n} item(s)" for b, p, n in found[:10])
        more = f" and {len(found) - 10} more payout(s)" if len(found) > 10 else ""
        raise LedgerError(
            "ledger_payout_items holds items of payouts ledger_payouts lacks, which the move to "
            f"blocks would lose ({named}{more}); nothing was changed: restore those payouts or "
            "delete their items, then upgrade again"
        )


def upgrade() -> None:
    """Blocks from the item rows, then the item rows dropped."""
    _refuse_items_without_payout(op.get_bind())
    with op.batch_alter_table("ledger_payouts") as payouts:
        payouts.add_column(sa.Column("items_format", sa.String(40), nullable=True))
        payouts.add_column(sa.Column("items_block", sa.LargeBinary(), nullable=True))
    connection = op.get_bind()
    for biller, group in _groups(connection):
        ids = [payout_id for _, payout_id in group]
        found = connection.execute(
            sa.select(*(ITEMS.c[n] for n in ITEM_FIELDS))
            .where(ITEMS.c.biller == biller, ITEMS.c.payout_id.in_(ids))
            .order_by(ITEMS.c.payout_id, ITEMS.c.position)
        ).all()
        blocks = encode_blocks(items_table([tuple(r) for r in found]))
        for row_id, payout_id in group:
            block = blocks.get(payout_id) or empty_block()
            connection.execute(
                sa.update(PAYOUTS)
                .where(PAYOUTS.c.id == row_id)
                .values(items_digest=block.digest, items_format=FORMAT, items_block=block.data)
            )
    with op.batch_alter_table("ledger_payouts") as payouts:
        payouts.alter_column("items_format", existing_type=sa.String(40), nullable=False)
        payouts.alter_column("items_block", existing_type=sa.LargeBinary(), nullable=False)
    op.drop_index("ix_ledger_payout_items_biller_payment_id", table_name="ledger_payout_items")
    op.drop_table("ledger_payout_items")


def downgrade() -> None:
    """Item rows from the blocks (as revision 0004 made the table), then the blocks dropped."""
    op.create_table(
        "ledger_payout_items",
        sa.Column("id", sa.Integer(), autoincrement=True, nullable=False),
        sa.PrimaryKeyConstraint("id", name=op.f("pk_ledger_payout_items")),
        sa.Column("biller", sa.String(200), nullable=False),
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
    connection = op.get_bind()
    for biller, group in _groups(connection):
        found = connection.execute(
            sa.select(PAYOUTS.c.payout_id, PAYOUTS.c.items_format, PAYOUTS.c.items_block).where(
                PAYOUTS.c.id.in_([row_id for row_id, _ in group])
            )
        ).all()
        table = decode_blocks([(str(p), str(f), bytes(b)) for p, f, b in found])
        rows = [{"biller": biller, **row} for row in table.select(list(ITEM_FIELDS)).to_pylist()]
        if rows:
            connection.execute(sa.insert(ITEMS), rows)
    with op.batch_alter_table("ledger_payouts") as payouts:
        payouts.drop_column("items_block")
        payouts.drop_column("items_format")
