"""``billops inbox status``: per biller, what is waiting, processing, done and failed."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from tasks.inbox.claim import resume
from tasks.inbox.layout import (
    FAILED,
    PROCESSED,
    billers,
    ignored,
    processing_files,
    waiting_files,
)


@dataclass
class BillerStatus:
    biller: str
    waiting: list[str] = field(default_factory=list)
    processing: list[str] = field(default_factory=list)
    orphaned: list[str] = field(default_factory=list)  # in processing/, nobody holds it
    processed: list[str] = field(default_factory=list)
    failed: list[str] = field(default_factory=list)


def _files(folder: Path) -> list[str]:
    if not folder.is_dir():
        return []
    return sorted(
        str(p.relative_to(folder)) for p in folder.rglob("*") if p.is_file() and not ignored(p.name)
    )


def inbox_status(root: Path) -> list[BillerStatus]:
    """The state of every biller folder under ``root``."""
    found = []
    for biller in billers(root):
        status = BillerStatus(biller)
        status.waiting = [
            str(w.path.relative_to(root / biller)) for w in waiting_files(root, biller)
        ]
        for left in processing_files(root, biller):
            name = str(left.path.relative_to(root / biller))
            probe = resume(left)  # lockable: its holder is gone
            if probe is None:
                status.processing.append(name)
            else:
                probe.release()
                status.orphaned.append(name)
        status.processed = _files(root / biller / PROCESSED)
        status.failed = _files(root / biller / FAILED)
        found.append(status)
    return found
