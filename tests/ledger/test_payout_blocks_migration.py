"""Migration 0008 on SQLite and PostgreSQL: a ledger that kept a row per payout item (revision
0004) upgraded to one block per payout has the same items, digested as the ledger digests them
now (the same report seen again changes nothing), and downgraded has its rows back as they were.
"""

from __future__ import annotations

from datetime import UTC, date, datetime

import pytest
import sqlalchemy as sa
from sqlalchemy import create_engine, inspect

from ledger import Ledger, upgrade_database
from ledger._engine import parse_url
from ledger._payout_blocks import items_digest
from ledger.errors import LedgerError
from ledger.migrate import downgrade_engine
from ledger.payouts import ITEM_FIELDS, PayoutRecord, items_table

BEFORE = "0008-1"  # the payout branch's revision before the blocks
WHEN = datetime(2027, 3, 1, 9, 0, tzinfo=UTC)
OLD_PAYOUTS = sa.table(
    "ledger_payouts",
    *(sa.column(n) for n in ("biller", "payout_id", "reference", "arrival_date")),
    *(sa.column(n) for n in ("amount_pennies", "gross_pennies", "deduction_pennies")),
    *(sa.column(n) for n in ("item_count", "items_digest", "report_sha256")),
    sa.column("seen_at", sa.DateTime(timezone=True)),
    sa.column("updated_at", sa.DateTime(timezone=True)),
)
OLD_ITEMS = sa.table("ledger_payout_items", sa.column("biller"), *map(sa.column, ITEM_FIELDS))
# (biller, payout, day, items): two billers with a payout of the same id, a payout of no items.
PAYOUTS = (
    ("b1", "po-1", date(2027, 3, 1), [(900, "PAYMENT", "pay-1"), (450, "PAYMENT", "pay-2")]),
    ("b1", "po-2", date(2027, 3, 2), [(300, "PAYMENT", "pay-3"), (-450, "DEDUCTION", "pay-2")]),
    ("b1", "po-3", date(2027, 3, 3), []),
    ("b2", "po-1", date(2027, 3, 1), [(77, "PAYMENT", "pay-9")]),
)


def _items(payout_id: str, lines: list[tuple[int, str, str]]) -> list[tuple[object, ...]]:
    return [
        (payout_id, n, kind, amount, payment, "", f"PR-{payment}", "", "", "Oak Joinery", "")
        for n, (amount, kind, payment) in enumerate(lines)
    ]


def _record(payout_id: str, day: date, lines: list[tuple[int, str, str]]) -> PayoutRecord:
    amounts = [amount for amount, _, _ in lines]
    return PayoutRecord(
        payout_id=payout_id,
        reference=f"ADFIN-{payout_id}",
        arrival_date=day,
        amount_pennies=sum(amounts),
        gross_pennies=sum(a for a in amounts if a > 0),
        deduction_pennies=-sum(a for a in amounts if a < 0),
        item_count=len(amounts),
        report_sha256="sha",
    )


def _old_rows(engine: sa.Engine) -> set[tuple[object, ...]]:
    with engine.connect() as connection:
        found = connection.execute(sa.select(OLD_ITEMS.c.biller, *OLD_ITEMS.c[1:])).all()
    return {tuple(r) for r in found}


def test_item_rows_become_blocks_and_back(ledger_url: str) -> None:
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    try:
        downgrade_engine(engine, BEFORE)
        assert "ledger_payout_items" in inspect(engine).get_table_names()
        written: set[tuple[object, ...]] = set()
        with engine.begin() as connection:
            for biller, payout_id, day, lines in PAYOUTS:
                record = _record(payout_id, day, lines)
                row = {n: getattr(record, n) for n in ("payout_id", "reference", "arrival_date")}
                row |= {n: getattr(record, n) for n in ("amount_pennies", "gross_pennies")}
                row |= {"deduction_pennies": record.deduction_pennies, "report_sha256": "sha"}
                row |= {"item_count": record.item_count, "items_digest": "an older digest"}
                connection.execute(
                    sa.insert(OLD_PAYOUTS).values(
                        biller=biller, seen_at=WHEN, updated_at=WHEN, **row
                    )
                )
                items = _items(payout_id, lines)
                for item in items:
                    connection.execute(
                        sa.insert(OLD_ITEMS).values(
                            biller=biller, **dict(zip(ITEM_FIELDS, item, strict=True))
                        )
                    )
                written |= {(biller, *item) for item in items}

        upgrade_database(ledger_url)

        assert "ledger_payout_items" not in inspect(engine).get_table_names()
        with Ledger(ledger_url, create=False) as ledger:
            for biller, payout_id, _, lines in PAYOUTS:
                items = _items(payout_id, lines)
                kept = ledger.payout_items(biller, [payout_id]).to_pylist()
                assert kept == [dict(zip(ITEM_FIELDS, item, strict=True)) for item in items]
                (record,) = ledger.payouts_by_id(biller, [payout_id])
                assert record.items_digest == items_digest([item[1:] for item in items])
            again = [_record(p, d, lines) for b, p, d, lines in PAYOUTS if b == "b1"]
            rows = [item for b, p, _, lines in PAYOUTS if b == "b1" for item in _items(p, lines)]
            stored = ledger.record_payout_report("b1", again, items_table(rows))
            assert (stored.new, stored.changed, stored.unchanged) == (0, 0, 3)

        downgrade_engine(engine, BEFORE)

        assert _old_rows(engine) == written
        columns = {c["name"] for c in inspect(engine).get_columns("ledger_payouts")}
        assert not {"items_format", "items_block"} & columns
        upgrade_database(ledger_url)
    finally:
        engine.dispose()


