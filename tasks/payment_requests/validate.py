"""Checking a payment-request file before anything is sent: every row, then the file as a whole
(``docs/conventions.md`` §8 Bad input).

Rows are screened column by column (``screen.py``); rows the screen cannot pass are checked one
by one (``rowcheck.py``) for their exact reasons. Then the file as a whole, against itself and
against what the ledger knows of the biller's payment requests (``known.py``):

- a reference on more than one row fails every such row; a reference a payment request of the
  biller already carries fails, unless that payment request is this row's own (same externalId,
  an update) or was voided;
- an externalId on more than one row fails every such row, as the service would; a given
  externalId whose payment request was voided fails (the service edits no VOID request: give a
  new one);
- a row with neither reference nor externalId that looks like an edit of a payment request an
  earlier import made (same customer and description, another amount or pay-by date) fails:
  without a key of its own it would become a second payment request, not a correction;
- the valid rows together may not pass the biller's ceiling per file.

A row without an externalId gets one derived from its business fields (``derive.py``), so
re-dropping the same file updates rather than duplicates; if the payment request that id names
was voided (an undone import), the row is a new payment request and gets the next id.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ledger import PaymentRequestSeen
from tasks.common.finance_files import LoadedTable, load_table
from tasks.common.finance_files.raw import RawTable
from tasks.payment_requests import columns as col
from tasks.payment_requests import repeats
from tasks.payment_requests.customers import CustomerDirectory
from tasks.payment_requests.derive import derived_ids, next_round_id
from tasks.payment_requests.known import KnownPaymentRequests
from tasks.payment_requests.model import (
    GOOD_ROW_SCHEMA,
    GoodRows,
    ParsedFile,
    PaymentRequestRow,
    RowProblem,
)
from tasks.payment_requests.rowcheck import ImportRules, check_row, complete
from tasks.payment_requests.screen import Screened, pounds, screen

VOID = "VOID"


def read_payment_request_file(path: Path, *, sheet: str | None = None) -> LoadedTable:
    """The rows of a CSV or XLSX payment-request file, or :class:`InputFileError` saying why."""
    return load_table(path, col.SPEC, sheet=sheet)


@dataclass
class _Candidates:
    """Rows that passed their own checks, before the file's checks; and every row's key facts."""

    good: pa.Table
    # Every row's reference that passed its own check (rows with other problems too).
    reference_lines: pa.Array = field(default_factory=lambda: pa.array([], pa.int64()))
    references: pa.Array = field(default_factory=lambda: pa.array([], pa.string()))
    problems: list[RowProblem] = field(default_factory=list)
    notes: dict[int, list[str]] = field(default_factory=dict)


def _clean_rows(table: RawTable, screened: Screened, biller: str) -> pa.Table:
    """The rows the screen passed, as good-row columns (externalIds derived where not given)."""
    keep = pa.array(~screened.suspect)
    everything = not screened.suspect.any()  # the usual large file: nothing to filter out

    def kept(column: pa.Array) -> pa.Array:
        return column if everything else pc.filter(column, keep)

    given = kept(screened.external_id)
    part = pa.table(
        {
            "line": kept(table.lines),
            "external_id": given,
            "external_id_derived": pc.is_null(given),
            "customer_id": kept(screened.customer_id),
            "customer_kind": kept(screened.customer_kind),
            "customer_value": kept(screened.customer_value),
            "amount_pennies": kept(screened.amount_pennies),
            "description": kept(screened.description),
            "reference": kept(screened.reference),
            "pay_by_date": kept(screened.pay_by_date),
            "tax_rate": kept(screened.tax_rate),
        },
        schema=GOOD_ROW_SCHEMA,
    )
    if given.null_count == len(given):  # no externalId column, or none filled in
        ids = derived_ids(part, biller)
    else:
        # Only rows without an externalId of their own are hashed (the costly step).
        missing = pc.is_null(given)
        ids = pc.replace_with_mask(given, missing, derived_ids(part.filter(missing), biller))
    return part.set_column(part.schema.get_field_index("external_id"), "external_id", ids)


def _checked_rows(
    table: RawTable,
    screened: Screened,
    customers: CustomerDirectory,
    today: date,
    rules: ImportRules,
    biller: str,
) -> _Candidates:
    """Rows the screen passed, plus the suspect rows checked one by one."""
    candidates = _Candidates(_clean_rows(table, screened, biller))
    clean_refs, clean_lines = screened.reference, table.lines
    if screened.suspect.any():  # (a filter that keeps every row still copies it)
        clean = pa.array(~screened.suspect)
        clean_refs, clean_lines = pc.filter(clean_refs, clean), pc.filter(clean_lines, clean)
    if clean_refs.null_count:
        valid = pc.is_valid(clean_refs)
        clean_refs, clean_lines = pc.filter(clean_refs, valid), pc.filter(clean_lines, valid)
    lines: list[pa.Array] = [clean_lines]
    references: list[pa.Array] = [clean_refs]
    good: list[PaymentRequestRow] = []
    suspect_lines: list[int] = []
    suspect_refs: list[str] = []
    for index in np.flatnonzero(screened.suspect):
        checked = check_row(table.row(int(index)), customers, today, rules)
        candidates.problems.extend(checked.problems)
        if checked.notes:
            candidates.notes[checked.row.line] = checked.notes
        if checked.reference:
            suspect_lines.append(checked.row.line)
            suspect_refs.append(checked.reference)
        row = complete(checked, biller)
        if row is not None:
            good.append(row)
    if suspect_lines:
        lines.append(pa.array(suspect_lines, pa.int64()))
        references.append(pa.array(suspect_refs, pa.string()))
    candidates.reference_lines = pa.concat_arrays(lines) if len(lines) > 1 else lines[0]
    candidates.references = pa.concat_arrays(references) if len(references) > 1 else references[0]
    if good:
        rows = pa.concat_tables([candidates.good, GoodRows.from_rows(good).table])
        candidates.good = rows.sort_by("line")
    return candidates


def _column_of(table: RawTable, canonical: str) -> str:
    return table.column_names.get(canonical, canonical)


def _reference_problems(
    table: RawTable,
    candidates: _Candidates,
    good: pa.Table,
    known: KnownPaymentRequests,
    counts: pa.StructArray | None,
) -> list[RowProblem]:
    """``counts``: the candidates' references :func:`~repeats.counted` (None: each once)."""
    column = _column_of(table, col.REFERENCE)
    lines, references = candidates.reference_lines, candidates.references
    problems = []
    for reference, on_lines in repeats.repeated_lines(lines, references, counts).items():
        for line in on_lines:
            reason = f"duplicate reference: also on line {repeats.others(on_lines, line)}"
            problems.append(RowProblem(line, column, reference, reason))
    distinct = pc.drop_null(references) if counts is None else counts.field("values")
    holding = known.by_reference(repeats.python_values(distinct))
    held = [ref for ref, seen in holding.items() if any(s.status != VOID for s in seen)]
    if not held:
        return problems
    mask = pc.is_in(references, value_set=pa.array(held, pa.string()))
    all_rows = pa.array([True] * good.num_rows)
    own_ids = dict(
        repeats.where(all_rows, repeats.column(good, "line"), repeats.column(good, "external_id"))
    )
    for line, reference in repeats.where(mask, lines, references):
        own = own_ids.get(line)
        others = [s for s in holding[reference] if s.status != VOID and s.external_id != own]
        if others:
            note = others[0].external_id
            where = f" ({note})" if note else ""
            reason = f"reference was already imported earlier{where}"
            problems.append(RowProblem(line, column, reference, reason))
    return problems


