"""The service's bulk-import file, written from validated rows, and cut into chunks.

The file follows the contract (``payment_requests.bulk_import``): UTF-8 without BOM, comma
separated, RFC 4180 quoting, CRLF line ends, a header row, amounts ``120.50``, dates
``YYYY-MM-DD``, at most 10,000 data rows and 5 MiB. Column names come from a mapping (canonical
field → service column) because the real service's layout is not public: the contract's names by
default, another layout from settings. The same rows always give the same bytes, so a chunk's
digest (and the ledger key built from it) is stable across reruns.
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Mapping, Sequence

from tasks.common.finance_files import decimal_text
from tasks.payment_requests.model import Chunk, GoodRows, PaymentRequestRow

MAX_ROWS_PER_FILE = 10_000
MAX_FILE_BYTES = 5 * 1024 * 1024
DEFAULT_CHUNK_SIZE = 500
CURRENCY = "GBP"

# Canonical field → the contract's column, in the order they are written.
_CONTRACT_COLUMNS: dict[str, str] = {
    "external_id": "externalId",
    "customer_id": "customerId",
    "customer_external_id": "customerExternalId",
    "description": "description",
    "amount": "totalAmount",
    "currency": "currencyCode",
    "tax_rate": "taxRate",
    "reference": "reference",
    "pay_by_date": "payByDate",
}
_REQUIRED_FIELDS = ("external_id", "description", "amount")


def default_column_mapping() -> dict[str, str]:
    """Canonical field → service column, as the contract names them (a fresh, editable copy)."""
    return dict(_CONTRACT_COLUMNS)


def _checked_mapping(mapping: Mapping[str, str] | None) -> dict[str, str]:
    chosen = dict(_CONTRACT_COLUMNS if mapping is None else mapping)
    unknown = sorted(set(chosen) - set(_CONTRACT_COLUMNS))
    if unknown:
        raise ValueError(
            f"column mapping: unknown field(s) {', '.join(unknown)}; "
            f"known fields: {', '.join(_CONTRACT_COLUMNS)}"
        )
    missing = [name for name in _REQUIRED_FIELDS if not chosen.get(name)]
    if not (chosen.get("customer_id") or chosen.get("customer_external_id")):
        missing.append("customer_id or customer_external_id")
    if missing:
        raise ValueError(f"column mapping: no service column for {', '.join(missing)}")
    names = [name for name in chosen.values() if name]
    if len(names) != len(set(names)):
        raise ValueError(f"column mapping: a service column is used twice ({', '.join(names)})")
    # Keep the contract's column order whatever order the settings listed them in.
    return {name: chosen[name] for name in _CONTRACT_COLUMNS if chosen.get(name)}


def _cells(row: PaymentRequestRow, columns: Mapping[str, str]) -> dict[str, str]:
    """The row's cells by canonical field, for a layout with these columns."""
    customer_id = row.customer_id if "customer_id" in columns else None
    by_external_id = customer_id is None and row.customer_ref.kind == "external_id"
    if customer_id is None and not (by_external_id and "customer_external_id" in columns):
        raise ValueError(
            f"line {row.line}: customer {row.customer_ref.value!r} cannot be named in this "
            "layout: it needs a customer id column, or the row must give the customer's externalId"
        )
    return {
        "external_id": row.external_id,
        "customer_id": customer_id or "",
        "customer_external_id": row.customer_ref.value if by_external_id else "",
        "description": row.description,
        "amount": f"{row.amount:.2f}",
        "currency": CURRENCY,
        "tax_rate": decimal_text(row.tax_rate) if row.tax_rate is not None else "",
        "reference": row.reference or "",
        "pay_by_date": row.pay_by_date.isoformat() if row.pay_by_date else "",
    }


def write_service_csv(
    rows: Sequence[PaymentRequestRow], *, mapping: Mapping[str, str] | None = None
) -> bytes:
    """The bulk-import file for these rows: deterministic bytes for the same rows and mapping.

    The customer goes by ``customerId`` when it was resolved, else by ``customerExternalId``.
    """
    columns = _checked_mapping(mapping)
    buffer = io.StringIO(newline="")
    writer = csv.writer(buffer, lineterminator="\r\n")
    writer.writerow(columns.values())
    for row in rows:
        cells = _cells(row, columns)
        writer.writerow([cells[name] for name in columns])
    return buffer.getvalue().encode("utf-8")


def make_chunks(
    rows: Sequence[PaymentRequestRow] | GoodRows,
    *,
    size: int = DEFAULT_CHUNK_SIZE,
    mapping: Mapping[str, str] | None = None,
) -> list[Chunk]:
    """Cut the rows, in order, into bulk-import files of at most ``size`` rows.

    ``size`` must be 1..10,000 (the service's limit per file); a chunk over 5 MiB raises
    ValueError asking for a smaller size. No rows give no chunks.
    """
    if not 1 <= size <= MAX_ROWS_PER_FILE:
        raise ValueError(
            f"chunk size must be from 1 to {MAX_ROWS_PER_FILE:,} rows (the service's limit "
            f"per bulk-import file), got {size:,}"
        )
    chunks: list[Chunk] = []
    for index, start in enumerate(range(0, len(rows), size)):
        if isinstance(rows, GoodRows):
            part = tuple(rows.rows(start, min(start + size, len(rows))))
        else:
            part = tuple(rows[start : start + size])
        content = write_service_csv(part, mapping=mapping)
        if len(content) > MAX_FILE_BYTES:
            raise ValueError(
                f"chunk {index} (lines {part[0].line}-{part[-1].line}) is {len(content):,} bytes, "
                f"over the service's 5 MiB limit per file; use a smaller chunk size than {size}"
            )
        chunks.append(Chunk(index, part, content, hashlib.sha256(content).hexdigest()))
    return chunks