def test_items_of_a_payout_the_ledger_lacks_stop_the_upgrade_with_nothing_lost(
    ledger_url: str,
) -> None:
    # Revision 0004 had no foreign key from an item to its payout: an item row whose payout row
    # is gone (a hand edit, a restore of one table) would be left out of every block and dropped
    # with the table. The upgrade refuses, naming it, and the rows stay as they were.
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    try:
        downgrade_engine(engine, BEFORE)
        biller, payout_id, day, lines = PAYOUTS[0]
        record = _record(payout_id, day, lines)
        with engine.begin() as connection:
            row = {n: getattr(record, n) for n in ("payout_id", "reference", "arrival_date")}
            row |= {n: getattr(record, n) for n in ("amount_pennies", "gross_pennies")}
            row |= {"deduction_pennies": record.deduction_pennies, "report_sha256": "sha"}
            row |= {"item_count": record.item_count, "items_digest": "an older digest"}
            connection.execute(
                sa.insert(OLD_PAYOUTS).values(biller=biller, seen_at=WHEN, updated_at=WHEN, **row)
            )
            items = [*_items(payout_id, lines), *_items("po-gone", [(5, "PAYMENT", "pay-5")])]
            for item in items:
                connection.execute(
                    sa.insert(OLD_ITEMS).values(
                        biller=biller, **dict(zip(ITEM_FIELDS, item, strict=True))
                    )
                )

        with pytest.raises(LedgerError, match="po-gone"):
            upgrade_database(ledger_url)

        assert _old_rows(engine) == {(biller, *item) for item in items}
        columns = {c["name"] for c in inspect(engine).get_columns("ledger_payouts")}
        assert not {"items_format", "items_block"} & columns
    finally:
        if "ledger_payout_items" in inspect(engine).get_table_names():
            with engine.begin() as connection:
                connection.execute(sa.delete(OLD_ITEMS).where(OLD_ITEMS.c.payout_id == "po-gone"))
        upgrade_database(ledger_url)
        engine.dispose()


def test_more_payouts_than_one_group_each_keep_their_own_items(ledger_url: str) -> None:
    # The migration converts 200 payouts at a time (GROUP): a biller with more, beside another,
    # must come out with every payout's items, in order, on the payout they belong to.
    upgrade_database(ledger_url)
    engine = create_engine(parse_url(ledger_url))
    day = date(2027, 3, 1)
    payouts = [("b1", f"po-{n:03d}") for n in range(205)] + [("b2", "po-000")]
    try:
        downgrade_engine(engine, BEFORE)
        expected: dict[tuple[str, str], list[tuple[object, ...]]] = {}
        with engine.begin() as connection:
            for biller, payout_id in payouts:
                lines = [
                    (100 + n, "PAYMENT", f"{biller}-{payout_id}-{n}")
                    for n in range(n_of(payout_id))
                ]
                record = _record(payout_id, day, lines)
                row = {n: getattr(record, n) for n in ("payout_id", "reference", "arrival_date")}
                row |= {n: getattr(record, n) for n in ("amount_pennies", "gross_pennies")}
                row |= {"deduction_pennies": 0, "report_sha256": "sha", "items_digest": "old"}
                connection.execute(
                    sa.insert(OLD_PAYOUTS).values(
                        biller=biller, seen_at=WHEN, updated_at=WHEN, item_count=len(lines), **row
                    )
                )
                items = _items(payout_id, lines)
                if items:
                    connection.execute(
                        sa.insert(OLD_ITEMS),
                        [
                            {"biller": biller, **dict(zip(ITEM_FIELDS, i, strict=True))}
                            for i in items
                        ],
                    )
                expected[(biller, payout_id)] = items

        upgrade_database(ledger_url)

        with Ledger(ledger_url, create=False) as ledger:
            for (biller, payout_id), items in expected.items():
                kept = ledger.payout_items(biller, [payout_id]).to_pylist()
                assert kept == [dict(zip(ITEM_FIELDS, i, strict=True)) for i in items]
    finally:
        upgrade_database(ledger_url)
        engine.dispose()


def n_of(payout_id: str) -> int:
    """0 to 2 items, varying with the payout."""
    return int(payout_id[-3:]) % 3
