"""The externalId of a row that has none, derived from its business fields (never random).

``bo-`` + 24 hex digits of SHA-256 over the JSON list ``[biller, customer id, reference, amount,
pay-by date, description]``: the same row of the same biller always gets the same id, so a
re-dropped file updates the payment requests it created. :func:`derived_ids` computes them for a
whole column at once (the JSON is assembled by Arrow kernels; only the hashing is per row); rows
whose text JSON would escape are derived one by one, so every id is exactly what
:func:`~tasks.payment_requests.rowcheck.derive_external_id` gives.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ledger import PaymentRequestSeen
from tasks.payment_requests.model import GoodRows, PaymentRequestRow
from tasks.payment_requests.rowcheck import DERIVED_PREFIX, derive_external_id

# Text JSON writes as it is (no quote, backslash or control character to escape).
_PLAIN_JSON_TEXT = r'^[^"\\\x00-\x1f]*$'
# Every byte but those: deleting them from a column's bytes leaves only what JSON escapes.
_PLAIN_BYTES = bytes(b for b in range(256) if b >= 0x20 and b not in b'"\\')
VOID = "VOID"
HASH_BATCH = 100_000  # rows whose payload is Python bytes at once (bounds the memory it takes)
_HEX_DIGITS = 24
_CENTS = pa.array([f".{cents:02d}" for cents in range(100)], pa.string())


def _pounds_text(pennies: pa.Array) -> tuple[pa.Array, pa.Array]:
    """``f"{amount:.2f}"`` of positive pennies, as the whole pounds and the ``.pp`` part."""
    values = pennies.to_numpy(zero_copy_only=False)
    whole = pc.cast(pa.array(values // 100), pa.string())
    return whole, pc.take(_CENTS, pa.array(values % 100))


def _date_text(dates: pa.ChunkedArray | pa.Array) -> pa.Array:
    """ISO dates as text, "" where none: a file holds few distinct dates, so each is cast once."""
    distinct = pc.unique(dates)
    text = pc.take(pc.cast(distinct, pa.string()), pc.index_in(dates, value_set=distinct))
    return pc.fill_null(text, "")


def _plain(column: pa.ChunkedArray | pa.Array) -> pa.Array | bool:
    """True when no value of the column needs escaping in JSON, else which values do not.

    One pass over the column's bytes decides the usual case; only a column that has a quote, a
    backslash or a control character somewhere is matched value by value.
    """
    chunks = column.chunks if isinstance(column, pa.ChunkedArray) else [column]
    for chunk in chunks:
        data = chunk.buffers()[2] if chunk.type == pa.string() else None
        if data is None or data.to_pybytes().translate(None, _PLAIN_BYTES):
            return pc.match_substring_regex(column, _PLAIN_JSON_TEXT)
    return True


def _ids_of_digests(digests: bytes) -> pa.Array:
    """``bo-`` + the first 24 hex digits of each 32-byte digest, as one Arrow string array."""
    count = len(digests) // 32
    head = np.frombuffer(digests, np.uint8).reshape(count, 32)[:, : _HEX_DIGITS // 2]
    hex_digits = head.tobytes().hex().encode("ascii")
    prefix = len(DERIVED_PREFIX)
    width = prefix + _HEX_DIGITS
    text = np.empty((count, width), np.uint8)
    text[:, :prefix] = np.frombuffer(DERIVED_PREFIX.encode("ascii"), np.uint8)
    text[:, prefix:] = np.frombuffer(hex_digits, np.uint8).reshape(count, _HEX_DIGITS)
    offsets = np.arange(0, width * (count + 1), width, dtype=np.int32)
    return pa.Array.from_buffers(
        pa.string(), count, [None, pa.py_buffer(offsets), pa.py_buffer(text)]
    )


def _hashed(payload: pa.Array) -> pa.Array:
    # SHA-256 is the one step Arrow has no kernel for: one C call per row, nothing else per row.
    sha256 = hashlib.sha256
    texts = payload.cast(pa.binary())
    digests = []
    for start in range(0, len(texts), HASH_BATCH):
        digests.append(
            b"".join([sha256(t).digest() for t in texts.slice(start, HASH_BATCH).to_pylist()])
        )
    return _ids_of_digests(b"".join(digests))


def derived_ids(good: pa.Table, biller: str) -> pa.Array:
    """The derived externalId of every row of a good-rows table (whether it has its own or not)."""
    if not good.num_rows:
        return pa.array([], pa.string())
    reference = pc.fill_null(good.column("reference"), "")
    description = good.column("description")
    customer = pc.fill_null(good.column("customer_id"), "")
    pounds, pence = _pounds_text(good.column("amount_pennies"))
    payload = pc.binary_join_element_wise(
        "[" + json.dumps(biller, ensure_ascii=False) + ',"',
        customer,
        '","',
        reference,
        '","',
        pounds,
        pence,
        '","',
        _date_text(good.column("pay_by_date")),
        '","',
        description,
        '"]',
        "",
    )
    ids = _hashed(payload)
    masks = [_plain(column) for column in (reference, description, customer)]
    partial = [mask for mask in masks if mask is not True]
    if not partial:
        return ids
    plain = partial[0]
    for mask in partial[1:]:
        plain = pc.and_(plain, mask)
    fixed = ids.to_pylist()
    rows = GoodRows(good)
    for index in pc.indices_nonzero(pc.invert(plain)).to_pylist():
        fixed[index] = _derive(next(rows.rows(index, index + 1)), biller)
    return pa.array(fixed, pa.string())


def _derive(row: PaymentRequestRow, biller: str, round_: int = 0) -> str:
    return derive_external_id(
        biller=biller,
        customer_id=row.customer_id or "",
        reference=row.reference,
        amount=row.amount,
        pay_by_date=row.pay_by_date,
        description=row.description,
        round_=round_,
    )


def next_round_id(
    row: PaymentRequestRow,
    biller: str,
    look_up: Callable[[str], PaymentRequestSeen | None],
    limit: int = 100,
) -> str:
    """The first derived id of the row, round 1 on, whose payment request is not VOID."""
    for round_ in range(1, limit + 1):
        candidate = _derive(row, biller, round_)
        seen = look_up(candidate)
        if seen is None or seen.status != VOID:
            return candidate
    raise ValueError(
        f"line {row.line}: {limit} rounds of this row were voided; give it an External ID"
    )
