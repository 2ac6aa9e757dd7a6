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
from collections.abc import Callable

import pyarrow as pa
import pyarrow.compute as pc

from ledger import PaymentRequestSeen
from tasks.payment_requests.model import GoodRows, PaymentRequestRow
from tasks.payment_requests.rowcheck import DERIVED_PREFIX, derive_external_id

# Text JSON writes as it is (no quote, backslash or control character to escape).
_PLAIN_JSON_TEXT = r'^[^"\\\x00-\x1f]*$'
VOID = "VOID"
HASH_BATCH = 100_000


def _pounds_text(pennies: pa.Array) -> pa.Array:
    whole = pc.divide(pennies, 100)
    fraction = pc.subtract(pennies, pc.multiply(whole, 100))
    return pc.binary_join_element_wise(
        pc.cast(whole, pa.string()), pc.utf8_lpad(pc.cast(fraction, pa.string()), 2, "0"), "."
    )


def derived_ids(good: pa.Table, biller: str) -> pa.Array:
    """The derived externalId of every row of a good-rows table (whether it has its own or not)."""
    if not good.num_rows:
        return pa.array([], pa.string())
    reference = pc.fill_null(good.column("reference"), "")
    description = good.column("description")
    customer = pc.fill_null(good.column("customer_id"), "")
    pay_by = pc.fill_null(pc.cast(good.column("pay_by_date"), pa.string()), "")
    plain = pc.and_(
        pc.and_(
            pc.match_substring_regex(reference, _PLAIN_JSON_TEXT),
            pc.match_substring_regex(description, _PLAIN_JSON_TEXT),
        ),
        pc.match_substring_regex(customer, _PLAIN_JSON_TEXT),
    )
    payload = pc.binary_join_element_wise(
        f'["{biller}","',
        customer,
        '","',
        reference,
        '","',
        _pounds_text(good.column("amount_pennies")),
        '","',
        pay_by,
        '","',
        description,
        '"]',
        "",
    )
    sha256 = hashlib.sha256
    texts = payload.cast(pa.binary())
    parts = []
    for start in range(0, len(texts), HASH_BATCH):  # a batch of Python bytes at a time
        batch = texts.slice(start, HASH_BATCH).to_pylist()
        parts.append(pa.array([DERIVED_PREFIX + sha256(t).hexdigest()[:24] for t in batch]))
    ids = pa.concat_arrays(parts)
    if '"' in biller or "\\" in biller:
        plain = pa.repeat(False, len(ids))
    odd = pc.indices_nonzero(pc.invert(plain)).to_pylist()
    if not odd:
        return ids
    fixed = ids.to_pylist()
    rows = GoodRows(good)
    for index in odd:
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