def _external_id_problems(
    table: RawTable, good: pa.Table, known: KnownPaymentRequests, *, references_distinct: bool
) -> list[RowProblem]:
    """``references_distinct``: no two rows share a reference."""
    lines, ids = repeats.column(good, "line"), repeats.column(good, "external_id")
    derived = repeats.column(good, "external_id_derived")
    problems = []
    column = _column_of(table, col.EXTERNAL_ID)
    every_id_derived = pc.all(derived).as_py() is not False
    if every_id_derived and references_distinct and good.column("reference").null_count == 0:
        # A derived id hashes the row's reference (derive.py): rows with different references
        # have different ids (but for two 96-bit digests colliding, about 2^-57 in a million
        # rows), so with every reference distinct no id can repeat.
        repeated: dict[str, list[int]] = {}
    else:
        repeated = repeats.duplicates(lines, ids)
    derived_lines = set(pc.filter(lines, derived).to_pylist()) if repeated else set()
    for key, on_lines in repeated.items():
        for line in on_lines:
            others = repeats.others(on_lines, line)
            if line not in derived_lines:
                problems.append(
                    RowProblem(line, column, key, f"duplicate externalId: also on line {others}")
                )
            else:
                problems.append(
                    RowProblem(
                        line,
                        "externalId (derived)",
                        key,
                        "same customer, reference, amount, pay-by date and description as line "
                        f"{others}: a duplicated row? (give each row its own External ID if both "
                        "are meant)",
                    )
                )
    given = pc.invert(derived)
    existing = known.by_external_id(repeats.python_values(pc.filter(ids, given)))
    voided = [key for key, seen in existing.items() if seen.status == VOID]
    if voided:
        mask = pc.and_(given, pc.is_in(ids, value_set=pa.array(voided, pa.string())))
        for line, key in repeats.where(mask, lines, ids):
            seen = existing[key]
            number = seen.number or seen.payment_request_id
            reason = (
                f"externalId belongs to payment request {number}, which is VOID (voided, e.g. by "
                "undo-import): the service edits no VOID payment request; give the row a new "
                "External ID"
            )
            problems.append(RowProblem(line, column, key, reason))
    return problems


