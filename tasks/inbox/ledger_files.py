"""A file's content against the ledger's files table: new, being processed, or seen before.

The inbox records every file it takes under kind ``inbox-<kind>`` and the biller folder's block,
keyed by SHA-256 (``importing`` while processing, then ``imported`` or ``rejected``). A file
whose content was processed before is a duplicate: reported, not processed again. A record
still ``importing`` belongs to the file being resumed, or to a copy another process holds now.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ledger import FileRecord, FileState, Ledger
from tasks.inbox.layout import FileKind

CHUNK = 1 << 20


def sha256_of(path: Path) -> str:
    """The SHA-256 of the file's bytes."""
    digest = hashlib.sha256()
    with path.open("rb") as handle:
        while chunk := handle.read(CHUNK):
            digest.update(chunk)
    return digest.hexdigest()


def ledger_kind(kind: FileKind) -> str:
    return f"inbox-{kind.value}"


class Seen(StrEnum):
    NEW = "new"
    RESUMED = "resumed"
    BUSY = "busy"  # another copy of the same content is being processed right now
    DUPLICATE = "duplicate"


@dataclass(frozen=True)
class ContentCheck:
    seen: Seen
    record: FileRecord | None


def check_content(
    ledger: Ledger, *, sha256: str, block: str, kind: FileKind, path: Path
) -> ContentCheck:
    """Whether this content may be processed now (``path``: the file in ``processing/``)."""
    record = ledger.file_seen(sha256, biller=block, kind=ledger_kind(kind))
    if record is None:
        return ContentCheck(Seen.NEW, None)
    if record.state != FileState.IMPORTING:
        return ContentCheck(Seen.DUPLICATE, record)
    if record.folder == str(path) or not Path(record.folder).exists():
        return ContentCheck(Seen.RESUMED, record)
    return ContentCheck(Seen.BUSY, record)


def begin(
    ledger: Ledger,
    *,
    sha256: str,
    block: str,
    kind: FileKind,
    path: Path,
    original: str,
    run_id: str | None,
) -> FileRecord:
    """Record that this run processes the content (from ``path``)."""
    return ledger.record_file(
        sha256=sha256,
        name=original,
        size=path.stat().st_size,
        folder=str(path),
        biller=block,
        kind=ledger_kind(kind),
        run_id=run_id,
        state=FileState.IMPORTING,
    )


def finish(
    ledger: Ledger,
    *,
    sha256: str,
    block: str,
    kind: FileKind,
    ok: bool,
    report: Path,
    run_id: str | None,
) -> FileRecord:
    """Record what became of the content and where its report is."""
    return ledger.update_file(
        sha256,
        biller=block,
        kind=ledger_kind(kind),
        state=FileState.IMPORTED if ok else FileState.REJECTED,
        report_path=str(report),
        run_id=run_id,
    )
