"""Group commits: a burst of deliveries is written to the ledger in a few transactions.

Each delivery must be stored before it is acknowledged, and one commit per delivery would make a
burst wait in line for the database's write lock. One writer thread takes every delivery waiting
and stores them in one transaction (``Ledger.store_webhook_events``), then answers each waiting
request: the same durability, a fraction of the commits.
"""

from __future__ import annotations

import asyncio
import logging
import queue
import threading
from dataclasses import dataclass

from ledger import Ledger
from ledger.webhooks import NewWebhookEvent, StoredDelivery

MAX_BATCH = 500
_log = logging.getLogger(__name__)


@dataclass
class _Waiting:
    event: NewWebhookEvent
    future: asyncio.Future[StoredDelivery]
    loop: asyncio.AbstractEventLoop


class BatchingStore:
    """Stores events for async callers through one writer thread (start, store..., stop)."""

    def __init__(self, ledger: Ledger, max_batch: int = MAX_BATCH) -> None:
        self._ledger = ledger
        self._max_batch = max_batch
        self._queue: queue.Queue[_Waiting | None] = queue.Queue()
        self._thread: threading.Thread | None = None

    def start(self) -> None:
        """Start the writer thread."""
        self._thread = threading.Thread(target=self._run, name="webhook-store", daemon=True)
        self._thread.start()

    def stop(self) -> None:
        """Store what is waiting, then stop the writer."""
        if self._thread is not None:
            self._queue.put(None)
            self._thread.join()
            self._thread = None

    async def store(self, event: NewWebhookEvent) -> StoredDelivery:
        """Store ``event`` (durably, committed) and say whether it was new."""
        if self._thread is None:
            raise RuntimeError("the webhook store is not running")
        loop = asyncio.get_running_loop()
        future: asyncio.Future[StoredDelivery] = loop.create_future()
        self._queue.put(_Waiting(event, future, loop))
        return await future

    def _run(self) -> None:
        while True:
            first = self._queue.get()
            if first is None:
                return
            batch = [first]
            stop = False
            while len(batch) < self._max_batch:
                try:
                    more = self._queue.get_nowait()
                except queue.Empty:
                    break
                if more is None:
                    stop = True
                    break
                batch.append(more)
            self._write(batch)
            if stop:
                return

    def _write(self, batch: list[_Waiting]) -> None:
        try:
            stored = self._ledger.store_webhook_events([w.event for w in batch])
        except Exception as exc:  # one bad event must not fail its neighbours: store one by one
            if len(batch) > 1:
                for waiting in batch:
                    self._write([waiting])
                return
            _log.error("webhook event could not be stored: %s", type(exc).__name__)
            _answer(batch[0], None, exc)
            return
        for waiting, result in zip(batch, stored, strict=True):
            _answer(waiting, result, None)


def _answer(waiting: _Waiting, result: StoredDelivery | None, error: BaseException | None) -> None:
    def settle() -> None:
        if waiting.future.done():
            return
        if error is not None:
            waiting.future.set_exception(error)
        else:
            waiting.future.set_result(result)  # type: ignore[arg-type]

    waiting.loop.call_soon_threadsafe(settle)
