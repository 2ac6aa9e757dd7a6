"""Payout items as the ledger keeps them: one compressed block per payout, not a row per item.

A year of a platform's payouts is hundreds of thousands of items that are only ever read a
payout at a time or all at once, so each payout's items are one value of its row
(``ledger_payouts.items_block``), written and read in one go (``docs/service.md`` §6 Payouts).

Format ``arrow-ipc-zstd/1`` (``ledger_payouts.items_format``): a Zstandard frame (RFC 8878) holding
an Arrow IPC stream (the Arrow columnar format's streaming format: a schema message and one
record batch) of the payout's items in position order, with the columns of :data:`BLOCK_FIELDS`
(``position`` int32, ``amount_pennies`` int64, the rest UTF-8 strings, never null). Any zstd and
Arrow reader opens it: ``zstd -d < block | python -c "import pyarrow.ipc, sys;
print(pyarrow.ipc.open_stream(sys.stdin.buffer).read_all())"``.

``items_digest`` is ``xxh3-128:`` and the hex of XXH3-128 (xxHash's 128-bit hash) over the items
column by column, in :data:`BLOCK_FIELDS` order: an integer column's values as little-endian
integers of the block's width (``position`` 4 bytes, ``amount_pennies`` 8); a text column's
values' end offsets in bytes counted from 0 (little-endian int32, one per item), then all its
values' UTF-8 bytes. The same items in the same order give the same digest whatever wrote them (a
report, a migration). The digest only tells whether a payout's items changed since the ledger
kept them (nobody is trusted on it), so a fast non-cryptographic hash of 128 bits is enough: it
reads the Arrow buffers as they are, where SHA-256 over the items joined as text cost 0.13 s of a
year's 0.17 s to keep (``bench/bench_payouts.py``, on a CPU without SHA instructions). The name
in front says which definition a digest follows: migration 0009 gave every kept payout this one.

pyarrow is imported on use: the ledger's other commands (status, audit) do not need it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ledger.errors import LedgerError
from ledger.payouts import ITEM_FIELDS

FORMAT = "arrow-ipc-zstd/1"
BLOCK_FIELDS = ITEM_FIELDS[1:]  # the payout's id is its row's
INTEGERS = {"position": "int32", "amount_pennies": "int64"}
DIGEST = "xxh3-128"  # the name in front of every items_digest (module docstring)


@dataclass(frozen=True)
class Block:
    """One payout's items, encoded: the bytes kept, their digest, how many items."""

    data: bytes
    digest: str
    count: int


def block_schema() -> Any:
    import pyarrow as pa

    return pa.schema(
        [pa.field(n, getattr(pa, INTEGERS.get(n, "string"))(), False) for n in BLOCK_FIELDS]
    )


def items_table(rows: Iterable[Sequence[Any]]) -> Any:
    """Items given as tuples in :data:`~ledger.payouts.ITEM_FIELDS` order as an Arrow table."""
    import pyarrow as pa

    columns = list(zip(*rows, strict=True)) or [()] * len(ITEM_FIELDS)
    types = [pa.string(), *block_schema().types]
    return pa.table(
        {n: pa.array(list(c), t) for n, c, t in zip(ITEM_FIELDS, columns, types, strict=True)}
    )


