"""The ledger as an outbox: stored events are handed to Prefect, each once.

The receiver answers the service as soon as an event is stored; this loop, in the same process,
emits what is stored and not yet emitted, then marks it. If Prefect is unreachable the events
wait in the ledger and go out when it is back; if the process dies between emitting and marking,
the next emission carries the same event id and Prefect's triggers ignore it
(``tasks/webhooks/prefect_events.py``).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import Callable, Sequence
from typing import Any

from prefect.events.clients import EventsClient, get_events_client

from ledger import Ledger
from ledger.webhooks import WebhookEventRecord
from tasks.webhooks.directory import BillerDirectory
from tasks.webhooks.prefect_events import prefect_event

_log = logging.getLogger(__name__)
BATCH = 50
IDLE_SECONDS = 1.0
MAX_BACKOFF_SECONDS = 30.0
# During a burst the receiver's answers come first: emission waits until deliveries have been
# quiet this long, but never holds an event back longer than MAX_HOLD_SECONDS.
QUIET_SECONDS = 0.05
MAX_HOLD_SECONDS = 2.0


class Emitter:
    """Emits stored events until stopped; :meth:`wake` after storing one to send it at once."""

    def __init__(
        self,
        ledger: Ledger,
        directory: BillerDirectory,
        *,
        client_factory: Callable[[], EventsClient] = get_events_client,
        batch: int = BATCH,
    ) -> None:
        self._ledger = ledger
        self._directory = directory
        self._client_factory = client_factory
        self._batch = batch
        self._client: EventsClient | None = None
        self._wake: asyncio.Event | None = None
        self._last_store = 0.0
        self._unmapped: set[str] = set()
        self.emitted = 0

    def wake(self) -> None:
        """Something was stored (call from the event loop's thread)."""
        self._last_store = time.monotonic()
        if self._wake is not None:
            self._wake.set()

    async def _quiet(self, stop: asyncio.Event) -> None:
        """Wait until deliveries pause (or the hold limit passes, or we are stopped)."""
        held = time.monotonic() + MAX_HOLD_SECONDS
        while not stop.is_set() and time.monotonic() < held:
            idle = time.monotonic() - self._last_store
            if idle >= QUIET_SECONDS:
                return
            await asyncio.sleep(QUIET_SECONDS - idle)

    async def run(self, stop: asyncio.Event) -> None:
        """Emit until ``stop`` is set, then emit what is left once more and close."""
        self._wake = asyncio.Event()
        backoff = 1.0
        try:
            while not stop.is_set():
                try:
                    await self._quiet(stop)
                    sent = await self.emit_pending()
                    backoff = 1.0
                except Exception as exc:  # Prefect unreachable: the events wait in the ledger
                    _log.warning(
                        "could not emit webhook events to Prefect (%s: %s); retrying in %.0f s",
                        type(exc).__name__,
                        exc,
                        backoff,
                    )
                    await self._close()
                    await _wait(stop, backoff)
                    backoff = min(backoff * 2, MAX_BACKOFF_SECONDS)
                    continue
                if sent == 0:
                    await _wait_any(stop, self._wake, IDLE_SECONDS)
                    self._wake.clear()
            with contextlib.suppress(Exception):
                await self.emit_pending()
        finally:
            await self._close()

    async def emit_pending(self) -> int:
        """Emit one batch of stored, unemitted events; returns how many were emitted."""
        records = await asyncio.to_thread(self._ledger.webhook_events_to_emit, self._batch)
        if not records:
            return 0
        return await self._emit(records, replay=False)

    async def replay(self, records: Sequence[WebhookEventRecord]) -> int:
        """Emit ``records`` again, each under a new event id (so triggers act on them again)."""
        return await self._emit(records, replay=True)

    async def _emit(self, records: Sequence[WebhookEventRecord], *, replay: bool) -> int:
        client = await self._open()
        done: list[int] = []
        try:
            for record in records:
                block = self._directory.block_for(record.biller_id)
                if block is None and record.biller_id not in self._unmapped:
                    self._unmapped.add(record.biller_id)
                    _log.warning(
                        "biller %s has no credential block in the ledger: its events start no "
                        "job (run `billops webhooks setup` after connecting the biller)",
                        record.biller_id,
                    )
                number = record.emissions if replay else 0
                await client.emit(prefect_event(record, block, replay=number))
                done.append(record.id)
                await asyncio.sleep(0)  # let the receiver answer between two emissions
        finally:
            await asyncio.to_thread(self._ledger.mark_webhook_events_emitted, done)
            self.emitted += len(done)
        return len(done)

    async def _open(self) -> EventsClient:
        if self._client is None:
            client = self._client_factory()
            await client.__aenter__()
            self._client = client
        return self._client

    async def _close(self) -> None:
        client, self._client = self._client, None
        if client is not None:
            with contextlib.suppress(Exception):
                await client.__aexit__(None, None, None)


async def _wait(stop: asyncio.Event, seconds: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(stop.wait(), seconds)


async def _wait_any(stop: asyncio.Event, wake: asyncio.Event, seconds: float) -> None:
    waiters: list[asyncio.Task[Any]] = [
        asyncio.create_task(stop.wait()),
        asyncio.create_task(wake.wait()),
    ]
    try:
        await asyncio.wait(waiters, timeout=seconds, return_when=asyncio.FIRST_COMPLETED)
    finally:
        for waiter in waiters:
            waiter.cancel()
