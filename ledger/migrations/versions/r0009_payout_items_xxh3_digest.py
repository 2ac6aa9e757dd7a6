"""payout items' digests by XXH3-128 instead of SHA-256

Revision ID: 0009
Revises: 0008
Create Date: 2026-11-28

Upgrade: each kept payout's ``items_digest`` is computed again from its block, by the ledger's own
digest (``ledger/_payout_blocks.py``: ``xxh3-128:`` and XXH3-128 over the items' columns as they
are), so the report that wrote them, seen again, changes nothing. Downgrade: the digests go back
to the definition billops had before this revision (SHA-256 over the items as text, written out
below, as that definition must stay what it was), so an older billops sees the same report as
unchanged too. Both read the blocks and write only the digests, a group of payouts at a time, so
a large ledger is never all in memory.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Iterator
from typing import Any

import sqlalchemy as sa
from alembic import op

from ledger._payout_blocks import BLOCK_FIELDS, DigestedItems, decode_blocks

revision: str = "0009"
down_revision: str | None = "0008"
branch_labels: str | None = None
depends_on: str | None = None

GROUP = 200  # payouts digested together

PAYOUTS = sa.table(
    "ledger_payouts",
    sa.column("id", sa.Integer()),
    sa.column("payout_id", sa.String()),
    sa.column("items_digest", sa.String()),
    sa.column("items_format", sa.String()),
    sa.column("items_block", sa.LargeBinary()),
)


def _groups(connection: sa.Connection) -> Iterator[list[tuple[int, str, str, bytes]]]:
    """(row id, payout id, format, block) of every payout, :data:`GROUP` rows at a time."""
    ids = connection.execute(sa.select(PAYOUTS.c.id).order_by(PAYOUTS.c.id)).scalars().all()
    for start in range(0, len(ids), GROUP):
        rows = connection.execute(
            sa.select(
                PAYOUTS.c.id, PAYOUTS.c.payout_id, PAYOUTS.c.items_format, PAYOUTS.c.items_block
            ).where(PAYOUTS.c.id.in_(ids[start : start + GROUP]))
        ).all()
        # A row id stands for its payout: two billers' payouts of the same id stay apart.
        yield [(int(i), str(p), str(f), bytes(b)) for i, p, f, b in rows]


def _redigest(digests: Callable[[list[tuple[int, str, str, bytes]]], dict[int, str]]) -> None:
    connection = op.get_bind()
    for group in _groups(connection):
        for row_id, digest in digests(group).items():
            connection.execute(
                sa.update(PAYOUTS).where(PAYOUTS.c.id == row_id).values(items_digest=digest)
            )


def _items(group: list[tuple[int, str, str, bytes]]) -> Any:
    """The group's items, each payout under its row id (unique, unlike payout ids)."""
    return decode_blocks([(str(row_id), fmt, block) for row_id, _, fmt, block in group])


def _xxh3(group: list[tuple[int, str, str, bytes]]) -> dict[int, str]:
    digested = DigestedItems(_items(group))
    return {row_id: digested.digest(str(row_id)) for row_id, _, _, _ in group}


def _sha256_as_text(rows: list[tuple[object, ...]]) -> str:
    """The digest before this revision: SHA-256 over each item's fields written as text (integers
    in decimal) joined by U+001F, the items' end offsets in bytes (little-endian int32), then
    all the items' UTF-8 bytes."""
    texts = ["\x1f".join(str(value) for value in row).encode() for row in rows]
    ends, total = [], 0
    for text in texts:
        total += len(text)
        ends.append(total.to_bytes(4, "little", signed=True))
    return hashlib.sha256(b"".join(ends) + b"".join(texts)).hexdigest()


def _sha256(group: list[tuple[int, str, str, bytes]]) -> dict[int, str]:
    table = _items(group).to_pydict()
    by_row: dict[int, list[tuple[object, ...]]] = {row_id: [] for row_id, _, _, _ in group}
    for index, row_id in enumerate(table["payout_id"]):
        by_row[int(row_id)].append(tuple(table[name][index] for name in BLOCK_FIELDS))
    return {row_id: _sha256_as_text(rows) for row_id, rows in by_row.items()}


def upgrade() -> None:
    _redigest(_xxh3)


def downgrade() -> None:
    _redigest(_sha256)
