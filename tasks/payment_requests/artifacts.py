"""What the Prefect UI shows of an import besides the report's own summary: the outcome, and the
report itself — its rows, not only its path, which is on the worker's disk where an operator in
the UI cannot open it (``docs/conventions.md`` §9 Reports).

Keys name the job, the biller and the file (``payment-requests-<biller>-<file>-...``), like the
report's other artifacts, so billers and files never overwrite each other's.
"""

from __future__ import annotations

import csv
from collections.abc import Sequence
from itertools import islice
from pathlib import Path

from tasks.common.outcome import Outcome
from tasks.common.reports import (
    MAX_ARTIFACT_ROWS,
    REPORT_ENCODING,
    artifact_key,
    publish_summary,
    publish_table,
)
from tasks.payment_requests.jobs import Submission
from tasks.payment_requests.summary import ImportSummary


def import_key(biller: str, file: str) -> str:
    """The key prefix of one import's artifacts."""
    return artifact_key("payment-requests", biller, Path(file).name)


def publish_import(summary: ImportSummary, outcome: Outcome) -> None:
    """The outcome (a markdown artifact) and the report's first rows (a table artifact)."""
    key = import_key(summary.biller, summary.file)
    lines = [
        f"# {Path(summary.file).name} for {summary.biller}: {outcome.name}",
        "",
        outcome.message,
        "",
        f"- Run: `{summary.run_id}`",
    ]
    lines += [
        f"- Import job {c.chunk_index}: {c.rows} rows, {c.state}, job `{c.job_id or '-'}`"
        for c in summary.chunks
    ]
    report = summary.report
    if report is not None:
        lines.append(f"- Report (on the worker): `{report.report_csv}`")
    publish_summary(lines, key=f"{key}-outcome", description=outcome.name)
    if report is not None and report.report_csv.exists():
        rows = _first_rows(report.report_csv)
        described = "The report: every row and its outcome"
        if report.rows > len(rows):
            described += f" (the first {len(rows)} of {report.rows}; all in {report.report_csv})"
        publish_table(rows, key=f"{key}-report", description=described)


def _first_rows(path: Path) -> list[dict[str, str]]:
    """The report's first rows, as many as an artifact shows."""
    with path.open(newline="", encoding=REPORT_ENCODING) as handle:
        return list(islice(csv.DictReader(handle), MAX_ARTIFACT_ROWS))


def publish_settled(biller: str, settled: Sequence[Submission]) -> None:
    """``poll-import-jobs``: which open imports it found and where each stands now."""
    key = artifact_key("payment-requests", biller, "settled")
    still_open = [s for s in settled if not s.state.settled]
    publish_summary(
        [
            f"# Open imports of {biller}",
            "",
            f"- Found: **{len(settled)}**; settled now: **{len(settled) - len(still_open)}**; "
            f"still open: **{len(still_open)}**",
        ],
        key=f"{key}-summary",
    )
    if settled:
        publish_table(
            [
                {
                    "chunk": s.chunk_index,
                    "rows": s.rows,
                    "state": str(s.state),
                    "job": s.job_id or "",
                    "note": s.note,
                    "operation": s.key,
                }
                for s in settled
            ],
            key=f"{key}-jobs",
            description="Import jobs earlier runs left open, and where each stands now",
        )
