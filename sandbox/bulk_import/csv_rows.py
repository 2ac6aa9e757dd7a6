"""The bulk-import CSV file: reading it as a whole, and checking each row (pure functions).

The format is the contract's (``POST /payment_requests/bulk_import``): UTF-8 (a BOM is
tolerated), comma separated, RFC 4180 quoting, a header row, at most 10,000 data rows and 5 MiB.
Header names are case-sensitive, in any order; unknown columns are ignored. A file that cannot be
read as a whole raises :class:`FileError` (the job fails and no row is applied); a bad row only
fails itself.
"""

from __future__ import annotations

import csv
import io
import re
from collections import Counter
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal, InvalidOperation

from sandbox.core.errors import BAD_REQUEST, VALIDATION_ERROR
from sandbox.core.money import parse_amount

MAX_FILE_BYTES = 5 * 1024 * 1024
MAX_ROWS = 10_000
REQUIRED_COLUMNS = ("externalId", "description", "totalAmount")
CUSTOMER_COLUMNS = ("customerId", "customerExternalId")
# Limits of the payment request's own fields (the table's column sizes).
MAX_EXTERNAL_ID = 255
MAX_DESCRIPTION = 4000  # as PaymentRequestCreate.description
MAX_REFERENCE = 255
# Amounts are stored as whole pennies in a 64-bit column; a sane cap keeps far from overflow [I].
MAX_AMOUNT = Decimal("1000000000.00")
_DATE = re.compile(r"^\d{4}-\d{2}-\d{2}$")


def error(type_: str, detail: str, field: str | None = None) -> dict[str, str]:
    """An ``ErrorItem`` of the contract."""
    item = {"type": type_, "detail": detail}
    if field:
        item["field"] = field
    return item


class FileError(Exception):
    """The file cannot be read as a whole; ``errors`` says why."""

    def __init__(self, errors: list[dict[str, str]]) -> None:
        super().__init__("; ".join(e["detail"] for e in errors))
        self.errors = errors


@dataclass
class Row:
    """One data row: ``number`` 1 = the first data row; ``values`` by column name."""

    number: int
    values: dict[str, str]
    errors: list[dict[str, str]] = field(default_factory=list)

    @property
    def external_id(self) -> str | None:
        value = self.values.get("externalId", "").strip()
        return value or None


@dataclass(frozen=True)
class RowData:
    """A row that passed its checks, in the payment request's terms."""

    external_id: str
    customer_id: str | None
    customer_external_id: str | None
    description: str
    total_amount: Decimal
    currency_code: str
    tax_rate: Decimal | None
    reference: str | None
    pay_by_date: date | None


def _decode(content: bytes) -> str:
    try:
        return content.decode("utf-8-sig")
    except UnicodeDecodeError as exc:
        raise FileError(
            [error(BAD_REQUEST, f"the file is not UTF-8 (byte {exc.start})", "inputFile")]
        ) from exc


def _header(record: list[str]) -> list[str]:
    names = [name.strip() for name in record]
    if not any(names):
        raise FileError([error(BAD_REQUEST, "the file has no header row", "inputFile")])
    problems = [
        error(VALIDATION_ERROR, f"the column {name!r} appears more than once", name)
        for name, count in Counter(names).items()
        if name and count > 1
    ]
    problems += [
        error(VALIDATION_ERROR, f"the required column {name!r} is missing", name)
        for name in REQUIRED_COLUMNS
        if name not in names
    ]
    if not any(name in names for name in CUSTOMER_COLUMNS):
        problems.append(
            error(
                VALIDATION_ERROR,
                "a customerId or customerExternalId column is required",
                "customerId",
            )
        )
    if problems:
        raise FileError(problems)
    return names


def read_rows(content: bytes) -> list[Row]:
    """The data rows of the file (blank lines skipped), or :class:`FileError`."""
    if len(content) > MAX_FILE_BYTES:
        raise FileError([error(BAD_REQUEST, "the file is larger than 5 MiB", "inputFile")])
    reader = csv.reader(io.StringIO(_decode(content), newline=""), strict=True)
    try:
        records = list(reader)
    except csv.Error as exc:
        raise FileError(
            [error(BAD_REQUEST, f"CSV line {reader.line_num}: {exc}", "inputFile")]
        ) from exc
    if not records:
        raise FileError([error(BAD_REQUEST, "the file is empty (no header row)", "inputFile")])
    names = _header(records[0])
    rows: list[Row] = []
    for record in records[1:]:
        if not any(value.strip() for value in record):
            continue
        row = Row(number=len(rows) + 1, values=dict(zip(names, record, strict=False)))
        row.values.pop("", None)
        if len(record) != len(names):
            row.errors.append(
                error(
                    VALIDATION_ERROR,
                    f"the row has {len(record)} fields; the header has {len(names)}",
                )
            )
        rows.append(row)
        if len(rows) > MAX_ROWS:
            raise FileError(
                [error(BAD_REQUEST, f"the file has more than {MAX_ROWS} data rows", "inputFile")]
            )
    return rows


