"""What a person reads after an import: the CSV next to the input, the failed-rows file, artifacts.

Every input row appears once in the report with its outcome: ``REJECTED`` (failed validation, with
the reasons), ``WOULD_IMPORT`` (dry run), the service's item status in this run (``CREATED``,
``UPDATED``, ``UNCHANGED``, ``FAILED``…) with the payment request id, ``PENDING`` when its job has
not finished yet (the next run settles it), or ``NOT_SENT``. Outcomes come from the service's
answers in this run only, matched to rows by externalId (never by position). A chunk sent again
after its first answer was lost is answered ``UNCHANGED`` for rows the lost attempt created: a row
whose externalId the service did not hold before the run is reported ``CREATED``, with a note.

A full sync adds a line per payment request it deleted (``DELETED``, or ``NOT_DELETED`` when the
service kept it), and its dry run one per payment request it would delete (``WOULD_DELETE``) or
keep (``WOULD_KEEP``). Amounts are summed in pennies, so the totals tie out with the file.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping, Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from ledger import ItemOutcome, PaymentRequestSeen
from tasks.common.reports import artifact_key, publish_summary, publish_table
from tasks.payment_requests.model import ParsedFile, RowStatus
from tasks.payment_requests.report_files import (
    ExtraLine,
    Outcomes,
    failed_rows_path,
    report_path,
    write_failed_rows,
    write_outcome_report,
)
from tasks.payment_requests.request_details import RequestDetails
from tasks.payment_requests.screen import pounds

FAILED_STATUSES = frozenset({RowStatus.REJECTED, RowStatus.FAILED})
ARTIFACT_ROWS = 500
_ANSWERS_OF_A_RESEND = frozenset({RowStatus.UPDATED, RowStatus.UNCHANGED})


@dataclass(frozen=True)
class Deletion:
    """A payment request a full sync deleted (or would delete, or kept although missing)."""

    outcome: str
    payment_request_id: str
    external_id: str
    customer_id: str
    amount: Decimal
    errors: str = ""

    def line(self) -> ExtraLine:
        note = f"externalId {self.external_id}, customer {self.customer_id}, £{self.amount:,.2f}"
        return ExtraLine(self.outcome, self.payment_request_id, self.errors, note)


@dataclass(frozen=True)
class ImportReport:
    """Counts and paths of one import run, as printed by the CLI and shown in the UI."""

    rows: int
    by_status: dict[str, int]
    amount_valid: Decimal
    report_csv: Path
    failed_csv: Path | None
    failed: list[dict[str, str]] = field(default_factory=list)
    resent: int = 0
    deletions: list[Deletion] = field(default_factory=list)
    amount_by_status: dict[str, Decimal] = field(default_factory=dict)

    @property
    def rejected(self) -> int:
        return self.by_status.get(RowStatus.REJECTED, 0)

    @property
    def failed_rows(self) -> int:
        return sum(n for status, n in self.by_status.items() if status in FAILED_STATUSES)

    @property
    def pending(self) -> int:
        return self.by_status.get(RowStatus.PENDING, 0)


def deletion_of(seen: PaymentRequestSeen, outcome: str, errors: str = "") -> Deletion:
    """A deletion line for a payment request the ledger knows."""
    return Deletion(
        outcome=outcome,
        payment_request_id=seen.payment_request_id,
        external_id=seen.external_id or "",
        customer_id=seen.customer_id or "",
        amount=pounds(seen.amount_pennies),
        errors=errors,
    )


def _reasons(parsed: ParsedFile) -> dict[int, str]:
    reasons: dict[int, list[str]] = {}
    for problem in parsed.problems:
        reasons.setdefault(problem.line, []).append(
            f"{problem.column} {problem.value!r}: {problem.reason}"
        )
    return {line: "; ".join(why) for line, why in reasons.items()}


def _good_outcomes(
    parsed: ParsedFile,
    items: Mapping[str, ItemOutcome],
    default: RowStatus,
    existed_before: Collection[str],
) -> tuple[list[str], list[str], list[str], list[str]]:
    status: list[str] = []
    request: list[str] = []
    errors: list[str] = []
    notes: list[str] = []
    for line, external_id in zip(
        parsed.good.column("line"), parsed.good.column("external_id"), strict=True
    ):
        note = "; ".join(parsed.notes.get(line, []))
        item = items.get(external_id)
        if item is None:
            status.append(default.value)
            request.append("")
            errors.append("")
        else:
            answer = item.status
            if answer in _ANSWERS_OF_A_RESEND and external_id not in existed_before:
                answer = RowStatus.CREATED.value
                note = "; ".join(
                    filter(None, [note, "created by this run (a resend was answered as a repeat)"])
                )
            status.append(answer)
            request.append(item.payment_request_id or "")
            errors.append("; ".join(item.errors))
        notes.append(note)
    return status, request, errors, notes


def _index_in(keys: pa.Array, values: pa.Array) -> pa.Array:
    """Where each of ``keys`` is among ``values`` (null where it is not): line numbers come in
    increasing order, so a binary search finds them (numpy, no hash table of a million lines);
    values in any other order are looked up by Arrow's hash."""
    ordered = values.to_numpy(zero_copy_only=False)
    if values.null_count or keys.null_count or not (np.diff(ordered) > 0).all():
        return pc.index_in(keys, value_set=values)
    wanted = keys.to_numpy(zero_copy_only=False)
    at = np.searchsorted(ordered, wanted)
    found = ordered[np.minimum(at, len(ordered) - 1)] == wanted if len(ordered) else at < 0
    return pa.array(at, type=pa.int64(), mask=~found)


