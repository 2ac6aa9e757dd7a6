"""What every job hands back to people: CSV files next to the input, and artifacts on the run
(``docs/conventions.md`` §9 Reports).

CSV files are UTF-8 with a byte-order mark (so Excel shows ``£`` rather than ``Â£``), comma
separated, written to a temporary name and renamed, so a crash never leaves half a report, and
readable by the team (mode 0644). A cell a spreadsheet would run as a formula (it starts with
``=``, ``+``, ``-``, ``@``, a tab or a carriage return, and is not a plain number) is written with
a leading apostrophe, as OWASP advises against CSV injection: every CSV billops writes goes
through here, so none can carry a live formula to Excel. Artifacts hang on the flow run, under
keys built from the biller and the file (:func:`artifact_key`), so each run's report is found by
what it is about.
"""

from __future__ import annotations

import csv
import io
import json
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any
from uuid import UUID

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.arrow_text import string_parts

REPORT_ENCODING = "utf-8-sig"
REPORT_MODE = 0o644
MAX_ARTIFACT_ROWS = 500
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
FORMULA_START = "".join(FORMULA_PREFIXES).encode("ascii")
_FORMULA_FIRST = frozenset(FORMULA_PREFIXES)  # each prefix is one character
_PLAIN_NUMBER = r"^[+-]?(\d[\d,]*)?(\.\d+)?%?$"
_PLAIN_NUMBER_RE = re.compile(_PLAIN_NUMBER)
_NOT_KEY = re.compile(r"[^a-z0-9]+")


def neutralise(cell: object) -> str:
    """A cell safe to open in a spreadsheet: a would-be formula (a name like "=HYPERLINK(...)"
    coming back from the service would run in the finance team's spreadsheet) gets a leading
    apostrophe; plain numbers, signed or not, are kept."""
    text = "" if cell is None else str(cell)
    # fullmatch: ``$`` alone also matches before a final line break, so "-\n" passed as a number
    # here while the columnar path (RE2, whose ``$`` is the end) neutralised it.
    if text.startswith(FORMULA_PREFIXES) and not _PLAIN_NUMBER_RE.fullmatch(text):
        return "'" + text
    return text


def _as_string(values: pa.Array) -> pa.Array:
    values = values if values.type == pa.string() else values.cast(pa.string())
    # A null would make its whole line null, and the line would be missing from the file.
    return pc.fill_null(values, "") if values.null_count else values


def _rows_holding(
    ends: np.ndarray[Any, Any], body: np.ndarray[Any, Any], wanted: bytes
) -> np.ndarray[Any, Any] | None:
    """Which values hold any of the bytes ``wanted`` (None when none does): one pass over the
    column's bytes finds them, and each is mapped to its value by its position."""
    span = body[ends[0] : ends[-1]]
    found = span == wanted[0]
    for byte in wanted[1:]:
        found |= span == byte
    hits = np.flatnonzero(found)
    if not len(hits):
        return None
    rows = np.zeros(len(ends) - 1, dtype=bool)
    rows[np.searchsorted(ends, hits + ends[0], side="right") - 1] = True
    return rows


def _first_byte_in(
    ends: np.ndarray[Any, Any], body: np.ndarray[Any, Any], prefixes: bytes
) -> np.ndarray[Any, Any]:
    """The positions of the values whose first byte is one of ``prefixes``."""
    starts = ends[:-1]
    filled = np.flatnonzero(ends[1:] > starts)
    first = body[starts[filled]]
    starting = np.zeros(len(first), dtype=bool)
    for byte in prefixes:
        starting |= first == byte
    return filled[starting]


def starting_with(values: pa.Array, prefixes: bytes) -> np.ndarray[Any, np.dtype[np.bool_]]:
    """Which values of a string column start with one of the ASCII characters ``prefixes``, as
    a numpy mask: read from the first byte of each value, without a pattern."""
    values = _as_string(values)
    rows = np.zeros(len(values), dtype=bool)
    rows[_first_byte_in(*string_parts(values), prefixes)] = True
    return rows


