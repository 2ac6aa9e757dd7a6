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

``items_digest`` is SHA-256 over the items as text: each item's fields in :data:`BLOCK_FIELDS`
order written as text (integers in decimal) and joined by U+001F, then the items' end offsets
in bytes (little-endian int32, from 0) and all the items' UTF-8 bytes. The same items in the same
order give the same digest whatever wrote them (a report, the migration that built the blocks).

pyarrow is imported on use: the ledger's other commands (status, audit) do not need it.
"""

from __future__ import annotations

import hashlib
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from ledger.errors import LedgerError
from ledger.payouts import ITEM_FIELDS

FORMAT = "arrow-ipc-zstd/1"
BLOCK_FIELDS = ITEM_FIELDS[1:]  # the payout's id is its row's
INTEGERS = {"position": "int32", "amount_pennies": "int64"}
SEPARATOR = "\x1f"


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
    ids = items.column("payout_id").combine_chunks().cast(pa.string()).dictionary_encode()
    codes = np.asarray(ids.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    positions = np.asarray(columns[0].to_numpy(zero_copy_only=False), dtype=np.int64)
    step, moved = np.diff(codes), np.diff(positions)
    ordered = bool(np.all((step > 0) | (step == 0) & (moved > 0)))
    table = pa.Table.from_arrays(columns, schema=schema)
    if not ordered:
        order = pa.array(np.lexsort((positions, codes)))
        table, codes = table.take(order), codes[order.to_numpy()]
    return (ids.dictionary.to_pylist(), codes), table.combine_chunks()


def _digests(table: Any, starts: Any, ends: Any) -> list[str]:
    """:func:`items_digest` of each slice of ``table`` (see the module docstring), by Arrow."""
    import numpy as np
    import pyarrow as pa
    import pyarrow.compute as pc

    texts = [table.column(n).cast(pa.string()) for n in BLOCK_FIELDS]
    joined = pc.binary_join_element_wise(*texts, SEPARATOR).combine_chunks()
    buffers = joined.buffers()
    offsets = np.frombuffer(buffers[1], dtype=np.int32)[
        joined.offset : joined.offset + len(joined) + 1
    ]
    data = memoryview(buffers[2]) if buffers[2] is not None else memoryview(b"")
    found = []
    for start, end in zip(starts.tolist(), ends.tolist(), strict=True):
        digest = hashlib.sha256()
        ends_at = offsets[start + 1 : end + 1] - offsets[start]
        digest.update(ends_at.astype("<i4").tobytes())
        digest.update(data[offsets[start] : offsets[end]])
        found.append(digest.hexdigest())
    return found


def items_digest(rows: Sequence[Sequence[Any]]) -> str:
    """The digest of one payout's items given as tuples in ``BLOCK_FIELDS`` order, in Python (the
    module docstring's definition, as :func:`encode_blocks` computes it by Arrow)."""
    texts = [SEPARATOR.join(str(value) for value in row).encode() for row in rows]
    ends, total = [], 0
    for text in texts:
        total += len(text)
        ends.append(total.to_bytes(4, "little", signed=True))
    return hashlib.sha256(b"".join(ends) + b"".join(texts)).hexdigest()


def encode_blocks(items: Any) -> dict[str, Block]:
    """Each payout's block of ``items`` (an Arrow table with the columns of ``ITEM_FIELDS``)."""
    import numpy as np
    import pyarrow as pa

    (ids, codes), table = _normalised(items)
    if not len(codes):
        return {}
    bounds = np.flatnonzero(np.diff(codes)) + 1
    starts = np.concatenate([[0], bounds])
    ends = np.concatenate([bounds, [len(codes)]])
    digests = _digests(table, starts, ends)
    codec = pa.Codec("zstd")
    (batch,) = table.to_batches()  # one chunk per column: _normalised combined them
    found: dict[str, Block] = {}
    for start, end, digest in zip(starts.tolist(), ends.tolist(), digests, strict=True):
        sink = pa.BufferOutputStream()
        with pa.ipc.new_stream(sink, table.schema) as writer:
            writer.write_batch(batch.slice(start, end - start))
        data = codec.compress(sink.getvalue(), asbytes=True)
        found[str(ids[int(codes[start])])] = Block(data, digest, end - start)
    return found


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
