"""The payout-reconciliation job's state: payouts and their items as the payout reports showed
them (``_payout_models``, ``_payout_blocks``), and through :class:`PayoutBankMixin` the payment
service's credits on the bank statements and the latest result of every payout and credit.

Everything is keyed by business ids (the payout's id, the bank line's stable key), so a report or
a statement seen again changes nothing, and a rerun updates a result (``in_transit`` becomes
``matched``) instead of adding one. A payout's items are one compressed block on its row,
rewritten only when the report shows them differently (their digest tells).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, func, select

from ledger._base import upsert
from ledger._payout_bank import BATCH, PayoutBankMixin
from ledger._payout_blocks import FORMAT, Block, DigestedItems, decode_blocks
from ledger._payout_models import PAYOUT_FIELDS, PAYOUTS
from ledger.errors import LedgerError
from ledger.payouts import PayoutRecord, PayoutStored

_RECORD_COLUMNS = [PAYOUTS.c[name] for name in PAYOUT_FIELDS]
_BLOCK_COLUMNS = [PAYOUTS.c.payout_id, PAYOUTS.c.items_format, PAYOUTS.c.items_block]


class PayoutsMixin(PayoutBankMixin):
    """The payout-reconciliation half of :class:`~ledger.Ledger`."""

    def record_payout_report(
        self, biller: str, payouts: Sequence[PayoutRecord], items: Any
    ) -> PayoutStored:
        """Keep a report's payouts and their items (an Arrow table with the columns of
        :data:`~ledger.payouts.ITEM_FIELDS`; :func:`~ledger.payouts.items_table` makes one from
        tuples). A payout seen before with the same items is left alone; one whose items changed
        has them replaced. The items' digest is the ledger's (each record's ``items_digest`` is
        not read). One transaction: a crash, or a payout whose ``item_count`` is not its number
        of items, keeps the ledger as it was."""
        digested = DigestedItems(items)
        unknown = sorted(set(digested.payout_ids()) - {p.payout_id for p in payouts})
        if unknown:
            raise LedgerError(f"payout items name payout(s) the report lacks: {unknown[:5]}")
        for payout in payouts:
            count = digested.count(payout.payout_id)
            if count != payout.item_count:
                raise LedgerError(
                    f"payout {payout.payout_id}: {payout.item_count} item(s) said, {count} given"
                )
        now = self._now()
        with self._begin() as connection:
            known = self._kept(connection, biller, [p.payout_id for p in payouts])
            fresh = [p for p in payouts if p.payout_id not in known]
            # Changed: other items, or the same items under another reference, arrival date or
            # amount (a corrected export); the checks read the payout as the ledger keeps it.
            changed = [
                p
                for p in payouts
                if p.payout_id in known
                and known[p.payout_id] != _seen(p, digested.digest(p.payout_id))
            ]
            # Only the payouts written are encoded: a rerun of a report kept already digests
            # its items and compresses none.
            chosen = digested.blocks(p.payout_id for p in fresh + changed)
            rows = [_payout_row(biller, p, chosen[p.payout_id], now) for p in fresh + changed]
            updates = [*PAYOUT_FIELDS[1:], "items_format", "items_block", "updated_at"]
            for start in range(0, len(rows), BATCH):
                upsert(
                    connection,
                    PAYOUTS,
                    rows[start : start + BATCH],
                    ["biller", "payout_id"],
                    updates,
                )
        return PayoutStored(len(fresh), len(changed), len(payouts) - len(fresh) - len(changed))

    def _kept(
        self, connection: Connection, biller: str, ids: Sequence[str]
    ) -> dict[str, tuple[str, str, date, int]]:
        """What the ledger keeps of those payouts that a report may show differently (see
        :func:`_seen`), by payout id."""
        found: dict[str, tuple[str, str, date, int]] = {}
        columns = (
            PAYOUTS.c.payout_id,
            PAYOUTS.c.items_digest,
            PAYOUTS.c.reference,
            PAYOUTS.c.arrival_date,
            PAYOUTS.c.amount_pennies,
        )
        for start in range(0, len(ids), BATCH):
            stmt = select(*columns).where(
                PAYOUTS.c.biller == biller, PAYOUTS.c.payout_id.in_(ids[start : start + BATCH])
            )
            found.update(
                {
                    str(r[0]): (str(r[1]), str(r[2]), r[3], int(r[4]))
                    for r in connection.execute(stmt)
                }
            )
        return found

    def payouts_between(self, biller: str, first: date, last: date) -> list[PayoutRecord]:
        """The biller's payouts arriving from ``first`` to ``last``, by arrival date."""
        stmt = (
            select(*_RECORD_COLUMNS)
            .where(
                PAYOUTS.c.biller == biller,
                PAYOUTS.c.arrival_date >= first,
                PAYOUTS.c.arrival_date <= last,
            )
            .order_by(PAYOUTS.c.arrival_date, PAYOUTS.c.reference)
        )
        with self._begin() as connection:
            return [_payout(r) for r in connection.execute(stmt).mappings()]

    def payouts_by_id(self, biller: str, payout_ids: Sequence[str]) -> list[PayoutRecord]:
        """Those of the biller's payouts the ledger knows."""
        found: list[PayoutRecord] = []
        with self._begin() as connection:
            for start in range(0, len(payout_ids), BATCH):
                stmt = select(*_RECORD_COLUMNS).where(
                    PAYOUTS.c.biller == biller,
                    PAYOUTS.c.payout_id.in_(payout_ids[start : start + BATCH]),
                )
                found.extend(_payout(r) for r in connection.execute(stmt).mappings())
        return found

    def payout_span(self, biller: str) -> tuple[date, date] | None:
        """The first and last arrival date of the biller's payouts (None: none yet)."""
        stmt = select(func.min(PAYOUTS.c.arrival_date), func.max(PAYOUTS.c.arrival_date)).where(
            PAYOUTS.c.biller == biller
        )
        with self._begin() as connection:
            first, last = connection.execute(stmt).one()
        return None if first is None else (first, last)

    def payout_items(self, biller: str, payout_ids: Sequence[str]) -> Any:
        """The items of those payouts (an Arrow table: ``payout_id`` and the columns of
        :data:`~ledger.payouts.ITEM_FIELDS`), by payout id and position."""
        wanted = sorted(set(payout_ids))
        rows: list[tuple[str, str, bytes]] = []
        with self._begin() as connection:
            for start in range(0, len(wanted), BATCH):
                stmt = select(*_BLOCK_COLUMNS).where(
                    PAYOUTS.c.biller == biller,
                    PAYOUTS.c.payout_id.in_(wanted[start : start + BATCH]),
                )
                rows.extend(_blocks(connection.execute(stmt)))
        rows.sort(key=lambda row: row[0])
        return decode_blocks(rows)

    def all_payout_items(
        self, biller: str, *, besides: Iterable[str] = ()
    ) -> tuple[Any, list[PayoutRecord]]:
        """The items of every payout of the biller but those in ``besides`` (the caller has
        them), by arrival date, payout id and position, with those payouts. Pairing a deduction
        with the payment it takes back, and finding a payment paid out twice, look at every
        payout ever kept: there is no per-item index to ask instead."""
        skip = set(besides)
        stmt = (
            select(*_RECORD_COLUMNS)
            .where(PAYOUTS.c.biller == biller)
            .order_by(PAYOUTS.c.arrival_date, PAYOUTS.c.payout_id)
        )
        with self._begin() as connection:
            records = [
                _payout(row)
                for row in connection.execute(stmt).mappings()
                if row["payout_id"] not in skip
            ]
            # The blocks of those payouts only: the caller usually has most of them (the
            # scope's), and reading a blob it skips costs as much as one it keeps.
            wanted = [r.payout_id for r in records]
            blocks: dict[str, tuple[str, str, bytes]] = {}
            for start in range(0, len(wanted), BATCH):
                chosen = select(*_BLOCK_COLUMNS).where(
                    PAYOUTS.c.biller == biller,
                    PAYOUTS.c.payout_id.in_(wanted[start : start + BATCH]),
                )
                blocks.update((row[0], row) for row in _blocks(connection.execute(chosen)))
        return decode_blocks([blocks[payout_id] for payout_id in wanted]), records

    def payout_net_before(self, biller: str, day: date) -> int:
        """Pennies the biller's payouts arriving before ``day`` carried (items, net)."""
        net = func.coalesce(func.sum(PAYOUTS.c.gross_pennies - PAYOUTS.c.deduction_pennies), 0)
        stmt = select(net).where(PAYOUTS.c.biller == biller, PAYOUTS.c.arrival_date < day)
        with self._begin() as connection:
            return int(connection.execute(stmt).scalar_one())


def _seen(payout: PayoutRecord, digest: str) -> tuple[str, str, date, int]:
    """What a report shows of a payout beyond its items' digest: its reference, arrival date
    and amount (the totals and the count follow from the items)."""
    return (digest, payout.reference, payout.arrival_date, int(payout.amount_pennies))


def _blocks(rows: Iterable[Any]) -> list[tuple[str, str, bytes]]:
    return [(str(r[0]), str(r[1]), bytes(r[2])) for r in rows]


def _payout_row(biller: str, payout: PayoutRecord, block: Block, now: datetime) -> dict[str, Any]:
    row: dict[str, Any] = {name: getattr(payout, name) for name in PAYOUT_FIELDS}
    row["items_digest"] = block.digest
    return {
        "biller": biller,
        **row,
        "items_format": FORMAT,
        "items_block": block.data,
        "seen_at": now,
        "updated_at": now,
    }


def _payout(row: Any) -> PayoutRecord:
    return PayoutRecord(**{name: row[name] for name in PAYOUT_FIELDS})
