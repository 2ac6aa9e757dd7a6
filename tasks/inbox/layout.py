"""The inbox's folders and the files in them.

``<root>/<biller>/`` is one biller's inbox (the folder's name is the biller's credential block
unless its ``inbox.yaml`` says otherwise). Files waiting are those directly in it or in a kind's
sub-folder; ``processing/<kind>/``, ``processed/YYYY-MM-DD/`` and ``failed/`` hold the rest.
"""

from __future__ import annotations

import os
import time
from collections.abc import Iterator
from dataclasses import dataclass
from enum import StrEnum
from pathlib import Path

from ledger.settings import BillopsSettings


class FileKind(StrEnum):
    """What a dropped file is, and so which job processes it."""

    PAYMENT_REQUESTS = "payment-requests"
    BANK = "bank"
    PAYOUTS = "payouts"


AUTO = "auto"  # processing/auto/: dropped at the top level, the kind is read from the content
PROCESSING = "processing"
PROCESSED = "processed"
FAILED = "failed"
SETTINGS_FILE = "inbox.yaml"
_RESERVED = {PROCESSING, PROCESSED, FAILED, *(kind.value for kind in FileKind)}
# Names people's tools use while a file is still being written, or for their own bookkeeping.
_TEMPORARY_SUFFIXES = (".tmp", ".part", ".partial", ".crdownload", ".download", ".swp", "~")
SETTLE_SECONDS = 2.0


def default_root() -> Path:
    """``$BILLOPS_HOME/inbox``."""
    return BillopsSettings().home / "inbox"


def ignored(name: str) -> bool:
    """True for names never taken: dot files, Excel's ``~$`` lock files, temporary names, the
    settings file and reports billops wrote."""
    lowered = name.lower()
    return (
        name.startswith((".", "~$"))
        or lowered.endswith(_TEMPORARY_SUFFIXES)
        or name == SETTINGS_FILE
        or ".report." in lowered
        or lowered.endswith((".failed.csv", ".review.csv", ".inbox.txt"))
    )


@dataclass(frozen=True)
class Waiting:
    """A file waiting in a biller's inbox; ``kind`` is None at the top level (to be detected)."""

    biller: str
    path: Path
    kind: FileKind | None


def billers(root: Path) -> list[str]:
    """The biller folders under ``root`` (names not starting with a dot)."""
    if not root.is_dir():
        return []
    return sorted(p.name for p in root.iterdir() if p.is_dir() and not p.name.startswith("."))


def waiting_files(root: Path, biller: str) -> Iterator[Waiting]:
    """Files waiting in one biller's inbox (complete or not), top level first."""
    folder = root / biller
    places: list[tuple[Path, FileKind | None]] = [(folder, None)]
    places += [(folder / kind.value, kind) for kind in FileKind]
    for place, kind in places:
        if not place.is_dir():
            continue
        for entry in sorted(os.scandir(place), key=lambda e: e.name):
            if entry.is_file(follow_symlinks=False) and not ignored(entry.name):
                if kind is None and entry.name in _RESERVED:
                    continue
                yield Waiting(biller, Path(entry.path), kind)


def processing_folder(root: Path, biller: str, kind: FileKind | None) -> Path:
    """``<biller>/processing/<kind or auto>/``."""
    return root / biller / PROCESSING / (kind.value if kind else AUTO)


def processing_files(root: Path, biller: str) -> Iterator[Waiting]:
    """Files in ``processing/`` (being processed, or left by a process that died)."""
    base = root / biller / PROCESSING
    for sub in [AUTO, *(kind.value for kind in FileKind)]:
        place = base / sub
        if not place.is_dir():
            continue
        kind = None if sub == AUTO else FileKind(sub)
        for entry in sorted(os.scandir(place), key=lambda e: e.name):
            if entry.is_file(follow_symlinks=False) and not ignored(entry.name):
                yield Waiting(biller, Path(entry.path), kind)


def complete(path: Path, settle_seconds: float = SETTLE_SECONDS, now: float | None = None) -> bool:
    """A file is taken only when complete: not changed for ``settle_seconds`` (a writer still
    copying it keeps touching it) and not empty. Tools that write under a temporary name and
    rename at the end are complete as soon as the name appears (the temporary name is ignored)."""
    try:
        stat = path.stat()
    except FileNotFoundError:
        return False
    age = (time.time() if now is None else now) - stat.st_mtime
    return stat.st_size > 0 and age >= settle_seconds
