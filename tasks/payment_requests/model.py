"""The values passed between reading, validating, writing and reporting payment-request files."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from enum import StrEnum
from pathlib import Path
from typing import Any, Literal

import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.finance_files.raw import RawTable
from tasks.common.finance_files.values import decimal_text

CustomerKind = Literal["id", "external_id", "name"]


class RowStatus(StrEnum):
    """What became of one input row, as the report says it.

    Ours: ``REJECTED`` (failed a check), ``WOULD_IMPORT`` (dry run), ``PENDING`` (its job has not
    finished; the next run settles it), ``NOT_SENT``. The service's item statuses otherwise
    (``CREATED``, ``UPDATED``, ``UNCHANGED``, ``DELETED``, ``NOT_DELETED``, ``FAILED``).
    """

    REJECTED = "REJECTED"
    WOULD_IMPORT = "WOULD_IMPORT"
    PENDING = "PENDING"
    NOT_SENT = "NOT_SENT"
    CREATED = "CREATED"
    UPDATED = "UPDATED"
    UNCHANGED = "UNCHANGED"
    DELETED = "DELETED"
    NOT_DELETED = "NOT_DELETED"
    FAILED = "FAILED"


@dataclass(frozen=True)
class CustomerRef:
    """How the row named its customer: by service id, by the customer's externalId, or by name."""

    kind: CustomerKind
    value: str


@dataclass(frozen=True)
class PaymentRequestRow:
    """A row that passed every check, in the service's terms (amounts in pounds, as Decimal)."""

    line: int
    external_id: str
    customer_ref: CustomerRef
    customer_id: str | None
    amount: Decimal
    description: str
    reference: str | None
    pay_by_date: date | None
    tax_rate: Decimal | None
    external_id_derived: bool


@dataclass(frozen=True)
class RowProblem:
    """Why one row cannot be imported: the line, the column as the file names it, the cell, why."""

    line: int
    column: str
    value: str
    reason: str

    def __str__(self) -> str:
        return f"line {self.line}, column {self.column!r} ({self.value!r}): {self.reason}"


GOOD_ROW_SCHEMA = pa.schema(
    [
        ("line", pa.int64()),
        ("external_id", pa.string()),
        ("external_id_derived", pa.bool_()),
        ("customer_id", pa.string()),
        ("customer_kind", pa.string()),
        ("customer_value", pa.string()),
        ("amount_pennies", pa.int64()),
        ("description", pa.string()),
        ("reference", pa.string()),
        ("pay_by_date", pa.date32()),
        ("tax_rate", pa.string()),
    ]
)
_PENNY = Decimal("0.01")


@dataclass(frozen=True)
class GoodRows:
    """The rows that passed every check, column by column (a million rows stay small).

    :meth:`rows` yields them as :class:`PaymentRequestRow` where code needs one at a time.
    """

    table: pa.Table

    def __len__(self) -> int:
        return int(self.table.num_rows)

    @classmethod
    def from_rows(cls, rows: list[PaymentRequestRow]) -> GoodRows:
        """The columnar form of ``rows`` (in the order given)."""
        columns: dict[str, list[object]] = {name: [] for name in GOOD_ROW_SCHEMA.names}
        for row in rows:
            columns["line"].append(row.line)
            columns["external_id"].append(row.external_id)
            columns["external_id_derived"].append(row.external_id_derived)
            columns["customer_id"].append(row.customer_id)
            columns["customer_kind"].append(row.customer_ref.kind)
            columns["customer_value"].append(row.customer_ref.value)
            columns["amount_pennies"].append(int(row.amount * 100))
            columns["description"].append(row.description)
            columns["reference"].append(row.reference)
            columns["pay_by_date"].append(row.pay_by_date)
            columns["tax_rate"].append(None if row.tax_rate is None else decimal_text(row.tax_rate))
        return cls(pa.table(columns, schema=GOOD_ROW_SCHEMA))

    def total(self) -> Decimal:
        """The rows' amounts added up, exactly (pennies, then pounds)."""
        pennies = pc.sum(self.table.column("amount_pennies")).as_py() or 0
        return (Decimal(pennies) / 100).quantize(_PENNY)

    def column(self, name: str) -> list[Any]:
        """One column as Python values."""
        return list(self.table.column(name).to_pylist())

    def rows(self, start: int = 0, stop: int | None = None) -> Iterator[PaymentRequestRow]:
        """The rows ``start:stop`` as :class:`PaymentRequestRow`."""
        part = self.table.slice(start, (stop if stop is not None else len(self)) - start)
        for values in part.to_pylist():
            tax = values["tax_rate"]
            yield PaymentRequestRow(
                line=values["line"],
                external_id=values["external_id"],
                customer_ref=CustomerRef(values["customer_kind"], values["customer_value"]),
                customer_id=values["customer_id"],
                amount=(Decimal(values["amount_pennies"]) / 100).quantize(_PENNY),
                description=values["description"],
                reference=values["reference"],
                pay_by_date=values["pay_by_date"],
                tax_rate=None if tax is None else Decimal(tax),
                external_id_derived=values["external_id_derived"],
            )


@dataclass(frozen=True)
class ParsedFile:
    """A file read and validated: the rows as read (``table``, for the report), the good rows,
    every problem, notes on rows sent with a change (a formula neutralised), and how the file
    was read."""

    path: Path
    sha256: str
    encoding: str
    sheet: str | None
    table: RawTable
    good: GoodRows
    problems: list[RowProblem]
    notes: dict[int, list[str]] = field(default_factory=dict)

    @property
    def total_rows(self) -> int:
        """Data rows in the file (blank rows not counted)."""
        return len(self.table)

    @property
    def rows(self) -> list[PaymentRequestRow]:
        """The good rows as :class:`PaymentRequestRow` (small files and tests)."""
        return list(self.good.rows())

    @property
    def bad_lines(self) -> set[int]:
        """Lines with at least one problem (each is left out of the good rows)."""
        return {problem.line for problem in self.problems}


@dataclass(frozen=True)
class RowOutcome:
    """What became of one input line: a status, the payment request it made, and any errors."""

    line: int
    status: str
    payment_request_id: str | None
    errors: tuple[str, ...]


@dataclass(frozen=True)
class Chunk:
    """A slice of the good rows as one bulk-import file; ``sha256`` is the digest of ``content``.

    ``index`` counts from 0 in file order. The same rows always give the same bytes, so the
    ledger key built from the biller and this digest is stable across reruns.
    """

    index: int
    rows: tuple[PaymentRequestRow, ...]
    content: bytes
    sha256: str
