"""Checking rows one by one, then across the file, before anything is sent (ARCHITECTURE rule 5).

Every problem is reported, not just the first per row: a person fixes the file once. Row checks:
the customer is known (and not ambiguous), the amount is a positive number of pounds with at most
2 decimals, a description is given, the pay-by date parses and is not before today in London, the
tax rate is a percentage, the currency (if given) is GBP. File checks: a reference used on more
than one row fails every such row; a reference already imported earlier fails unless it belongs
to this very row's externalId (the same payment request again, which the service updates); an
externalId on more than one row fails every such row, as the service would.

A row without an externalId gets one derived from its business fields (see
:func:`derive_external_id`), so re-dropping the same file updates rather than duplicates.
"""

from __future__ import annotations

import hashlib
import json
from collections import defaultdict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import TypeVar

from tasks.payment_request_files import _columns as col
from tasks.payment_request_files._customers import CustomerDirectory
from tasks.payment_request_files._model import (
    CustomerKind,
    CustomerRef,
    InputRow,
    ParsedFile,
    PaymentRequestRow,
    RowProblem,
)
from tasks.payment_request_files._read import load_file
from tasks.payment_request_files._values import (
    parse_amount,
    parse_currency,
    parse_date,
    parse_tax_rate,
)

MAX_EXTERNAL_ID = 255
MAX_REFERENCE = 255
MAX_DESCRIPTION = 4000
DERIVED_PREFIX = "bo-"
_NO_REFERENCES: Mapping[str, str] = {}
_KIND_OF_COLUMN: dict[str, CustomerKind] = {
    col.CUSTOMER_ID: "id",
    col.CUSTOMER_EXTERNAL_ID: "external_id",
    col.CUSTOMER_NAME: "name",
}
T = TypeVar("T")


def derive_external_id(
    *,
    biller: str,
    customer_id: str,
    reference: str | None,
    amount: Decimal,
    pay_by_date: date | None,
    description: str,
) -> str:
    """``bo-`` + 24 hex digits of SHA-256 over the row's business fields (never random).

    The same row of the same biller always gets the same id, so a re-dropped file updates the
    payment requests it created. Change any of these fields and it is a new payment request.
    """
    fields = [biller, customer_id, reference or "", f"{amount:.2f}", str(pay_by_date or "")]
    payload = json.dumps([*fields, description], ensure_ascii=False, separators=(",", ":"))
    return DERIVED_PREFIX + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


@dataclass
class _Checked:
    """One row's parsed fields while its checks run; ``None`` where a check failed."""

    row: InputRow
    problems: list[RowProblem]
    customer: tuple[CustomerRef, str] | None = None
    amount: Decimal | None = None
    description: str | None = None
    reference: str | None = None
    pay_by_date: date | None = None
    tax_rate: Decimal | None = None
    external_id: str | None = None

    def problem(self, canonical: str, reason: str) -> None:
        """Record a problem with this row's cell of ``canonical``, named as the file names it."""
        raw = self.row.values.get(canonical, "")
        self.problems.append(
            RowProblem(self.row.line, self.row.column_name(canonical), raw, reason)
        )


def _check_customer(c: _Checked, customers: CustomerDirectory) -> None:
    values = c.row.values
    given = [(name, values[name]) for name in col.CUSTOMER_COLUMNS if values.get(name)]
    if not given:
        present = next((n for n in col.CUSTOMER_COLUMNS if n in c.row.columns), col.CUSTOMER)
        c.problem(present, "customer is required")
        return
    resolved: list[tuple[CustomerRef, str]] = []
    for name, raw in given:
        try:
            if name == col.CUSTOMER:
                kind, customer_id = customers.resolve_any(raw)
            else:
                kind = _KIND_OF_COLUMN[name]
                customer_id = customers.resolve(kind, raw)
        except ValueError as exc:
            c.problem(name, str(exc))
            continue
        resolved.append((CustomerRef(kind, raw), customer_id))
    if len({customer_id for _, customer_id in resolved}) > 1:
        names = " and ".join(repr(c.row.column_name(name)) for name, _ in given)
        c.problem(given[0][0], f"{names} name different customers")
    elif resolved and len(resolved) == len(given):
        c.customer = resolved[0]


def _parse_into(
    c: _Checked, canonical: str, parse: Callable[[str], T], *, optional: bool = True
) -> T | None:
    raw = c.row.values.get(canonical, "")
    if optional and not raw:
        return None
    try:
        return parse(raw)
    except ValueError as exc:
        c.problem(canonical, str(exc))
        return None


def _check_text(c: _Checked, canonical: str, limit: int, *, required: bool) -> str | None:
    raw = c.row.values.get(canonical, "")
    if not raw:
        if required:
            c.problem(canonical, f"{canonical.replace('_', ' ')} is required")
        return None
    if len(raw) > limit:
        c.problem(canonical, f"longer than {limit} characters ({len(raw)})")
        return None
    return raw


def _check_row(row: InputRow, customers: CustomerDirectory, today: date) -> _Checked:
    c = _Checked(row, [])
    _check_customer(c, customers)
    c.amount = _parse_into(c, col.AMOUNT, parse_amount, optional=False)
    c.description = _check_text(c, col.DESCRIPTION, MAX_DESCRIPTION, required=True)
    c.reference = _check_text(c, col.REFERENCE, MAX_REFERENCE, required=False)
    c.external_id = _check_text(c, col.EXTERNAL_ID, MAX_EXTERNAL_ID, required=False)
    pay_by = _parse_into(c, col.PAY_BY_DATE, parse_date)
    if pay_by is not None and pay_by < today:
        reason = (
            f"pay-by date {pay_by:%d/%m/%Y} is in the past (today is {today:%d/%m/%Y} in London)"
        )
        c.problem(col.PAY_BY_DATE, reason)
    else:
        c.pay_by_date = pay_by
    c.tax_rate = _parse_into(c, col.TAX_RATE, parse_tax_rate)
    _parse_into(c, col.CURRENCY, parse_currency)
    extra = [cell for cell in row.cells[len(row.header) :] if cell.strip()]
    if row.header and extra:
        c.problems.append(
            RowProblem(
                row.line,
                f"column {len(row.header) + 1}",
                extra[0],
                f"the row has {len(row.cells)} cells but the header has only "
                f"{len(row.header)} columns (a stray delimiter?)",
            )
        )
    return c


