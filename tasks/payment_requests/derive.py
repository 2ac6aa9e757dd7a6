"""The externalId of a row that has none, derived from its business fields (never random).

``bo-`` + 24 hex digits of SHA-256 over the JSON list ``[biller, customer id, reference, amount,
pay-by date, description]``: the same row of the same biller always gets the same id, so a
re-dropped file updates the payment requests it created. :func:`derived_ids` computes them for a
whole column at once (the JSON is assembled by Arrow kernels; only the hashing is per row); rows
whose text JSON would escape are derived one by one, so every id is exactly what
:func:`~tasks.payment_requests.rowcheck.derive_external_id` gives.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

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
_HEX_DIGITS = 24
HASH_BATCH = 200_000  # rows hashed at once (bounds the memory the hex digests take)
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


def _hashed(payload: pa.Array | pa.ChunkedArray) -> pa.Array:
    """``bo-`` + the first 24 hex digits of each payload's SHA-256, as one Arrow string array.

    SHA-256 is the one step Arrow has no kernel for, and one ``hashlib`` call per row costs a
    million rows about half a second of Python around a tenth of hashing; ``polars-hash`` runs
    the same SHA-256 (Rust's ``sha2``) over the whole column in one call (README, Benchmarks).
    Polars is imported here, not at the top, so commands that never derive an id do not pay for
    loading it. A batch at a time: the 64 hex digits of every digest exist only for one batch.
    Every id has the same width, so the ids are one fixed-width numpy block: the prefix is
    written once for all rows and each batch's first 24 digits copied under it.
    """
    import polars as pl
    import polars_hash  # noqa: F401  (registers the ``chash`` namespace on polars expressions)

    count, width = len(payload), len(DERIVED_PREFIX) + _HEX_DIGITS
    ids = np.empty((count, width), dtype=np.uint8)
    ids[:, : len(DERIVED_PREFIX)] = np.frombuffer(DERIVED_PREFIX.encode("ascii"), np.uint8)
    digest = pl.col("payload").chash.sha2_256()
    for start in range(0, count, HASH_BATCH):
        texts = pl.from_arrow(payload.slice(start, HASH_BATCH), rechunk=False)
        assert isinstance(texts, pl.Series)
        hexes = texts.to_frame("payload").select(digest).to_series().to_arrow()
        ids[start : start + len(hexes), len(DERIVED_PREFIX) :] = _leading_digits(hexes)
    offsets = np.arange(0, (count + 1) * width, width, dtype=np.int32)
    return pa.StringArray.from_buffers(count, pa.py_buffer(offsets), pa.py_buffer(ids))


def _leading_digits(hexes: pa.Array) -> np.ndarray[Any, np.dtype[np.uint8]]:
    """The first ``_HEX_DIGITS`` bytes of each 64-digit hex digest, as an (n, 24) numpy view."""
    if not (pa.types.is_string(hexes.type) or pa.types.is_large_string(hexes.type)):
        hexes = hexes.cast(pa.large_string())  # a string view, should Polars hand one over
    _, offsets, data = hexes.buffers()
    kind = np.int64 if pa.types.is_large_string(hexes.type) else np.int32
    ends = np.frombuffer(offsets, kind)[hexes.offset : hexes.offset + len(hexes) + 1]
    if hexes.null_count or (np.diff(ends) != 64).any():
        raise ValueError("polars-hash gave a digest that is not 64 hex digits")
    return np.frombuffer(data, np.uint8)[ends[0] : ends[-1]].reshape(-1, 64)[:, :_HEX_DIGITS]


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