def _positions(lines: pa.Array, good_lines: pa.Array) -> pa.Array | None:
    """Where each row of the file is among the good rows (null where it is not one), or None when
    every row is good and in the same order (the usual large file: nothing to look up)."""
    if len(good_lines) == len(lines) and pc.all(pc.equal(good_lines, lines)).as_py():
        return None
    return _index_in(lines, good_lines)


def row_outcomes(
    parsed: ParsedFile,
    items: Mapping[str, ItemOutcome],
    *,
    dry_run: bool,
    sent: bool,
    existed_before: Collection[str] = (),
) -> Outcomes:
    """The outcome of every row of the file, in the file's order (see the module docstring).

    ``items``: this run's answers by externalId. ``existed_before``: externalIds the service
    held before the run.
    """
    default = (
        RowStatus.WOULD_IMPORT if dry_run else (RowStatus.PENDING if sent else RowStatus.NOT_SENT)
    )
    lines = parsed.table.lines
    count = len(parsed.good)
    if items or parsed.notes:
        status, request, errors, notes = _good_outcomes(parsed, items, default, existed_before)
        good = [pa.array(values, pa.string()) for values in (status, request, errors, notes)]
    else:  # nothing answered yet: one status for every good row, without a loop over them
        empty = pa.repeat("", count)
        good = [pa.repeat(default.value, count), empty, empty, empty]
    position = _positions(lines, parsed.good.table.column("line").combine_chunks())
    if position is None and not parsed.problems:  # every row good, in the file's order
        return Outcomes(*good)
    if position is None:
        position = pa.array(np.arange(len(lines), dtype=np.int64))
    reasons = _reasons(parsed)
    bad_lines = pa.array(list(reasons), pa.int64())
    bad_text = pa.array(list(reasons.values()), pa.string())
    bad_position = _index_in(lines, bad_lines)
    columns = []
    for index, values in enumerate(good):
        from_good = pc.take(values, position)
        if index == 0:
            fallback: pa.Array = pa.repeat(RowStatus.REJECTED.value, len(lines))
        elif index == 2:
            fallback = pc.take(bad_text, bad_position)
        else:
            fallback = pa.repeat("", len(lines))
        columns.append(pc.fill_null(pc.coalesce(from_good, fallback), ""))
    return Outcomes(*columns)


def write_report_files(
    parsed: ParsedFile,
    outcomes: Outcomes,
    *,
    deletions: Sequence[Deletion] = (),
    resent: int = 0,
    dry_run_report: bool = False,
    details: Mapping[str, RequestDetails] | None = None,
) -> ImportReport:
    """The CSV report and the failed-rows file next to the input, and their counts (a dry run's
    report under its own name, ``report_path``)."""
    report = write_outcome_report(
        report_path(parsed.path, dry_run=dry_run_report),
        parsed.table,
        outcomes,
        [d.line() for d in deletions],
        details,
    )
    failed_mask = pc.is_in(outcomes.status, pa.array(sorted(FAILED_STATUSES), pa.string()))
    failed_rows = pc.indices_nonzero(failed_mask)
    reasons = pc.filter(
        pc.if_else(pc.equal(outcomes.errors, ""), outcomes.status, outcomes.errors), failed_mask
    )
    failed_file = None
    if len(failed_rows):
        failed_file = write_failed_rows(
            failed_rows_path(parsed.path), parsed.table, failed_rows, reasons
        )
    counts = {
        str(v["values"]): int(v["counts"]) for v in pc.value_counts(outcomes.status).to_pylist()
    }
    for deletion in deletions:
        counts[deletion.outcome] = counts.get(deletion.outcome, 0) + 1
    shown = failed_rows.slice(0, ARTIFACT_ROWS)
    return ImportReport(
        rows=parsed.total_rows,
        by_status=dict(sorted(counts.items())),
        amount_valid=parsed.good.total(),
        report_csv=report,
        failed_csv=failed_file,
        failed=[
            {"line": str(line), "status": status, "reason": reason}
            for line, status, reason in zip(
                pc.take(parsed.table.lines, shown).to_pylist(),
                pc.take(outcomes.status, shown).to_pylist(),
                pc.take(outcomes.errors, shown).to_pylist(),
                strict=True,
            )
        ],
        resent=resent,
        deletions=list(deletions),
        amount_by_status=amount_by_status(parsed, outcomes, deletions),
    )