def _normalised(items: Any) -> tuple[Any, Any]:
    """The payout ids and the block columns (``BLOCK_FIELDS``, the block's types, no nulls) of
    ``items``, ordered by payout (first seen first) and position."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    missing = [n for n in ITEM_FIELDS if n not in items.column_names]
    if missing:
        raise LedgerError(f"payout items lack the column(s) {', '.join(missing)}")
    schema = block_schema()
    columns = []
    for field in schema:
        column = items.column(field.name).combine_chunks()
        if pa.types.is_string(field.type) or pa.types.is_large_string(field.type):
            column = pc.fill_null(column.cast(pa.string()), "")
        elif column.null_count:
            raise LedgerError(f"payout items have an empty {field.name}")
        columns.append(column.cast(field.type))
    ids, codes = _payout_codes(items.column("payout_id").combine_chunks().cast(pa.string()))
    positions = np.asarray(columns[0].to_numpy(zero_copy_only=False), dtype=np.int64)
    step, moved = np.diff(codes), np.diff(positions)
    ordered = bool(np.all((step > 0) | (step == 0) & (moved > 0)))
    table = pa.Table.from_arrays(columns, schema=schema)
    if not ordered:
        order = pa.array(np.lexsort((positions, codes)))
        table, codes = table.take(order), codes[order.to_numpy()]
    return (ids, codes), table.combine_chunks()


def _payout_codes(payout_ids: Any) -> tuple[list[str], Any]:
    """The distinct payout ids in order of first appearance and each item's number among them
    (a dictionary encode's). Where each payout's items are one run (a report lists them so),
    the runs are found by comparing neighbours, without hashing every item's id."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    if len(payout_ids) > 1 and not payout_ids.null_count:
        differs = pc.not_equal(payout_ids.slice(1), payout_ids.slice(0, len(payout_ids) - 1))
        changed = np.asarray(differs.to_numpy(zero_copy_only=False), dtype=bool)
        starts = np.flatnonzero(np.r_[True, changed])
        heads = [str(i) for i in payout_ids.take(pa.array(starts)).to_pylist()]
        if len(set(heads)) == len(heads):  # no payout in two runs: a run is a payout
            sizes = np.diff(np.r_[starts, len(payout_ids)])
            return heads, np.repeat(np.arange(len(starts), dtype=np.int64), sizes)
    encoded = payout_ids.dictionary_encode()
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    return encoded.dictionary.to_pylist(), codes


def _digests(table: Any, starts: Any, ends: Any) -> list[str]:
    """:func:`items_digest` of each slice ``starts[i]:ends[i]`` of ``table`` (the block's
    columns, one chunk each), read from the Arrow buffers without copying the text."""
    import numpy as np
    import xxhash

    columns: list[Any] = []  # an integer column's array, or a text column's (offsets, bytes)
    for field in block_schema():
        column = table.column(field.name).chunk(0) if table.num_rows else None
        if column is None:
            columns.append(None)
        elif field.name in INTEGERS:
            columns.append(np.asarray(column.to_numpy(), dtype=f"<i{field.type.bit_width // 8}"))
        else:
            buffers = column.buffers()
            offsets = np.frombuffer(buffers[1], dtype="<i4")[
                column.offset : column.offset + len(column) + 1
            ]
            data = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")
            columns.append((offsets, data))
    found = []
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        digest = xxhash.xxh3_128()
        for column in columns:
            if isinstance(column, tuple):
                offsets, data = column
                ends_at = offsets[start + 1 : end + 1] - offsets[start]
                digest.update(ends_at.astype("<i4", copy=False).data)
                digest.update(data[offsets[start] : offsets[end]])
            else:
                digest.update(column[start:end].data)
        found.append(f"{DIGEST}:{digest.hexdigest()}")
    return found


def items_digest(rows: Sequence[Sequence[Any]]) -> str:
    """The digest of one payout's items given as tuples in ``BLOCK_FIELDS`` order, in Python (the
    module docstring's definition, as :class:`DigestedItems` computes it by Arrow)."""
    import xxhash

    digest = xxhash.xxh3_128()
    for index, name in enumerate(BLOCK_FIELDS):
        values = [row[index] for row in rows]
        if name in INTEGERS:
            width = 4 if INTEGERS[name] == "int32" else 8
            digest.update(b"".join(int(v).to_bytes(width, "little", signed=True) for v in values))
            continue
        texts = [str(v).encode() for v in values]
        ends, total = [], 0
        for text in texts:
            total += len(text)
            ends.append(total.to_bytes(4, "little", signed=True))
        digest.update(b"".join(ends) + b"".join(texts))
    return f"{DIGEST}:{digest.hexdigest()}"


class DigestedItems:
    """A report's items normalised and digested per payout, each payout's block encoded only
    when asked for: a payout the ledger keeps unchanged needs its digest, not its block (the
    IPC write and the compression are most of the work)."""

    def __init__(self, items: Any) -> None:
        import numpy as np

        (ids, codes), self._table = _normalised(items)
        bounds = np.flatnonzero(np.diff(codes)) + 1
        starts = np.concatenate([[0], bounds]).astype(np.int64)
        ends = np.concatenate([bounds, [len(codes)]]).astype(np.int64)
        if not len(codes):
            starts = ends = np.zeros(0, dtype=np.int64)
        digests = _digests(self._table, starts, ends)
        self._slices: dict[str, tuple[int, int, str]] = {
            str(ids[int(codes[start])]): (start, end, digest)
            for start, end, digest in zip(starts.tolist(), ends.tolist(), digests, strict=True)
        }

    def payout_ids(self) -> list[str]:
        return list(self._slices)

    def count(self, payout_id: str) -> int:
        """How many items the payout has (0: none given)."""
        start, end, _ = self._slices.get(payout_id, (0, 0, ""))
        return end - start

    def digest(self, payout_id: str) -> str:
        """The payout's :func:`items_digest` (of no items when none are given)."""
        found = self._slices.get(payout_id)
        return found[2] if found is not None else items_digest([])

    def blocks(self, payout_ids: Iterable[str]) -> dict[str, Block]:
        """The blocks of those payouts (:func:`empty_block` for one without items)."""
        import pyarrow as pa

        codec = pa.Codec("zstd")
        batches = self._table.to_batches()  # one chunk per column: _normalised combined them
        found: dict[str, Block] = {}
        for payout_id in payout_ids:
            if payout_id not in self._slices:
                found[payout_id] = empty_block()
                continue
            start, end, digest = self._slices[payout_id]
            sink = pa.BufferOutputStream()
            with pa.ipc.new_stream(sink, self._table.schema) as writer:
                writer.write_batch(batches[0].slice(start, end - start))
            data = codec.compress(sink.getvalue(), asbytes=True)
            found[payout_id] = Block(data, digest, end - start)
        return found


def encode_blocks(items: Any) -> dict[str, Block]:
    """Each payout's block of ``items`` (an Arrow table with the columns of ``ITEM_FIELDS``)."""
    digested = DigestedItems(items)
    return digested.blocks(digested.payout_ids())


def empty_block() -> Block:
    """The block of a payout without items."""
    import pyarrow as pa

    sink = pa.BufferOutputStream()
    pa.ipc.new_stream(sink, block_schema()).close()  # a schema and an end, no batch
    return Block(pa.Codec("zstd").compress(sink.getvalue(), asbytes=True), items_digest([]), 0)


def decode_blocks(blocks: Iterable[tuple[str, str, bytes]]) -> Any:
    """``(payout_id, format, block)`` rows as one Arrow table: ``payout_id`` and the block's
    columns, payout by payout in the order given. A block this billops cannot read is a
    :class:`~ledger.errors.LedgerError` naming the payout."""
    import numpy as np
    import pyarrow as pa

    schema = block_schema()
    ids: list[str] = []
    tables = []
    for payout_id, fmt, data in blocks:
        if fmt != FORMAT:
            raise LedgerError(f"payout {payout_id}: items kept as {fmt!r}, not {FORMAT!r}")
        try:
            stream = pa.input_stream(pa.py_buffer(data), compression="zstd")
            table = pa.ipc.open_stream(stream).read_all()
        except (pa.ArrowInvalid, OSError) as exc:
            raise LedgerError(
                f"payout {payout_id}: its items block cannot be read ({exc})"
            ) from exc
        if not table.schema.equals(schema):
            raise LedgerError(f"payout {payout_id}: its items block has columns {table.schema}")
        ids.append(payout_id)
        tables.append(table)
    merged = pa.concat_tables(tables) if tables else schema.empty_table()
    counts = [t.num_rows for t in tables]
    indices = pa.array(np.repeat(np.arange(len(ids), dtype=np.int32), counts))
    payout = pa.DictionaryArray.from_arrays(indices, pa.array(ids, pa.string()))
    return merged.add_column(0, "payout_id", payout.cast(pa.string())).combine_chunks()
