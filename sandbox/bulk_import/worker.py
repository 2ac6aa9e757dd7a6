"""The background worker that processes bulk import jobs.

One thread per sandbox app, started and stopped by the app's lifespan. It polls the database for
work (a short interval, so uploads are picked up quickly), and handles one job at a time in
upload order, so the jobs of one biller run one after the other. Stopping sets an event the
worker checks between chunks of rows; a job it was in the middle of stays ``PROCESSING`` and is
resumed by the next start.
"""

from __future__ import annotations

import logging
import threading
from itertools import count

from sqlalchemy.orm import Session, sessionmaker

from sandbox.bulk_import import jobs as bulk_import
from sandbox.core.db import session_scope

log = logging.getLogger(__name__)
THREAD_PREFIX = "sandbox-bulk-import"
POLL_SECONDS = 0.1
_numbers = count(1)


class BulkImportWorker:
    def __init__(
        self, sessions: sessionmaker[Session], *, poll_seconds: float = POLL_SECONDS
    ) -> None:
        self._sessions = sessions
        self._poll_seconds = poll_seconds
        self._stop = threading.Event()
        self._thread: threading.Thread | None = None

    @property
    def running(self) -> bool:
        return self._thread is not None and self._thread.is_alive()

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        self._thread = threading.Thread(
            target=self._run, name=f"{THREAD_PREFIX}-{next(_numbers)}", daemon=True
        )
        self._thread.start()

    def stop(self, timeout: float = 10.0) -> None:
        """Ask the worker to stop and wait for it (it finishes the chunk it is applying)."""
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout)
            if self._thread.is_alive():
                log.warning("the bulk import worker did not stop within %s s", timeout)
            self._thread = None

    def _run(self) -> None:
        while not self._stop.is_set():
            try:
                worked = self.run_once()
            except Exception:  # the worker must outlive any one failure; the log says what
                log.exception("bulk import worker: polling failed")
                worked = False
            if not worked:
                self._stop.wait(self._poll_seconds)

    def run_once(self) -> bool:
        """Process the next job, if any; True when there was one."""
        with session_scope(self._sessions) as session:
            job_id = bulk_import.claim_next_job(session)
        if job_id is None:
            return False
        try:
            bulk_import.process_job(self._sessions, job_id, self._stop)
        except Exception as exc:
            log.exception("bulk import job %s failed", job_id)
            bulk_import.fail_job(self._sessions, job_id, f"the job failed: {type(exc).__name__}")
        return True
