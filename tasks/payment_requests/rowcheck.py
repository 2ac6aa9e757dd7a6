"""One row's checks, with the reason a person reads for each problem (``docs/conventions.md``
§8 Bad input).

Every problem is reported, not just the first per row: a person fixes the file once. The customer
is known (and not ambiguous), the amount is a positive number of pounds with at most 2 decimals
and within the biller's ceiling, a description is given, the pay-by date parses and is not before
today in London, the tax rate is a percentage, the currency (if given) is GBP, and text that a
spreadsheet would run as a formula is flagged (or refused, by the biller's settings).

Large files are screened column by column first (``validate.py``); only rows the screen cannot
pass are checked here, so the messages are the same whatever the file's size.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from typing import Literal, TypeVar

from tasks.common.finance_files import (
    InputRow,
    parse_amount,
    parse_currency,
    parse_date,
    parse_tax_rate,
)
from tasks.common.reports import FORMULA_PREFIXES
from tasks.payment_requests import columns as col
from tasks.payment_requests.customers import CustomerDirectory
from tasks.payment_requests.model import (
    CustomerKind,
    CustomerRef,
    PaymentRequestRow,
    RowProblem,
)

MAX_EXTERNAL_ID = 255
MAX_REFERENCE = 255
MAX_DESCRIPTION = 4000
DERIVED_PREFIX = "bo-"
_KIND_OF_COLUMN: dict[str, CustomerKind] = {
    col.CUSTOMER_ID: "id",
    col.CUSTOMER_EXTERNAL_ID: "external_id",
    col.CUSTOMER_NAME: "name",
}
T = TypeVar("T")
FormulaPolicy = Literal["flag", "reject"]


@dataclass(frozen=True)
class ImportRules:
    """The biller's rules for its files (settings ``BILLOPS_IMPORT_*``, per biller or for all).

    ``max_row_amount`` and ``max_file_amount`` are ceilings in pounds: a row above the first is
    refused, a file whose valid rows add up to more than the second is refused whole.
    ``formula_cells``: text a spreadsheet would run as a formula is ``flag``-ged in the report
    and sent with a leading apostrophe (the default), or ``reject``-ed.
    """

    max_row_amount: Decimal = Decimal("100000.00")
    max_file_amount: Decimal = Decimal("10000000.00")
    formula_cells: FormulaPolicy = "flag"


SENT_TEXT = (col.DESCRIPTION, col.REFERENCE, col.EXTERNAL_ID)


def is_formula(text: str) -> bool:
    """True for text a spreadsheet would run (``=``, ``+``, ``-``, ``@``, tab, CR first)."""
    return text.startswith(FORMULA_PREFIXES)


def derive_external_id(
    *,
    biller: str,
    customer_id: str,
    reference: str | None,
    amount: Decimal,
    pay_by_date: date | None,
    description: str,
    round_: int = 0,
) -> str:
    """``bo-`` + 24 hex digits of SHA-256 over the row's business fields (never random).

    The same row of the same biller always gets the same id, so a re-dropped file updates the
    payment requests it created. Change any of these fields and it is a new payment request.
    ``round_`` > 0 gives the row a new id when the payment request its id named was voided (an
    undone import imported again: the service does not edit a VOID request, so it is a new one).
    """
    fields = [biller, customer_id, reference or "", f"{amount:.2f}", str(pay_by_date or "")]
    extra = [f"round {round_}"] if round_ else []
    payload = json.dumps([*fields, description, *extra], ensure_ascii=False, separators=(",", ":"))
    return DERIVED_PREFIX + hashlib.sha256(payload.encode("utf-8")).hexdigest()[:24]


@dataclass
class Checked:
    """One row's parsed fields while its checks run; ``None`` where a check failed."""

    row: InputRow
    problems: list[RowProblem]
    notes: list[str] = field(default_factory=list)
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


def _check_customer(c: Checked, customers: CustomerDirectory) -> None:
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
    c: Checked, canonical: str, parse: Callable[[str], T], *, optional: bool = True
) -> T | None:
    raw = c.row.values.get(canonical, "")
    if optional and not raw:
        return None
    try:
        return parse(raw)
    except ValueError as exc:
        c.problem(canonical, str(exc))
        return None


def _check_text(c: Checked, canonical: str, limit: int, *, required: bool) -> str | None:
    raw = c.row.values.get(canonical, "")
    if not raw:
        if required:
            c.problem(canonical, f"{canonical.replace('_', ' ')} is required")
        return None
    if len(raw) > limit:
        c.problem(canonical, f"longer than {limit} characters ({len(raw)})")
        return None
    return raw


def check_row(
    row: InputRow, customers: CustomerDirectory, today: date, rules: ImportRules
) -> Checked:
    """Every check of one row (see the module docstring)."""
    c = Checked(row, [])
    _check_customer(c, customers)
    c.amount = _parse_into(c, col.AMOUNT, parse_amount, optional=False)
    if c.amount is not None and c.amount > rules.max_row_amount:
        c.problem(
            col.AMOUNT,
            f"amount £{c.amount:,.2f} is over the biller's ceiling of £{rules.max_row_amount:,.2f} "
            "per payment request (BILLOPS_IMPORT_MAX_ROW_AMOUNT)",
        )
        c.amount = None
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
    _check_formulas(c, rules.formula_cells)
    return c


def _check_formulas(c: Checked, policy: FormulaPolicy) -> None:
    for canonical in SENT_TEXT:
        raw = c.row.values.get(canonical, "")
        if not is_formula(raw):
            continue
        name = c.row.column_name(canonical)
        if policy == "reject":
            c.problem(canonical, "starts like a spreadsheet formula (=, +, -, @, tab or CR)")
        else:
            c.notes.append(f"{name} starts like a spreadsheet formula: sent with a leading '")


def neutralised(text: str | None) -> str | None:
    """Text a spreadsheet would run, with the leading apostrophe that makes it text."""
    return f"'{text}" if text is not None and is_formula(text) else text


def complete(c: Checked, biller: str) -> PaymentRequestRow | None:
    if c.problems or c.customer is None or c.amount is None or c.description is None:
        return None
    ref, customer_id = c.customer
    derived = c.external_id is None
    external_id = neutralised(c.external_id) or derive_external_id(
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
        description=neutralised(c.description) or c.description,
        reference=neutralised(c.reference),
        pay_by_date=c.pay_by_date,
        tax_rate=c.tax_rate,
        external_id_derived=derived,
    )