def _complete(c: _Checked, biller: str) -> PaymentRequestRow | None:
    if c.problems or c.customer is None or c.amount is None or c.description is None:
        return None
    ref, customer_id = c.customer
    derived = c.external_id is None
    external_id = c.external_id or derive_external_id(
        biller=biller,
        customer_id=customer_id,
        reference=c.reference,
        amount=c.amount,
        pay_by_date=c.pay_by_date,
        description=c.description,
    )
    return PaymentRequestRow(
        line=c.row.line,
        external_id=external_id,
        customer_ref=ref,
        customer_id=customer_id,
        amount=c.amount,
        description=c.description,
        reference=c.reference,
        pay_by_date=c.pay_by_date,
        tax_rate=c.tax_rate,
        external_id_derived=derived,
    )


def _others(lines: list[int], line: int) -> str:
    rest = [str(n) for n in lines if n != line]
    return ", ".join(rest[:10]) + (f" and {len(rest) - 10} more" if len(rest) > 10 else "")


def _reference_problems(
    checked: list[_Checked], candidates: dict[int, PaymentRequestRow], known: Mapping[str, str]
) -> None:
    lines_by_reference: dict[str, list[int]] = defaultdict(list)
    for c in checked:
        if c.reference:
            lines_by_reference[c.reference].append(c.row.line)
    for c in checked:
        if not c.reference:
            continue
        lines = lines_by_reference[c.reference]
        if len(lines) > 1:
            c.problem(
                col.REFERENCE, f"duplicate reference: also on line {_others(lines, c.row.line)}"
            )
        if c.reference in known:
            note = known[c.reference]
            row = candidates.get(c.row.line)
            own_id = c.external_id or (row.external_id if row is not None else None)
            if own_id is not None and note == own_id:
                continue  # the same payment request again: the service updates it
            where = f" ({note})" if note else ""
            c.problem(col.REFERENCE, f"reference was already imported earlier{where}")


def _row_key(c: _Checked, candidates: dict[int, PaymentRequestRow]) -> str | None:
    """The row's externalId: its own, else the derived one (rows that passed their checks)."""
    row = candidates.get(c.row.line)
    return c.external_id or (row.external_id if row is not None else None)


def _external_id_problems(
    checked: list[_Checked], candidates: dict[int, PaymentRequestRow]
) -> None:
    lines_by_id: dict[str, list[int]] = defaultdict(list)
    keys = {c.row.line: _row_key(c, candidates) for c in checked}
    for line, key in keys.items():
        if key:
            lines_by_id[key].append(line)
    for c in checked:
        key = keys[c.row.line]
        if not key or len(lines_by_id[key]) == 1:
            continue
        others = _others(lines_by_id[key], c.row.line)
        if c.external_id:
            c.problem(col.EXTERNAL_ID, f"duplicate externalId: also on line {others}")
        else:
            c.problems.append(
                RowProblem(
                    c.row.line,
                    "externalId (derived)",
                    key,
                    "same customer, reference, amount, pay-by date and description as line "
                    f"{others}: a duplicated row? (give each row its own External ID if both are "
                    "meant)",
                )
            )


def validate_rows(
    rows: list[InputRow],
    *,
    customers: CustomerDirectory,
    today: date,
    already_imported_references: Mapping[str, str] = _NO_REFERENCES,
    biller: str,
) -> tuple[list[PaymentRequestRow], list[RowProblem]]:
    """The rows that pass every check, and every problem found (sorted by line).

    ``today`` is today's date in Europe/London (the caller's clock, so tests pin it).
    ``already_imported_references`` maps a reference already on the biller's payment requests to a
    note on where/when, or to the externalId of the payment request carrying it: a row with that
    same externalId is that payment request again (an update) and is not a problem.
    """
    checked = [_check_row(row, customers, today) for row in rows]
    candidates = {
        row.line: row for row in (_complete(c, biller) for c in checked) if row is not None
    }
    _reference_problems(checked, candidates, already_imported_references)
    _external_id_problems(checked, candidates)
    good = [candidates[c.row.line] for c in checked if not c.problems and c.row.line in candidates]
    problems = sorted((p for c in checked for p in c.problems), key=lambda p: p.line)
    return good, problems


def parse_payment_request_file(
    path: Path,
    *,
    customers: CustomerDirectory,
    today: date,
    biller: str,
    sheet: str | None = None,
    already_imported_references: Mapping[str, str] = _NO_REFERENCES,
) -> ParsedFile:
    """Read and validate a file: raises :class:`InputFileError` when it is unusable as a whole."""
    loaded = load_file(path, sheet=sheet)
    good, problems = validate_rows(
        loaded.rows,
        customers=customers,
        today=today,
        already_imported_references=already_imported_references,
        biller=biller,
    )
    return ParsedFile(
        path=path,
        sha256=loaded.sha256,
        encoding=loaded.encoding,
        sheet=loaded.sheet,
        rows=good,
        problems=problems,
        total_rows=len(loaded.rows),
    )