def _formula_rows(
    values: pa.Array, ends: np.ndarray[Any, Any], body: np.ndarray[Any, Any]
) -> np.ndarray[Any, Any] | None:
    """Which values a spreadsheet would run (see :func:`neutralise`), or None when none would.

    The formula characters are ASCII, so a value's first byte says whether it starts with one;
    only those values are matched against the plain-number pattern."""
    candidates = _first_byte_in(ends, body, FORMULA_START)
    if not len(candidates):
        return None
    plain = pc.match_substring_regex(pc.take(values, pa.array(candidates)), _PLAIN_NUMBER)
    risky = candidates[~np.asarray(plain.to_numpy(zero_copy_only=False), dtype=bool)]
    if not len(risky):
        return None
    rows = np.zeros(len(values), dtype=bool)
    rows[risky] = True
    return rows


def sibling_path(input_path: Path, label: str) -> Path:
    """``<input stem>.<label>.csv`` next to the input (``june.xlsx`` → ``june.report.csv``)."""
    return input_path.with_name(f"{input_path.stem}.{label}.csv")


def write_csv_atomically(
    path: Path, header: Sequence[str], records: Iterable[Sequence[str]]
) -> Path:
    """Write ``header`` then ``records`` to ``path`` (see the module docstring); returns ``path``.

    ``records`` may be a generator: rows are streamed to disk, never held all at once.
    """
    safe = (_safe_cells(record) for record in records)
    return _write(path, header, lambda writer: writer.writerows(safe))


def _safe_cells(record: Sequence[object]) -> list[str]:
    """:func:`neutralise` of each cell, a text that cannot be a formula passed as it is: most
    cells are such texts, and the call, ``str`` and ``startswith`` of each cost more than the
    check (a year's payout reports are 18,000 cells: 3 ms instead of 4.8)."""
    return [
        cell if type(cell) is str and cell[:1] not in _FORMULA_FIRST else neutralise(cell)
        for cell in record
    ]


def write_csv_columns(
    path: Path, header: Sequence[str], batches: Iterable[Sequence[pa.Array]]
) -> Path:
    """:func:`write_csv_atomically` for large reports: each batch is a list of string columns
    (one array per column, equal lengths), neutralised, quoted and joined by Arrow kernels into
    the bytes the csv module would write, without a Python loop over rows or cells. Batches are
    streamed: only one is in memory at a time."""
    head = io.StringIO(newline="")
    csv.writer(head).writerow([neutralise(name) for name in header])
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with open(fd, "wb") as handle:
            handle.write(head.getvalue().encode(REPORT_ENCODING))
            for columns in batches:
                if len(columns[0]):
                    _write_lines(handle, _csv_lines(columns))
        os.chmod(temporary, REPORT_MODE)  # mkstemp's 0600 would hide the report from the team
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


# The csv module's "excel" dialect, reproduced byte for byte: a field is quoted when it holds
# the delimiter, the quote or a line break, quotes are doubled, rows end in CRLF.
_NEEDS_QUOTES = b'",\r\n'


def _csv_field(values: pa.Array) -> pa.Array:
    """One column of a batch neutralised and quoted as the csv module would write it. Both are
    decided on the column's bytes (numpy over Arrow's buffers, see :func:`_rows_holding`), so a
    column with nothing to change, the usual one, costs a pass over its bytes and no more."""
    values = _as_string(values)
    ends, body = string_parts(values)
    risky = _formula_rows(values, ends, body)
    needs = _rows_holding(ends, body, _NEEDS_QUOTES)  # an apostrophe changes none of these
    if risky is not None:
        values = pc.if_else(pa.array(risky), pc.binary_join_element_wise("'", values, ""), values)
    if needs is None:
        return values
    quoted = pc.binary_join_element_wise('"', pc.replace_substring(values, '"', '""'), '"', "")
    return pc.if_else(pa.array(needs), quoted, values)


