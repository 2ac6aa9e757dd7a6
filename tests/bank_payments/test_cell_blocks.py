"""Arrow's CSV reader over a body a block at a time (``_cells.read_cells``) gives the cells and the
bad rows (with their numbers) that one block over the whole body gives: rows across the blocks'
edges, bad rows in later blocks, blank lines, quoted cells, a line longer than a block (read as
one block, as before), a body without a quote read without quoting."""

from __future__ import annotations

import random

import pyarrow as pa
import pytest

from tasks.bank_payments import _cells

ROWS = [
    "02/11/2026,Acme Services Ltd,INV-0042,FASTER PAYMENT,1250.00,6250.00,INCOME,",
    "03/11/2026,Café Ünïcode,inv 7,BACS,-12.50,6237.50,,note",
    "",  # a blank line (a row of one empty cell: a bad row)
    "04/11/2026,Short,row",  # too few cells
    "05/11/2026,A,B,C,1.00,2.00,,x,extra",  # too many
    '06/11/2026,"Quoted, Ltd",R,T,1.00,2.00,,',
]


def _body(seed: int, count: int, *, quotes: bool = True) -> bytes:
    rng = random.Random(seed)
    rows = [r for r in ROWS if quotes or '"' not in r]
    return ("\n".join(rng.choice(rows) for _ in range(count)) + "\n").encode()


def _read(
    body: bytes, block: int, quoted: bool, monkeypatch: pytest.MonkeyPatch
) -> tuple[list[pa.Array], list[tuple[int, str, int, int]], int]:
    monkeypatch.setattr(_cells, "BLOCK", block)
    table, invalid = _cells.read_cells(body, ",", 8, [0, 1, 4, 5], check_utf8=False, quoted=quoted)
    return [c.combine_chunks() for c in table.columns], invalid, table.column(0).num_chunks


@pytest.mark.parametrize("block", [128, 200, 4096])
@pytest.mark.parametrize("seed", range(4))
def test_blocks_read_as_one_block_does(
    block: int, seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _body(seed, 500)
    whole_columns, whole_invalid, _ = _read(body, 1 << 30, True, monkeypatch)
    columns, invalid, chunks = _read(body, block, True, monkeypatch)
    assert chunks > 1  # read in blocks indeed
    assert invalid == whole_invalid
    assert all(a.equals(b) for a, b in zip(columns, whole_columns, strict=True))
    assert any(number > 100 for number, *_ in invalid)  # bad rows numbered past the first block


@pytest.mark.parametrize("seed", range(3))
def test_without_quotes_a_body_reads_as_with_them(
    seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    body = _body(seed, 300, quotes=False)
    assert b'"' not in body
    columns, invalid, _ = _read(body, 256, False, monkeypatch)
    quoted_columns, quoted_invalid, _ = _read(body, 256, True, monkeypatch)
    assert invalid == quoted_invalid
    assert all(a.equals(b) for a, b in zip(columns, quoted_columns, strict=True))


def test_a_line_longer_than_a_block_is_read_as_in_one_block(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    body = _body(9, 50) + b"08/11/2026," + b"Y" * 5000 + b",R,T,1.00,2.00,,\n" + _body(10, 50)
    columns, invalid, chunks = _read(body, 128, True, monkeypatch)
    whole_columns, whole_invalid, _ = _read(body, 1 << 30, True, monkeypatch)
    assert chunks == 1  # the whole body in one block
    assert invalid == whole_invalid
    assert all(a.equals(b) for a, b in zip(columns, whole_columns, strict=True))


def test_a_byte_not_utf8_is_named_as_in_one_block(monkeypatch: pytest.MonkeyPatch) -> None:
    body = _body(11, 400) + "09/11/2026,Café,R,T,1.00,2.00,,\n".encode("cp1252") + _body(12, 9)
    messages = []
    for block in (64, 1 << 30):
        monkeypatch.setattr(_cells, "BLOCK", block)
        with pytest.raises(pa.ArrowInvalid) as caught:
            _cells.read_cells(body, ",", 8, [0, 1, 4, 5], check_utf8=True)
        messages.append(str(caught.value))
    assert messages[0] == messages[1]
    assert "invalid UTF8" in messages[0]
