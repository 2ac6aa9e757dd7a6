"""Taking a file: an OS lock, then a rename into ``processing/``; and putting it away after.

The lock (``flock``) is taken on the file before it is renamed and held until it is moved to its
outcome folder. It lives with the open file, so it goes when its holder dies (even by kill -9):

- two watchers never take one file: the second cannot lock it, or finds it gone;
- a file in ``processing/`` that can be locked was left by a process that died: it is resumed.

Renames stay within one biller's folder, so they are atomic on every local file system (and on
NFS v4). The lock is advisory: only billops takes it.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import shutil
from dataclasses import dataclass
from datetime import date
from pathlib import Path
from typing import IO

from tasks.inbox.layout import FAILED, PROCESSED, FileKind, Waiting, processing_folder


@dataclass
class Claimed:
    """A file this process holds in ``processing/``; ``original`` is the name it was dropped as."""

    biller: str
    path: Path
    kind: FileKind | None
    handle: IO[bytes]

    @property
    def root(self) -> Path:
        """The inbox root (the biller folder's parent)."""
        return self.path.parents[3]

    def release(self) -> None:
        """Let go of the lock (the file stays where it is)."""
        with contextlib.suppress(OSError):
            self.handle.close()


def _lock(path: Path) -> IO[bytes] | None:
    try:
        handle = path.open("rb")
    except (FileNotFoundError, IsADirectoryError):
        return None
    try:
        fcntl.flock(handle.fileno(), fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        handle.close()
        return None
    return handle


def _free_name(folder: Path, name: str) -> Path:
    target = folder / name
    stem, suffix = os.path.splitext(name)
    number = 2
    while target.exists():
        target = folder / f"{stem} ({number}){suffix}"
        number += 1
    return target


def claim(waiting: Waiting, root: Path) -> Claimed | None:
    """Lock ``waiting`` and rename it into ``processing/``; None if another process has it."""
    handle = _lock(waiting.path)
    if handle is None:
        return None
    folder = processing_folder(root, waiting.biller, waiting.kind)
    folder.mkdir(parents=True, exist_ok=True)
    target = _free_name(folder, waiting.path.name)
    try:
        os.rename(waiting.path, target)
    except FileNotFoundError:  # another process renamed it between our open and our lock
        handle.close()
        return None
    return Claimed(waiting.biller, target, waiting.kind, handle)


def resume(left: Waiting) -> Claimed | None:
    """Take over a file in ``processing/`` whose holder died; None while someone holds it."""
    handle = _lock(left.path)
    if handle is None:
        return None
    if not left.path.exists():  # finished and moved away meanwhile
        handle.close()
        return None
    return Claimed(left.biller, left.path, left.kind, handle)


def companions(path: Path) -> list[Path]:
    """The reports a job wrote beside ``path`` (``<name>.<something>`` or ``<stem>.<...>``)."""
    stem = path.stem
    found = []
    for sibling in path.parent.iterdir():
        if sibling == path or not sibling.is_file():
            continue
        if sibling.name.startswith((path.name + ".", stem + ".")):
            found.append(sibling)
    return sorted(found)


def put_away(claimed: Claimed, *, failed: bool, on: date) -> Path:
    """Move the file and its reports to ``processed/YYYY-MM-DD/`` or ``failed/``, then release
    the lock; returns the file's new path."""
    base = claimed.root / claimed.biller
    folder = base / FAILED if failed else base / PROCESSED / on.isoformat()
    folder.mkdir(parents=True, exist_ok=True)
    target = _free_name(folder, claimed.path.name)
    for report in companions(claimed.path):
        name = target.name + report.name[len(claimed.path.name) :]
        if not report.name.startswith(claimed.path.name):
            name = target.stem + report.name[len(claimed.path.stem) :]
        shutil.move(report, folder / name)
    os.rename(claimed.path, target)
    claimed.release()
    return target
