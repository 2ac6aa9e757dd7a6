"""The files a person gets back next to the input: every row with its outcome, and the failed rows.

Both carry each input row exactly as the file had it when the run read it (every column, unknown
ones too, in the original order, cells unchanged), so amounts tie out to the penny with the input;
the file is never read again, so a file replaced during the run cannot shift outcomes onto other
rows. They are written as every report of billops is (``tasks/common/reports.py``: atomic, UTF-8
with BOM, formulas neutralised), streamed in batches, so a million rows never sit in memory as
Python objects. The failed-rows file adds a ``reason`` column and is ready to fix and drop again
(billops ignores that column when it reads the file). Columns billops adds replace same-named
columns of the input, so a report or failed-rows file dropped again does not grow a second copy.
"""

from __future__ import annotations

from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.finance_files.raw import RawTable
from tasks.common.reports import sibling_path, write_csv_columns
from tasks.payment_requests.request_details import RequestDetails

REPORT_COLUMNS = (
    "line",
    "outcome",
    "payment_request_id",
    "errors",
    "outcome_notes",
    "payment_request_no",
    "payment_request_status",
    "payment_link",
)
REASON_COLUMN = "reason"
BATCH_ROWS = 50_000


@dataclass(frozen=True)
class Outcomes:
    """What became of every row of a table, column by column, in the table's row order."""

    status: pa.Array
    payment_request_id: pa.Array
    errors: pa.Array
    notes: pa.Array

    def __post_init__(self) -> None:
        lengths = {len(self.status), len(self.payment_request_id), len(self.errors)}
        if len(lengths | {len(self.notes)}) != 1:
            raise ValueError("outcome columns must all have one value per row")


@dataclass(frozen=True)
class ExtraLine:
    """A report line that is no row of the input (a payment request a full sync deleted)."""

    outcome: str
    payment_request_id: str
    errors: str
    notes: str


def report_path(input_path: Path, *, dry_run: bool = False) -> Path:
    """``<input stem>.report.csv`` next to the input (a dry run's: ``.dry-run.report.csv``, so
    the run that applies it does not overwrite the report the change was approved on)."""
    return sibling_path(input_path, "dry-run.report" if dry_run else "report")


def failed_rows_path(input_path: Path) -> Path:
    """``<input stem>.failed.csv`` next to the input."""
    return sibling_path(input_path, "failed")


def _original_columns(table: RawTable, added: Sequence[str]) -> tuple[list[str], list[int]]:
    """The input's header (padded for rows wider than it) and the positions kept."""
    header = list(table.header)
    width = max(len(header), len(table.cells))
    header += [f"column {n}" for n in range(len(header) + 1, width + 1)]
    ours = {name.casefold() for name in added}
    keep = [i for i, name in enumerate(header) if name.strip().casefold() not in ours]
    return [header[i] for i in keep], keep


def _batches(
    table: RawTable, keep: list[int], ours: Sequence[pa.Array]
) -> Iterator[list[pa.Array]]:
    for start in range(0, len(table), BATCH_ROWS):
        size = min(BATCH_ROWS, len(table) - start)
        cells = [table.cell(p).slice(start, size) for p in keep]
        yield [*cells, *(column.slice(start, size) for column in ours)]


def write_outcome_report(
    path: Path,
    table: RawTable,
    outcomes: Outcomes,
    extra: Sequence[ExtraLine] = (),
    details: Mapping[str, RequestDetails] | None = None,
) -> Path:
    """Every input row, as read, followed by its line, outcome, payment request id, errors and
    notes, and the request's number, status and payment link (``details``, by id); then the
    ``extra`` lines (their input columns empty)."""
    header, keep = _original_columns(table, REPORT_COLUMNS)
    ours = [
        pc.cast(table.lines, pa.string()),
        outcomes.status,
        outcomes.payment_request_id,
        outcomes.errors,
        outcomes.notes,
        *_detail_columns(outcomes.payment_request_id, details or {}),
    ]

    def batches() -> Iterator[list[pa.Array]]:
        yield from _batches(table, keep, ours)
        if extra:
            blank = [pa.array([""] * len(extra), pa.string()) for _ in keep]
            mine = [
                [""] * len(extra),
                [e.outcome for e in extra],
                [e.payment_request_id for e in extra],
                [e.errors for e in extra],
                [e.notes for e in extra],
                *([""] * len(extra) for _ in range(3)),  # number, status, link: not known
            ]
            yield [*blank, *(pa.array(values, pa.string()) for values in mine)]

    return write_csv_columns(path, [*header, *REPORT_COLUMNS], batches())


def _detail_columns(ids: pa.Array, details: Mapping[str, RequestDetails]) -> list[pa.Array]:
    """Number, status and link of each row's payment request (empty where it has none)."""
    if not details:
        empty = pc.fill_null(pa.nulls(len(ids), pa.string()), "")
        return [empty, empty, empty]
    known = list(details)
    at = pc.index_in(ids, value_set=pa.array(known, pa.string()))
    columns = []
    for field in ("number", "status", "link"):
        values = pa.array([getattr(details[k], field) for k in known], pa.string())
        columns.append(pc.fill_null(pc.take(values, at), ""))
    return columns


def write_failed_rows(path: Path, table: RawTable, rows: pa.Array, reasons: pa.Array) -> Path:
    """Only the rows at indices ``rows``, original columns plus ``reason`` (one per row):
    ready to fix and drop again."""
    header, keep = _original_columns(table, (REASON_COLUMN,))
    failed = table.take(rows)
    return write_csv_columns(path, [*header, REASON_COLUMN], _batches(failed, keep, [reasons]))