def _revive_voided(good: pa.Table, known: KnownPaymentRequests, biller: str) -> pa.Table:
    """Rows whose derived externalId names a voided payment request get the next one."""
    ids, derived = repeats.column(good, "external_id"), repeats.column(good, "external_id_derived")
    existing = known.by_external_id(repeats.python_values(pc.filter(ids, derived)))
    voided = [key for key, seen in existing.items() if seen.status == VOID]
    if not voided:
        return good
    mask = pc.and_(derived, pc.is_in(ids, value_set=pa.array(voided, pa.string())))
    replaced = ids.to_pylist()
    rows = GoodRows(good)
    for index in pc.indices_nonzero(mask).to_pylist():
        row = next(rows.rows(index, index + 1))
        replaced[index] = next_round_id(row, biller, lambda i: known.by_external_id([i]).get(i))
    position = good.schema.get_field_index("external_id")
    return good.set_column(position, "external_id", pa.array(replaced, pa.string()))


def _edit_problems(good: pa.Table, known: KnownPaymentRequests) -> list[RowProblem]:
    """Rows with neither reference nor own externalId that look like an edited earlier row."""
    keyless = pc.and_(good.column("external_id_derived"), pc.is_null(good.column("reference")))
    rows = GoodRows(good.filter(keyless))
    if not len(rows):
        return []
    earlier: dict[tuple[str, str], list[PaymentRequestSeen]] = defaultdict(list)
    for seen in known.imported_for(rows.column("customer_id")):
        if seen.status != VOID and seen.customer_id and seen.description is not None:
            earlier[(seen.customer_id, seen.description)].append(seen)
    problems = []
    for row in rows.rows() if earlier else ():
        matches = earlier.get((row.customer_id or "", row.description), [])
        if matches and all(seen.external_id != row.external_id for seen in matches):
            problems.append(_looks_like_an_edit(row, matches[0]))
    return problems


