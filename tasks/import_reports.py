"""What a person reads after an import: the CSV next to the input, the failed-rows file, artifacts.

Every input row appears once in the report with its outcome: ``REJECTED`` (failed validation, with
the reasons), ``WOULD_IMPORT`` (dry run), the service's item status (``CREATED``, ``UPDATED``,
``UNCHANGED``, ``FAILED``…) with the payment request id, or ``PENDING`` when its job has not
finished yet (the next run settles it). Amounts are summed with Decimal so the totals in the
summary tie out to the penny with the file.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from prefect import task
from prefect.artifacts import create_markdown_artifact, create_table_artifact
from prefect.cache_policies import NO_CACHE

from ledger import ItemOutcome
from tasks.payment_request_files import (
    ParsedFile,
    RowOutcome,
    failed_rows_path,
    read_payment_request_file,
    report_path,
    write_failed_rows,
    write_outcome_report,
)

MAX_ARTIFACT_ROWS = 500
FAILED_STATUSES = frozenset({"REJECTED", "FAILED"})


@dataclass(frozen=True)
class ImportReport:
    """Counts and paths of one import run, as printed by the CLI and shown in the UI."""

    rows: int
    by_status: dict[str, int]
    amount_valid: Decimal
    report_csv: Path
    failed_csv: Path | None
    failed: list[dict[str, str]] = field(default_factory=list)

    @property
    def rejected(self) -> int:
        return self.by_status.get("REJECTED", 0)

    @property
    def failed_rows(self) -> int:
        return sum(n for status, n in self.by_status.items() if status in FAILED_STATUSES)

    @property
    def pending(self) -> int:
        return self.by_status.get("PENDING", 0)


def row_outcomes(
    parsed: ParsedFile, items: Mapping[int, ItemOutcome], *, dry_run: bool, sent: bool
) -> dict[int, RowOutcome]:
    """The outcome of every line of the file."""
    reasons: dict[int, list[str]] = {}
    for problem in parsed.problems:
        reasons.setdefault(problem.line, []).append(
            f"{problem.column} {problem.value!r}: {problem.reason}"
        )
    outcomes = {
        line: RowOutcome(line=line, status="REJECTED", payment_request_id=None, errors=tuple(why))
        for line, why in reasons.items()
    }
    for row in parsed.rows:
        item = items.get(row.line)
        if item is not None:
            outcome = RowOutcome(row.line, item.status, item.payment_request_id, tuple(item.errors))
        elif dry_run:
            outcome = RowOutcome(row.line, "WOULD_IMPORT", None, ())
        else:
            status = "PENDING" if sent else "NOT_SENT"
            outcome = RowOutcome(row.line, status, None, ())
        outcomes[row.line] = outcome
    return outcomes


@task(name="write-import-reports", cache_policy=NO_CACHE)
def write_reports(
    parsed: ParsedFile,
    items: Mapping[int, ItemOutcome],
    *,
    dry_run: bool,
    sent: bool,
    title: str,
) -> ImportReport:
    """Write the CSV report and failed-rows file next to the input, and the run's artifacts."""
    outcomes = row_outcomes(parsed, items, dry_run=dry_run, sent=sent)
    rows_in = read_payment_request_file(parsed.path, sheet=parsed.sheet)
    report = write_outcome_report(report_path(parsed.path), rows_in, outcomes)
    failed = {line: o for line, o in outcomes.items() if o.status in FAILED_STATUSES}
    failed_file = None
    if failed:
        failed_file = write_failed_rows(
            failed_rows_path(parsed.path),
            rows_in,
            set(failed),
            {line: "; ".join(o.errors) or o.status for line, o in failed.items()},
        )
    counts = Counter(o.status for o in outcomes.values())
    result = ImportReport(
        rows=parsed.total_rows,
        by_status=dict(sorted(counts.items())),
        amount_valid=sum((row.amount for row in parsed.rows), Decimal("0")),
        report_csv=report,
        failed_csv=failed_file,
        failed=[
            {"line": str(line), "status": o.status, "reason": "; ".join(o.errors)}
            for line, o in sorted(failed.items())
        ],
    )
    publish_artifacts(result, title)
    return result


def publish_artifacts(report: ImportReport, title: str) -> None:
    """A markdown summary and, when rows failed, a table of them (stable keys per flow)."""
    lines = [
        f"# {title}",
        "",
        f"- Rows in file: **{report.rows}**",
        f"- Total of valid rows: **£{report.amount_valid:,.2f}**",
        *[f"- {status}: **{count}**" for status, count in report.by_status.items()],
        f"- Report: `{report.report_csv}`",
    ]
    if report.failed_csv is not None:
        lines.append(f"- Failed rows, ready to fix and drop again: `{report.failed_csv}`")
    create_markdown_artifact("\n".join(lines), key="payment-request-import-summary")
    if report.failed:
        shown = report.failed[:MAX_ARTIFACT_ROWS]
        more = len(report.failed) - len(shown)
        create_table_artifact(
            shown,
            key="payment-request-import-failed-rows",
            description="Rows that were not imported"
            + (f" (first {len(shown)}; {more} more in {report.failed_csv})" if more else ""),
        )
