"""``billops inbox watch``: follow the inbox with OS notifications and process each complete file.

One pass (:func:`take_files`) resumes files in ``processing/`` whose holder died and claims
complete waiting files, never more than there are free slots, so a second watcher on the same
folder gets the rest. :class:`Watcher` runs a pass whenever ``watchfiles`` reports a change, and
once a second anyway (a file becomes complete by time passing, which no notification reports).
Each claimed file goes to ``process`` on a bounded pool of threads. Stopping (SIGTERM, Ctrl-C)
takes no new file and lets the files in hand finish; a file cut off by a harder stop stays in
``processing/`` and the next pass resumes it.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import watchfiles

from tasks.inbox.claim import Claimed, claim, resume
from tasks.inbox.layout import (
    SETTLE_SECONDS,
    billers,
    complete,
    processing_files,
    waiting_files,
)

_log = logging.getLogger(__name__)
TICK_MS = 1000


def take_files(root: Path, slots: int, settle_seconds: float = SETTLE_SECONDS) -> list[Claimed]:
    """Up to ``slots`` files to process now: orphans in ``processing/`` first, then complete
    waiting files, each locked by this process."""
    taken: list[Claimed] = []
    for biller in billers(root):
        for left in processing_files(root, biller):
            if len(taken) >= slots:
                return taken
            resumed = resume(left)
            if resumed is not None:
                _log.info("resuming %s (its last holder stopped)", resumed.path)
                taken.append(resumed)
    for biller in billers(root):
        for waiting in waiting_files(root, biller):
            if len(taken) >= slots:
                return taken
            if not complete(waiting.path, settle_seconds):
                continue
            claimed = claim(waiting, root)
            if claimed is not None:
                taken.append(claimed)
    return taken


@dataclass
class WatchOptions:
    concurrency: int = 2
    settle_seconds: float = SETTLE_SECONDS


class Watcher:
    """Watches ``root`` until :meth:`stop`; ``process`` is called once per claimed file (in a
    worker thread) and owns it from then on."""

    def __init__(
        self, root: Path, process: Callable[[Claimed], object], options: WatchOptions
    ) -> None:
        if options.concurrency < 1:
            raise ValueError("concurrency: at least 1 file at a time")
        self.root = root
        self._process = process
        self._options = options
        self._stop = threading.Event()
        self._busy: set[Future[object]] = set()
        self._lock = threading.Lock()
        self.processed = 0

    def stop(self) -> None:
        """Take no new file; the files in hand finish (safe from a signal handler)."""
        self._stop.set()

    def _dispatch(self, pool: ThreadPoolExecutor) -> None:
        with self._lock:
            self._busy = {f for f in self._busy if not f.done()}
            free = self._options.concurrency - len(self._busy)
        if free <= 0 or self._stop.is_set():
            return
        for claimed in take_files(self.root, free, self._options.settle_seconds):
            future = pool.submit(self._run_one, claimed)
            with self._lock:
                self._busy.add(future)

    def _run_one(self, claimed: Claimed) -> object:
        try:
            return self._process(claimed)
        except Exception:
            _log.exception("processing %s failed; it stays in processing/ to resume", claimed.path)
            claimed.release()
            return None
        finally:
            with self._lock:
                self.processed += 1

    def run(self) -> None:
        """Watch until stopped, then wait for the files in hand."""
        self.root.mkdir(parents=True, exist_ok=True)
        pool = ThreadPoolExecutor(self._options.concurrency, thread_name_prefix="inbox")
        try:
            self._dispatch(pool)
            for _changes in watchfiles.watch(
                self.root,
                stop_event=self._stop,
                rust_timeout=TICK_MS,
                yield_on_timeout=True,
                raise_interrupt=False,
            ):
                self._dispatch(pool)
        finally:
            pool.shutdown(wait=True)
