"""Bringing a file's report up to date when a later run settles the jobs its import left open.

The report was written from the rows the import read, each with the line it came from; a later
run (``poll-import-jobs``, the nightly run) settles the jobs and fills in those lines' outcomes
from the service's answers — by line, from the ledger, never by reading the input file again
(it may have been replaced meanwhile). The failed-rows file is written again to match, and the
file is recorded as imported once none of its jobs is open.
"""

from __future__ import annotations

import csv
from collections import defaultdict
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from ledger import FileState, ItemOutcome, Ledger, Operation
from tasks.common.reports import REPORT_ENCODING, write_csv_atomically
from tasks.payment_requests.jobs import unsettled_imports
from tasks.payment_requests.model import RowStatus
from tasks.payment_requests.prepare import FILE_KIND
from tasks.payment_requests.report_files import REASON_COLUMN, REPORT_COLUMNS, failed_rows_path
from tasks.payment_requests.reports import FAILED_STATUSES as FAILED

OPEN = frozenset({RowStatus.PENDING, RowStatus.NOT_SENT})
REPEATS = frozenset({RowStatus.UPDATED, RowStatus.UNCHANGED})
CREATED_NOTE = "created by the import (a resend was answered as a repeat)"


def update_reports(ledger: Ledger, settled: Sequence[Operation], biller_id: str) -> list[Path]:
    """Fill in the reports of the files whose jobs were just settled; returns those updated."""
    by_file: dict[str, list[Operation]] = defaultdict(list)
    for op in settled:
        sha = (op.payload or {}).get("file_sha256")
        if sha and op.state.settled:
            by_file[str(sha)].append(op)
    still_open = {
        str((op.payload or {}).get("file_sha256")) for op in unsettled_imports(ledger, biller_id)
    }
    updated = []
    for sha, ops in by_file.items():
        record = ledger.file_seen(sha, biller=biller_id, kind=FILE_KIND)
        if record is None or not record.report_path or not Path(record.report_path).exists():
            continue
        answers: dict[int, tuple[ItemOutcome, str]] = {}
        for op in ops:
            new = set((op.payload or {}).get("new_rows", []))
            for item in ledger.items(op.key):
                line = item.row_number
                if line is None:
                    continue
                note = ""
                if item.status in REPEATS and item.external_id in new:
                    # A lost send of the import created it (as in reports.py).
                    item, note = replace(item, status=RowStatus.CREATED.value), CREATED_NOTE
                answers[line] = (item, note)
        report = Path(record.report_path)
        _rewrite(report, answers)
        updated.append(report)
        if sha not in still_open and record.state is FileState.IMPORTING:
            ledger.update_file(sha, biller=biller_id, kind=FILE_KIND, state=FileState.IMPORTED)
    return updated


def _read(path: Path) -> tuple[list[str], list[list[str]]]:
    with path.open(newline="", encoding=REPORT_ENCODING) as handle:
        reader = csv.reader(handle)
        header = next(reader)
        return header, list(reader)


def _rewrite(report: Path, answers: dict[int, tuple[ItemOutcome, str]]) -> None:
    header, rows = _read(report)
    # A report written before a column was added lacks it; the ones used here are always there.
    at = {name: header.index(name) for name in REPORT_COLUMNS if name in header}
    for row in rows:
        line = row[at["line"]]
        answer = answers.get(int(line)) if line.isdigit() else None
        if answer is None or row[at["outcome"]] not in OPEN:
            continue
        item, note = answer
        row[at["outcome"]] = item.status
        row[at["payment_request_id"]] = item.payment_request_id or ""
        row[at["errors"]] = "; ".join(item.errors)
        notes = row[at["outcome_notes"]]
        row[at["outcome_notes"]] = "; ".join(filter(None, [notes, note]))
    write_csv_atomically(report, header, rows)
    original = [i for i, name in enumerate(header) if name not in REPORT_COLUMNS]

    def failed() -> Iterator[list[str]]:
        for row in rows:
            if row[at["outcome"]] in FAILED:
                reason = row[at["errors"]] or row[at["outcome"]]
                yield [*(row[i] for i in original), reason]

    names = [header[i] for i in original]
    if any(row[at["outcome"]] in FAILED for row in rows):
        write_csv_atomically(failed_rows_path(_input_of(report)), [*names, REASON_COLUMN], failed())


def _input_of(report: Path) -> Path:
    """The input a report sits next to (``june.report.csv`` → ``june.csv``'s siblings)."""
    return report.with_name(report.name.removesuffix(".report.csv") + ".csv")