def duplicate_external_ids(rows: list[Row]) -> set[str]:
    """External ids that more than one row of the file carries (every such row fails)."""
    counts = Counter(row.external_id for row in rows if row.external_id)
    return {external_id for external_id, count in counts.items() if count > 1}


def _text(
    values: dict[str, str],
    name: str,
    limit: int,
    errors: list[dict[str, str]],
    *,
    required: bool = False,
) -> str | None:
    value = values.get(name, "").strip()
    if not value:
        if required:
            errors.append(error(VALIDATION_ERROR, f"{name} is required", name))
        return None
    if len(value) > limit:
        errors.append(error(VALIDATION_ERROR, f"{name} is longer than {limit} characters", name))
        return None
    return value


def _amount(values: dict[str, str], errors: list[dict[str, str]]) -> Decimal | None:
    raw = values.get("totalAmount", "").strip()
    if not raw:
        errors.append(error(VALIDATION_ERROR, "totalAmount is required", "totalAmount"))
        return None
    try:
        amount = parse_amount(raw, field="totalAmount")
    except ValueError as exc:
        errors.append(error(VALIDATION_ERROR, str(exc), "totalAmount"))
        return None
    if amount > MAX_AMOUNT:
        errors.append(error(VALIDATION_ERROR, f"totalAmount exceeds {MAX_AMOUNT}", "totalAmount"))
        return None
    return amount


def _tax_rate(values: dict[str, str], errors: list[dict[str, str]]) -> Decimal | None:
    raw = values.get("taxRate", "").strip()
    if not raw:
        return None
    try:
        rate = Decimal(raw)
    except InvalidOperation:
        rate = Decimal("NaN")
    if not rate.is_finite() or not 0 <= rate <= 100:
        errors.append(error(VALIDATION_ERROR, "taxRate must be a percentage 0-100", "taxRate"))
        return None
    return rate


def _pay_by_date(values: dict[str, str], errors: list[dict[str, str]]) -> date | None:
    raw = values.get("payByDate", "").strip()
    if not raw:
        return None
    try:
        if not _DATE.match(raw):
            raise ValueError(raw)
        return date.fromisoformat(raw)
    except ValueError:
        errors.append(error(VALIDATION_ERROR, "payByDate must be a date YYYY-MM-DD", "payByDate"))
        return None


def _currency(values: dict[str, str], errors: list[dict[str, str]]) -> str:
    code = values.get("currencyCode", "").strip() or "GBP"
    if code != "GBP":
        errors.append(error(VALIDATION_ERROR, "only GBP is accepted", "currencyCode"))
    return code


def check_row(row: Row) -> tuple[RowData | None, list[dict[str, str]]]:
    """The row's data, or every rule it breaks (``field`` names the CSV column)."""
    values, errors = row.values, list(row.errors)
    external_id = _text(values, "externalId", MAX_EXTERNAL_ID, errors, required=True)
    customer_id = _text(values, "customerId", MAX_EXTERNAL_ID, errors)
    customer_external_id = _text(values, "customerExternalId", MAX_EXTERNAL_ID, errors)
    if (
        customer_id is None
        and customer_external_id is None
        and not any(e.get("field") in CUSTOMER_COLUMNS for e in errors)
    ):
        errors.append(
            error(VALIDATION_ERROR, "customerId or customerExternalId is required", "customerId")
        )
    description = _text(values, "description", MAX_DESCRIPTION, errors, required=True)
    amount = _amount(values, errors)
    currency = _currency(values, errors)
    tax_rate = _tax_rate(values, errors)
    reference = _text(values, "reference", MAX_REFERENCE, errors)
    pay_by = _pay_by_date(values, errors)
    if errors or external_id is None or description is None or amount is None:
        return None, errors
    data = RowData(
        external_id=external_id,
        customer_id=customer_id,
        customer_external_id=customer_external_id,
        description=description,
        total_amount=amount,
        currency_code=currency,
        tax_rate=tax_rate,
        reference=reference,
        pay_by_date=pay_by,
    )
    return data, []