def amount_by_status(
    parsed: ParsedFile, outcomes: Outcomes, deletions: Sequence[Deletion] = ()
) -> dict[str, Decimal]:
    """The total of the valid rows (and deletions) of each outcome, to the penny."""
    lines = parsed.table.lines
    good_lines = parsed.good.table.column("line").combine_chunks()
    if len(good_lines) == len(lines) and pc.all(pc.equal(good_lines, lines)).as_py():
        status = outcomes.status  # every row good, in the file's order
    else:
        status = pc.take(outcomes.status, _index_in(good_lines, lines))
    pennies = parsed.good.table.column("amount_pennies").combine_chunks()
    totals = {name: Decimal(sum_) / 100 for name, sum_ in _pennies_by(status, pennies).items()}
    for deletion in deletions:
        totals[deletion.outcome] = totals.get(deletion.outcome, Decimal(0)) + deletion.amount
    return dict(sorted(totals.items()))


def _pennies_by(status: pa.Array, pennies: pa.Array) -> dict[str, int]:
    """The pennies of each status, summed exactly: a file has a handful of statuses, so each
    is a mask over the status codes (numpy, int64), where Arrow's ``group_by`` on the text
    cost a million rows 20 ms."""
    if status.null_count or pennies.null_count:
        grouped = pa.table({"status": status, "pennies": pennies}).group_by("status")
        return {
            str(row["status"]): int(row["pennies_sum"] or 0)
            for row in grouped.aggregate([("pennies", "sum")]).to_pylist()
        }
    encoded = pc.dictionary_encode(status)
    codes = encoded.indices.to_numpy(zero_copy_only=False)
    values = pennies.to_numpy(zero_copy_only=False).astype(np.int64, copy=False)
    names = encoded.dictionary.to_pylist()
    if len(names) == 1:
        return {str(names[0]): int(values.sum())}
    return {str(name): int(values[codes == code].sum()) for code, name in enumerate(names)}


def write_reports(
    parsed: ParsedFile,
    items: Mapping[str, ItemOutcome],
    *,
    dry_run: bool,
    sent: bool,
    title: str,
    biller: str,
    existed_before: Collection[str] = (),
    deletions: Sequence[Deletion] = (),
    resent: int = 0,
    details: Mapping[str, RequestDetails] | None = None,
    dry_run_report: bool | None = None,
) -> ImportReport:
    """Write the CSV report and failed-rows file next to the input, and the run's artifacts.

    ``dry_run``: rows not sent read WOULD_IMPORT; ``dry_run_report`` (default ``dry_run``): the
    run was a dry run, so its report gets the dry run's name.
    """
    outcomes = row_outcomes(
        parsed, items, dry_run=dry_run, sent=sent, existed_before=existed_before
    )
    result = write_report_files(
        parsed,
        outcomes,
        deletions=deletions,
        resent=resent,
        dry_run_report=dry_run if dry_run_report is None else dry_run_report,
        details=details,
    )
    publish_artifacts(result, title, key=artifact_key("payment-requests", biller, parsed.path.name))
    return result


def publish_artifacts(report: ImportReport, title: str, *, key: str) -> None:
    """A markdown summary, and tables of the failed rows and of deletions (keyed by biller and
    file, on the flow run)."""
    lines = [
        f"# {title}",
        "",
        f"- Rows in file: **{report.rows}**",
        f"- Total of valid rows: **£{report.amount_valid:,.2f}**",
        *[
            f"- {status}: **{count}**"
            + (
                f" (£{report.amount_by_status[status]:,.2f})"
                if status in report.amount_by_status
                else ""
            )
            for status, count in report.by_status.items()
        ],
    ]
    if report.resent:
        lines.append(f"- Chunks sent again after a lost answer: **{report.resent}**")
    if report.deletions:
        total = sum((d.amount for d in report.deletions), Decimal(0))
        lines.append(f"- Full sync: **{len(report.deletions)}** payment request(s), £{total:,.2f}")
    lines.append(f"- Report: `{report.report_csv}`")
    if report.failed_csv is not None:
        lines.append(f"- Failed rows, ready to fix and drop again: `{report.failed_csv}`")
    publish_summary(lines, key=f"{key}-summary")
    if report.failed:
        described = "Rows that were not imported"
        if report.failed_rows > len(report.failed):
            described += (
                f" (first {len(report.failed)} of {report.failed_rows}; all in {report.failed_csv})"
            )
        publish_table(report.failed, key=f"{key}-failed-rows", description=described)
    if report.deletions:
        publish_table(
            [
                {
                    "outcome": d.outcome,
                    "payment request": d.payment_request_id,
                    "externalId": d.external_id,
                    "customer": d.customer_id,
                    "amount": f"£{d.amount:,.2f}",
                }
                for d in report.deletions
            ],
            key=f"{key}-deletions",
            description="Payment requests the full sync deleted, kept or would delete",
            where_all=str(report.report_csv),
        )
