"""The values passed between reading, validating, writing and reporting payment-request files."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Literal

CustomerKind = Literal["id", "external_id", "name"]


class InputFileError(Exception):
    """The file as a whole cannot be used; the message names the file and says why.

    Nothing of such a file is imported (ARCHITECTURE rule 5); the caller quarantines it.
    """


@dataclass(frozen=True)
class InputRow:
    """One data row as read, before any checks.

    ``line`` is where a person finds the row: the CSV line its record starts on, or the
    spreadsheet's row number (the header is usually line 1, so the first data row is line 2).
    ``values`` holds the raw cells by canonical column (``amount``, ``pay_by_date``...), as text.
    ``cells`` and ``header`` keep the row exactly as the file had it (every column, in order, the
    unknown ones too) so reports can hand the row back unchanged; ``columns`` says which header
    each canonical column came from, so problems name the column as the person wrote it.
    """

    line: int
    values: dict[str, str]
    cells: tuple[str, ...] = ()
    header: tuple[str, ...] = ()
    columns: Mapping[str, str] = field(default_factory=dict)

    def column_name(self, canonical: str) -> str:
        """The header this canonical column was read from (the canonical name if it was absent)."""
        return self.columns.get(canonical, canonical)


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


@dataclass(frozen=True)
class ParsedFile:
    """A file read and validated: the good rows, every problem, and how the file was read."""

    path: Path
    sha256: str
    encoding: str
    sheet: str | None
    rows: list[PaymentRequestRow]
    problems: list[RowProblem]
    total_rows: int

    @property
    def bad_lines(self) -> set[int]:
        """Lines with at least one problem (each is left out of ``rows``)."""
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