def _csv_lines(columns: Sequence[pa.Array]) -> pa.Array:
    """The CSV lines of one batch of columns, as the csv module writes them (no Python loop)."""
    fields = [_csv_field(column) for column in columns]
    if len(fields) == 1:  # the csv module writes a lone empty field as "", not as nothing
        fields[0] = pc.if_else(pc.equal(fields[0], ""), '""', fields[0])
        return pc.binary_join_element_wise(fields[0], "\r\n", "")
    parts = _folded(fields)
    # The line end goes on the last part (one short column, or a literal), not on the lines.
    if isinstance(parts[-1], str):
        parts[-1] += "\r\n"
    else:
        parts[-1] = pc.binary_join_element_wise(parts[-1], "\r\n", "")
    return pc.binary_join_element_wise(*parts, ",")


def _folded(fields: list[pa.Array]) -> list[pa.Array | str]:
    """The fields to join with commas, each run of columns that are empty on every row folded
    into one literal of its commas (k empty fields between two others are k + 1 commas, so the
    literal holds k - 1). A dry run's report leaves six of its columns empty (no id, no error):
    Arrow then joins seven columns instead of thirteen, half the time. The first field stays a
    column, so the join still gives one line per row."""
    parts: list[pa.Array | str] = [fields[0]]
    run = 0
    for field in fields[1:]:
        if _empty(field):
            run += 1
            continue
        if run:
            parts.append("," * (run - 1))
            run = 0
        parts.append(field)
    if run:
        parts.append("," * (run - 1))
    return parts


def _empty(values: pa.Array) -> bool:
    """True when every value of a (null-free) string column is the empty string."""
    ends, _ = string_parts(values)
    return values.null_count == 0 and int(ends[-1]) == int(ends[0])


def _write_lines(handle: Any, lines: pa.Array) -> None:
    """Arrow's bytes of ``lines`` straight to the file (a view, not a copy)."""
    ends, body = string_parts(lines)
    if len(lines):
        handle.write(body[ends[0] : ends[-1]].data)


def _write(path: Path, header: Sequence[str], body: Callable[[Any], None]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with open(fd, "w", encoding=REPORT_ENCODING, newline="") as handle:
            writer = csv.writer(handle)
            writer.writerow([neutralise(name) for name in header])
            body(writer)
        os.chmod(temporary, REPORT_MODE)  # mkstemp's 0600 would hide the report from the team
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


def artifact_key(*parts: str) -> str:
    """An artifact key from its parts (Prefect allows lower-case letters, digits and dashes)."""
    slugs = (_NOT_KEY.sub("-", part.casefold()).strip("-") for part in parts)
    return "-".join(slug for slug in slugs if slug)


def _on_the_flow_run(kind: str, data: str, *, key: str, description: str | None) -> None:
    """An artifact of the current flow run itself, even when a task publishes it.

    Prefect's ``create_*_artifact`` hang an artifact on the task run that makes it, so the run's
    report would sit under a task; this one is the flow run's, as the UI lists runs.
    """
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import ArtifactCreate
    from prefect.runtime import flow_run

    run_id = flow_run.get_id()
    artifact = ArtifactCreate(
        key=key,
        type=kind,
        data=data,
        description=description,
        flow_run_id=UUID(run_id) if run_id else None,
    )
    with get_client(sync_client=True) as client:
        client.create_artifact(artifact)


def publish_summary(lines: Sequence[str], *, key: str, description: str | None = None) -> None:
    """A markdown artifact on the current flow run."""
    _on_the_flow_run("markdown", "\n".join(lines), key=key, description=description)


def publish_table(
    rows: Sequence[Mapping[str, object]], *, key: str, description: str, where_all: str = ""
) -> None:
    """A table artifact of at most ``MAX_ARTIFACT_ROWS`` rows; the description says where the rest
    are (``where_all``, e.g. the failed-rows file) when there are more."""
    shown = list(rows[:MAX_ARTIFACT_ROWS])
    more = len(rows) - len(shown)
    if more:
        description += f" (first {len(shown)}; {more} more in {where_all})"
    table = json.dumps([dict(row) for row in shown], default=str)
    _on_the_flow_run("table", table, key=key, description=description)
