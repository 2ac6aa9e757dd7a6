"""One biller's waiting files of one kind, each claimed, processed and released in turn: how a
nightly step (the bank statements, the payout reports) takes what the inbox has not taken yet,
exactly as the inbox would (``process.py``), without a watcher or a scan running.
"""

from __future__ import annotations

from collections.abc import Mapping
from pathlib import Path

from ledger import Ledger
from tasks.inbox.claim import claim
from tasks.inbox.classify import Detector
from tasks.inbox.layout import FileKind, Waiting, billers, complete, waiting_files
from tasks.inbox.process import Runner, process_claimed
from tasks.inbox.settings import block_of


def _of_kind(waiting: Waiting, kind: FileKind, detect: Detector) -> bool:
    """In the kind's sub-folder, or at the top level and recognised by the kind's detector."""
    if waiting.kind is not None:
        return waiting.kind is kind
    try:
        return detect(waiting.path) is None
    except OSError:  # gone or unreadable: not taken now; the inbox reports it if it stays
        return False


def waiting_of_kind(root: Path, block: str, kind: FileKind, detect: Detector) -> list[Waiting]:
    """Complete files of ``kind`` waiting in the inbox folders of the biller of ``block`` (the
    folders whose ``inbox.yaml`` names the block, or which are named after it)."""
    found: list[Waiting] = []
    for folder in billers(root):
        if block_of(root / folder) != block:
            continue
        found += [
            w for w in waiting_files(root, folder) if complete(w.path) and _of_kind(w, kind, detect)
        ]
    return found


def process_waiting(
    root: Path,
    block: str,
    ledger: Ledger,
    *,
    kind: FileKind,
    detectors: Mapping[FileKind, Detector],
    runner: Runner,
    run_id: str | None,
) -> list[tuple[str, str]]:
    """Claim, process and release every complete file of ``kind`` waiting for the biller of
    ``block``, one after another; a file another process claimed first is left to it. Returns
    (file, status) of each file processed here."""
    done: list[tuple[str, str]] = []
    for waiting in waiting_of_kind(root, block, kind, detectors[kind]):
        claimed = claim(waiting, root)
        if claimed is None:
            continue  # another process took it
        try:
            outcome = process_claimed(
                claimed, ledger, detectors=detectors, runners={kind: runner}, run_id=run_id
            )
        finally:
            claimed.release()
        if outcome is not None:
            done.append((outcome.file, outcome.status))
    return done