def _looks_like_an_edit(row: PaymentRequestRow, seen: PaymentRequestSeen) -> RowProblem:
    number = seen.number or seen.payment_request_id
    amount = pounds(seen.amount_pennies)
    pay_by = seen.pay_by_date
    when = f", pay by {pay_by:%d/%m/%Y}" if pay_by else ""
    return RowProblem(
        row.line,
        "externalId (derived)",
        row.external_id,
        f"looks like an edit of {number} (£{amount:,.2f}{when}), imported earlier for the same "
        "customer and description: void it, or give an External ID (a row without a Reference "
        "or External ID is known by its values, so a changed amount or date would be a second "
        "payment request)",
    )


def _file_ceiling(good: GoodRows, rules: ImportRules, table: RawTable) -> list[RowProblem]:
    total = good.total()
    if total <= rules.max_file_amount:
        return []
    column = _column_of(table, col.AMOUNT)
    reason = (
        f"the file's valid rows total £{total:,.2f}, over the biller's ceiling of "
        f"£{rules.max_file_amount:,.2f} per file (BILLOPS_IMPORT_MAX_FILE_AMOUNT): split the "
        "file, or raise the ceiling"
    )
    return [RowProblem(row.line, column, f"{row.amount:.2f}", reason) for row in good.rows()]


def validate_table(
    table: RawTable,
    *,
    customers: CustomerDirectory,
    today: date,
    biller: str,
    known: KnownPaymentRequests | None = None,
    rules: ImportRules | None = None,
) -> tuple[GoodRows, list[RowProblem], dict[int, list[str]]]:
    """The rows that pass every check, every problem found (sorted by line), and notes.

    ``today`` is today's date in Europe/London (the caller's clock, so tests pin it).
    """
    known = known or KnownPaymentRequests()
    rules = rules or ImportRules()
    screened = screen(table, customers, today, rules)
    candidates = _checked_rows(table, screened, customers, today, rules, biller)
    good = _revive_voided(candidates.good, known, biller)
    counts = repeats.counted(candidates.references)
    references_distinct = counts is None
    problems = [
        *candidates.problems,
        *_reference_problems(table, candidates, good, known, counts),
        *_external_id_problems(table, good, known, references_distinct=references_distinct),
        *_edit_problems(good, known),
    ]
    good = _without_lines(good, {p.line for p in problems})
    ceiling = _file_ceiling(GoodRows(good), rules, table)
    if ceiling:
        problems.extend(ceiling)
        good = _without_lines(good, {p.line for p in ceiling})
    problems.sort(key=lambda p: p.line)
    return GoodRows(good), problems, candidates.notes


def _without_lines(good: pa.Table, lines: set[int]) -> pa.Table:
    if not lines:
        return good
    mask = pc.invert(pc.is_in(good.column("line"), pa.array(sorted(lines), pa.int64())))
    return good.filter(mask)


def parse_payment_request_file(
    path: Path,
    *,
    customers: CustomerDirectory,
    today: date,
    biller: str,
    sheet: str | None = None,
    known: KnownPaymentRequests | None = None,
    rules: ImportRules | None = None,
) -> ParsedFile:
    """Read and validate a file: raises :class:`InputFileError` when it is unusable as a whole."""
    loaded = read_payment_request_file(path, sheet=sheet)
    good, problems, notes = validate_table(
        loaded.table, customers=customers, today=today, biller=biller, known=known, rules=rules
    )
    return ParsedFile(
        path=path,
        sha256=loaded.sha256,
        encoding=loaded.encoding,
        sheet=loaded.sheet,
        table=loaded.table,
        good=good,
        problems=problems,
        notes=notes,
    )


def external_ids_and_references(rows: Sequence[PaymentRequestRow]) -> tuple[set[str], set[str]]:
    """The externalIds and references of rows (what to ask the ledger about)."""
    return {r.external_id for r in rows}, {r.reference for r in rows if r.reference}
