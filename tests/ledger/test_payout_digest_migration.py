"""Migration 0009 on SQLite and PostgreSQL: downgraded, every kept payout's digest is the SHA-256
one billops computed before (written out again here), so an older billops finds the same report
unchanged; upgraded, every digest is the XXH3-128 one the ledger computes now, so this billops
does too. Only the digests change: the blocks are the same bytes."""

from __future__ import annotations

import hashlib
from datetime import date
from typing import Any

import sqlalchemy as sa
from sqlalchemy import create_engine

from ledger import Ledger, upgrade_database
from ledger._engine import parse_url
from ledger._payout_blocks import items_digest
from ledger.migrate import downgrade_engine
from ledger.payouts import PayoutRecord, items_table

PAYOUTS = sa.table(
    "ledger_payouts",
    *(sa.column(n) for n in ("biller", "payout_id", "items_digest", "items_block")),
)
# biller → payout → items: two billers with a payout of the same id, a payout of no items.
REPORTS: dict[str, dict[str, list[tuple[Any, ...]]]] = {
    "b1": {
        "po-1": [(0, "PAYMENT", 900, "pay-1", "INV-1", "", "", "", "Café Ñ", ""),
                 (1, "PAYMENT", 450, "pay-2", "", "PR-2", "", "", "Oak", "")],
        "po-2": [(0, "DEDUCTION", -450, "pay-2", "", "PR-2", "", "", "Oak", "late")],
        "po-3": [],
    },
    "b2": {"po-1": [(0, "PAYMENT", 77, "pay-9", "", "PR-9", "", "", "Ash", "")]},
}  # fmt: skip


def _sha256_as_text(items: list[tuple[Any, ...]]) -> str:
    """The digest before revision 0009: each item's fields as text joined by U+001F, SHA-256
    over the items' end offsets (int32, little-endian) and then their bytes."""
    texts = ["\x1f".join(map(str, item)).encode() for item in items]
    ends = [sum(map(len, texts[: n + 1])).to_bytes(4, "little") for n in range(len(texts))]
    return hashlib.sha256(b"".join(ends) + b"".join(texts)).hexdigest()


def _keep(ledger: Ledger, biller: str) -> tuple[int, int, int]:
    payouts = [
        PayoutRecord(
            payout_id=payout_id,
            reference=f"REF-{payout_id}",
            arrival_date=date(2027, 3, 1),
            amount_pennies=sum(item[2] for item in items),
            gross_pennies=sum(item[2] for item in items if item[2] > 0),
            deduction_pennies=-sum(item[2] for item in items if item[2] < 0),
            item_count=len(items),
            report_sha256="sha",
        )
        for payout_id, items in REPORTS[biller].items()
    ]
    rows = [(p, *item) for p, items in REPORTS[biller].items() for item in items]
    stored = ledger.record_payout_report(biller, payouts, items_table(rows))
    return stored.new, stored.changed, stored.unchanged


def _kept(engine: sa.Engine) -> dict[tuple[str, str], tuple[str, bytes]]:
    with engine.connect() as connection:
        rows = connection.execute(sa.select(PAYOUTS)).all()
    return {(str(b), str(p)): (str(d), bytes(block)) for b, p, d, block in rows}


def test_digests_go_back_to_sha256_and_forward_to_xxh3(ledger_url: str) -> None:
    upgrade_database(ledger_url)
    with Ledger(ledger_url, create=False) as ledger:
        assert [_keep(ledger, biller) for biller in REPORTS] == [(3, 0, 0), (1, 0, 0)]
    engine = create_engine(parse_url(ledger_url))
    try:
        now = _kept(engine)
        downgrade_engine(engine, "0008")

        before = _kept(engine)
        assert {key: block for key, (_, block) in before.items()} == {
            key: block for key, (_, block) in now.items()
        }
        assert {key: digest for key, (digest, _) in before.items()} == {
            (biller, payout_id): _sha256_as_text(items)
            for biller, payouts in REPORTS.items()
            for payout_id, items in payouts.items()
        }

        upgrade_database(ledger_url)

        assert _kept(engine) == now
        assert {key: digest for key, (digest, _) in now.items()} == {
            (biller, payout_id): items_digest(items)
            for biller, payouts in REPORTS.items()
            for payout_id, items in payouts.items()
        }
        with Ledger(ledger_url, create=False) as ledger:
            assert [_keep(ledger, biller) for biller in REPORTS] == [(0, 0, 3), (0, 0, 1)]
    finally:
        engine.dispose()
