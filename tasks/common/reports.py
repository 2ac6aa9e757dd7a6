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

REPORT_ENCODING = "utf-8-sig"
REPORT_MODE = 0o644
MAX_ARTIFACT_ROWS = 500
FORMULA_PREFIXES = ("=", "+", "-", "@", "\t", "\r")
_FORMULA_START = r"^[=+\-@\t\r]"
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


def neutralise_column(values: pa.Array) -> pa.Array:
    """:func:`neutralise` over a whole string column, as one vectorised step."""
    starts = pc.match_substring_regex(values, _FORMULA_START)
    if not pc.any(starts).as_py():
        return values
    risky = pc.and_(starts, pc.invert(pc.match_substring_regex(values, _PLAIN_NUMBER)))
    return pc.if_else(risky, pc.binary_join_element_wise("'", values, ""), values)


def sibling_path(input_path: Path, label: str) -> Path:
    """``<input stem>.<label>.csv`` next to the input (``june.xlsx`` → ``june.report.csv``)."""
    return input_path.with_name(f"{input_path.stem}.{label}.csv")


def write_csv_atomically(
    path: Path, header: Sequence[str], records: Iterable[Sequence[str]]
) -> Path:
    """Write ``header`` then ``records`` to ``path`` (see the module docstring); returns ``path``.

    ``records`` may be a generator: rows are streamed to disk, never held all at once.
    """
    safe = ([neutralise(cell) for cell in record] for record in records)
    return _write(path, header, lambda writer: writer.writerows(safe))


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
                    handle.write(_csv_bytes(columns))
        os.chmod(temporary, REPORT_MODE)  # mkstemp's 0600 would hide the report from the team
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return path


# The csv module's "excel" dialect, reproduced byte for byte: a field is quoted when it holds
# the delimiter, the quote or a line break, quotes are doubled, rows end in CRLF.
_NEEDS_QUOTES = r'[",\r\n]'


def _csv_field(values: pa.Array) -> pa.Array:
    needs = pc.match_substring_regex(values, _NEEDS_QUOTES)
    if not pc.any(needs).as_py():
        return values
    quoted = pc.binary_join_element_wise('"', pc.replace_substring(values, '"', '""'), '"', "")
    return pc.if_else(needs, quoted, values)


def _csv_bytes(columns: Sequence[pa.Array]) -> bytes:
    """The CSV lines of one batch of columns, as the csv module writes them (no Python loop)."""
    fields = [_csv_field(neutralise_column(column.cast(pa.string()))) for column in columns]
    row = pc.binary_join_element_wise(*fields, ",") if len(fields) > 1 else fields[0]
    if len(fields) == 1:  # the csv module writes a lone empty field as "", not as nothing
        row = pc.if_else(pc.equal(row, ""), '""', row)
    lines = pc.binary_join_element_wise(row, "\r\n", "")
    _, offsets, body = lines.buffers()
    if body is None or offsets is None:
        return b""
    ends = np.frombuffer(offsets, dtype=np.int32)
    start, stop = int(ends[lines.offset]), int(ends[lines.offset + len(lines)])
    return bytes(memoryview(body)[start:stop])


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
