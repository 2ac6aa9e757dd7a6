"""A report's items digested by Arrow as the module docstring defines the digest (the Python
definition, :func:`items_digest`, itself checked against bytes written out by hand), whatever the
order of the items, the numbering of the payouts (one run each, or interleaved) and the range of
the positions; a change of any one field, or of where one text ends and the next begins, changes
it; and a payout kept unchanged is digested, never encoded again."""

from __future__ import annotations

import random
import struct
from datetime import date
from typing import Any

import pyarrow as pa
import pytest
import xxhash

from ledger import Ledger
from ledger import _payout_blocks as blocks_module
from ledger._payout_blocks import DigestedItems, decode_blocks, encode_blocks, items_digest
from ledger.payouts import ITEM_FIELDS, PayoutRecord, items_table

BILLER = "biller-1"


def _rows(pid: str, count: int, *, first: int = 0) -> list[tuple[Any, ...]]:
    return [
        (pid, first + n, "DEDUCTION" if n % 3 == 2 else "PAYMENT", (-1) ** n * (n * 101 + 7),
         f"pay-{pid}-{n}", "" if n % 2 else f"INV-{n}", f"PR-{n}", "", "", "Café Ñ", "")
        for n in range(count)
    ]  # fmt: skip


def _record(pid: str, rows: list[tuple[Any, ...]]) -> PayoutRecord:
    amounts = [int(r[3]) for r in rows]
    return PayoutRecord(
        payout_id=pid,
        reference=f"REF-{pid}",
        arrival_date=date(2027, 3, 1),
        amount_pennies=sum(amounts),
        gross_pennies=sum(a for a in amounts if a > 0),
        deduction_pennies=-sum(a for a in amounts if a < 0),
        item_count=len(rows),
        report_sha256="sha",
    )


CASES = {
    "in-order": _rows("a", 5) + _rows("b", 1) + _rows("c", 4),
    "shuffled": random.Random(7).sample(_rows("a", 5) + _rows("b", 3), 8),
    "interleaved": [r for pair in zip(_rows("a", 4), _rows("b", 4), strict=True) for r in pair],
    "far-positions": _rows("a", 3, first=10**6) + _rows("b", 2, first=2**31 - 3),
    "one": _rows("a", 1),
    "none": [],
}


@pytest.mark.parametrize("name", list(CASES))
def test_each_payouts_digest_is_the_documented_one(name: str) -> None:
    rows = CASES[name]
    digested = DigestedItems(items_table(rows))
    by_payout: dict[str, list[tuple[Any, ...]]] = {}
    for row in sorted(rows, key=lambda r: r[1]):
        by_payout.setdefault(str(row[0]), []).append(row[1:])
    assert sorted(digested.payout_ids()) == sorted(by_payout)
    for pid, items in by_payout.items():
        assert digested.digest(pid) == items_digest(items)
        assert digested.count(pid) == len(items)
    assert digested.digest("absent") == items_digest([]) and digested.count("absent") == 0
    encoded = encode_blocks(items_table(rows))
    assert {pid: b.digest for pid, b in encoded.items()} == {
        pid: items_digest(items) for pid, items in by_payout.items()
    }
    back = decode_blocks([(pid, blocks_module.FORMAT, b.data) for pid, b in encoded.items()])
    assert sorted(map(tuple, zip(*back.to_pydict().values(), strict=True))) == sorted(rows)


def _text_column(*values: str) -> bytes:
    """A text column as the docstring writes it: end offsets from 0 (int32), then the bytes."""
    ends = [len("".join(values[: n + 1]).encode()) for n in range(len(values))]
    return struct.pack(f"<{len(values)}i", *ends) + "".join(values).encode()


def test_the_digest_is_xxh3_128_over_the_columns_as_documented() -> None:
    items = [
        (0, "PAYMENT", 1250, "pay-1", "INV-1", "PR-1", "", "", "Café", ""),
        (1, "DEDUCTION", -5, "pay-2", "", "PR-2", "inv_9", "", "Oak", "late"),
    ]
    by_hand = xxhash.xxh3_128()
    by_hand.update(struct.pack("<2i", 0, 1))  # position: int32
    by_hand.update(_text_column("PAYMENT", "DEDUCTION"))
    by_hand.update(struct.pack("<2q", 1250, -5))  # amount_pennies: int64
    for column in list(zip(*items, strict=True))[3:]:
        by_hand.update(_text_column(*column))

    assert items_digest(items) == f"xxh3-128:{by_hand.hexdigest()}"
    assert DigestedItems(items_table([("p", *row) for row in items])).digest("p") == (
        items_digest(items)
    )
    assert items_digest([]) == f"xxh3-128:{xxhash.xxh3_128().hexdigest()}"


def test_any_changed_field_or_boundary_changes_the_digest() -> None:
    base = [
        (0, "PAYMENT", 100, "pay-1", "ab", "PR-1", "", "", "Oak", ""),
        (1, "PAYMENT", 200, "pay-2", "c", "PR-2", "", "", "Café Ñ", ""),
    ]
    seen = {items_digest(base)}
    for row in range(2):
        for field in range(len(base[0])):
            edited = [list(item) for item in base]
            value = edited[row][field]
            edited[row][field] = value + 1 if isinstance(value, int) else f"{value}z"
            seen.add(items_digest([tuple(item) for item in edited]))
    # The same bytes in a column, split elsewhere between two items: "ab","c" → "a","bc".
    seen.add(items_digest([(*base[0][:4], "a", *base[0][5:]), (*base[1][:4], "bc", *base[1][5:])]))
    assert len(seen) == 1 + 2 * len(base[0]) + 1


def test_blocks_are_encoded_only_for_the_payouts_written(
    ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A rerun of a report kept already compresses no block; a changed payout's only."""
    asked: list[list[str]] = []
    real = DigestedItems.blocks

    def recording(self: DigestedItems, payout_ids: Any) -> Any:
        wanted = list(payout_ids)
        asked.append(wanted)
        return real(self, wanted)

    monkeypatch.setattr(DigestedItems, "blocks", recording)
    rows = {pid: _rows(pid, n) for pid, n in (("a", 3), ("b", 2), ("c", 0))}
    payouts = [_record(pid, r) for pid, r in rows.items()]
    table = items_table([r for part in rows.values() for r in part])

    assert ledger.record_payout_report(BILLER, payouts, table).new == 3
    again = ledger.record_payout_report(BILLER, payouts, table)
    other = ("b", 1, "PAYMENT", 5, "pay-other", "", "PR-9", "", "", "Oak Joinery", "")
    rows["b"] = [rows["b"][0], other]  # b's second item is another payment now
    changed = ledger.record_payout_report(
        BILLER,
        [_record(pid, r) for pid, r in rows.items()],
        items_table([r for part in rows.values() for r in part]),
    )

    assert (again.unchanged, changed.changed, changed.unchanged) == (3, 1, 2)
    assert asked == [["a", "b", "c"], [], ["b"]]
    kept = ledger.payout_items(BILLER, ["a", "b", "c"])
    assert kept.num_rows == 5 and kept.column("payout_id").to_pylist().count("b") == 2
    assert pa.table(kept).column_names == ["payout_id", *ITEM_FIELDS[1:]]
