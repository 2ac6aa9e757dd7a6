"""The files a person gets back next to the input: every row with its outcome, and the failed rows.

Both are CSV in UTF-8 with a byte-order mark (so Excel shows ``£`` rather than ``Â£``), comma
separated, and carry each input row exactly as the file had it (every column, unknown ones too,
in the original order, cells unchanged), so amounts tie out to the penny with the input. The
failed-rows file adds a ``reason`` column and is ready to fix and drop again (billops ignores that
column when it reads the file). Columns billops adds replace same-named columns of the input, so
a report or failed-rows file dropped again does not grow a second copy of them. Files are written
to a temporary name and renamed, so a crash never leaves half a report.
"""

from __future__ import annotations

import csv
import os
import tempfile
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path

from tasks.payment_request_files._model import InputRow, RowOutcome

REPORT_COLUMNS = ("line", "outcome", "payment_request_id", "errors")
REASON_COLUMN = "reason"
NO_OUTCOME = "NO_OUTCOME"
REPORT_ENCODING = "utf-8-sig"
REPORT_MODE = 0o644


def report_path(input_path: Path) -> Path:
    """``<input stem>.report.csv`` next to the input."""
    return input_path.with_name(f"{input_path.stem}.report.csv")


def failed_rows_path(input_path: Path) -> Path:
    """``<input stem>.failed.csv`` next to the input."""
    return input_path.with_name(f"{input_path.stem}.failed.csv")


def _original_columns(
    rows: Sequence[InputRow], added: Iterable[str]
) -> tuple[list[str], list[int]]:
    """The input's header (padded for rows wider than it) and the positions kept."""
    header = list(rows[0].header) if rows else []
    width = max([len(header), *(len(row.cells) for row in rows)])
    header += [f"column {n}" for n in range(len(header) + 1, width + 1)]
    ours = {name.casefold() for name in added}
    keep = [i for i, name in enumerate(header) if name.strip().casefold() not in ours]
    return [header[i] for i in keep], keep


def _original_cells(row: InputRow, keep: list[int]) -> list[str]:
    width = len(row.cells)
    return [row.cells[i] if i < width else "" for i in keep]


def _write_csv(path: Path, header: list[str], records: Iterable[list[str]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with open(fd, "w", encoding=REPORT_ENCODING, newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow(header)
            writer.writerows(records)
        os.chmod(temporary, REPORT_MODE)  # mkstemp's 0600 would hide the report from the team
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def write_outcome_report(
    path: Path, rows_in: Sequence[InputRow], outcomes: Mapping[int, RowOutcome]
) -> Path:
    """Every input row, as read, followed by its line, outcome, payment request id and errors.

    A line without an entry in ``outcomes`` is reported as ``NO_OUTCOME``.
    """
    header, keep = _original_columns(rows_in, REPORT_COLUMNS)

    def records() -> Iterable[list[str]]:
        for row in rows_in:
            outcome = outcomes.get(row.line)
            status = outcome.status if outcome else NO_OUTCOME
            request_id = (outcome.payment_request_id or "") if outcome else ""
            errors = "; ".join(outcome.errors) if outcome else ""
            yield [*_original_cells(row, keep), str(row.line), status, request_id, errors]

    return _write_csv(path, [*header, *REPORT_COLUMNS], records())


def write_failed_rows(
    path: Path, rows_in: Sequence[InputRow], failed_lines: set[int], reasons: Mapping[int, str]
) -> Path:
    """Only the failed rows, original columns plus ``reason``: ready to fix and drop again."""
    header, keep = _original_columns(rows_in, (REASON_COLUMN,))
    records = (
        [*_original_cells(row, keep), reasons.get(row.line, "failed")]
        for row in rows_in
        if row.line in failed_lines
    )
    return _write_csv(path, [*header, REASON_COLUMN], records)
