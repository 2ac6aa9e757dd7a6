"""The webhook receiver: an ASGI app that verifies, stores, acknowledges, then emits.

``POST /webhooks`` (the path is configurable):

1. the delivery's credentials and signature are checked (``tasks/webhooks/verify.py``); anything
   else gets 401 and a log line naming the reason and the delivery id, never the body;
2. the event is stored in the ledger (deduplicated by ``eventId``, or the body's hash) in a
   group commit, and only then answered 200 — the service counts any 2xx as delivered
   (``docs/service.md`` §11.4 Retries and ordering);
3. the emitter hands stored events to Prefect (``billops.service.<kind>.<name>``) once each; a
   retried delivery is answered 200 and emits nothing.

``GET /healthz`` says what the process has seen (counts only). The settings (secrets, target
credentials, key mode, replay window) come from the platform credential block; they are reloaded
every 30 s, and at once (at most every few seconds) when a delivery does not verify, so a secret
rotated by ``billops webhooks setup`` is picked up without a restart.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import time
from collections.abc import AsyncIterator, Callable
from dataclasses import dataclass, field
from datetime import datetime

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from billing_api import utc_now
from blocks.webhook_settings import WebhookReceiverSettings
from ledger import Ledger
from ledger.webhooks import NewWebhookEvent
from tasks.webhooks.directory import BillerDirectory
from tasks.webhooks.emitter import Emitter
from tasks.webhooks.received import MAX_BODY_BYTES, read_delivery
from tasks.webhooks.store import BatchingStore
from tasks.webhooks.verify import (
    DeliveryRefused,
    ReceiverKeys,
    check_credentials,
    check_delivery,
)

_log = logging.getLogger("billops.webhooks")
DEFAULT_PATH = "/webhooks"
RELOAD_SECONDS = 30.0
RELOAD_AFTER_REFUSAL_SECONDS = 5.0


@dataclass
class Counters:
    """What the receiver has seen since it started."""

    stored: int = 0
    duplicates: int = 0
    refused: dict[int, int] = field(default_factory=dict)


class KeyRing:
    """The verification keys, from settings loaded in a worker thread and cached."""

    def __init__(
        self,
        load: Callable[[], WebhookReceiverSettings],
        reload_seconds: float,
        reload_after_refusal: float,
    ) -> None:
        self._load = load
        self._reload_seconds = reload_seconds
        self._after_refusal = reload_after_refusal
        self._keys: ReceiverKeys | None = None
        self._loaded_at = float("-inf")
        # When the keys in hand include replaced secrets: the instant the first grace period
        # among them ends (the keys are reloaded then, and so on for each).
        self._grace_ends: datetime | None = None
        self._lock = asyncio.Lock()
        self._refresh: asyncio.Task[None] | None = None

    async def current(self) -> ReceiverKeys:
        """The keys; once older than the reload period they are reloaded in the background
        while requests go on being answered with the ones in hand — except when the ones in hand
        accept a previous secret whose grace period has ended: those are reloaded first."""
        if self._keys is None or self._grace_over():
            # The previous secret must not outlive its grace period by a reload period (or by
            # hours of quiet): reload before answering (docs/service.md §11.2 Signature).
            await self._reload(min_age=float("inf"))
        elif time.monotonic() - self._loaded_at > self._reload_seconds and (
            self._refresh is None or self._refresh.done()
        ):
            self._refresh = asyncio.create_task(self._reload_quietly())
        assert self._keys is not None
        return self._keys

    async def _reload_quietly(self) -> None:
        try:
            await self._reload(min_age=self._reload_seconds)
        except Exception as exc:  # keep the keys in hand; the next request tries again
            _log.warning("webhook settings could not be reloaded: %s", type(exc).__name__)

    async def after_refusal(self) -> ReceiverKeys | None:
        """Fresh keys after a delivery failed, unless they were reloaded very recently."""
        if time.monotonic() - self._loaded_at < self._after_refusal:
            return None
        return await self._reload(min_age=self._after_refusal)

    async def _reload(self, min_age: float) -> ReceiverKeys | None:
        async with self._lock:
            fresh = time.monotonic() - self._loaded_at < min_age
            if self._keys is not None and fresh and not self._grace_over():
                return None  # another request reloaded them meanwhile
            settings = await asyncio.to_thread(self._load)
            now = utc_now()
            self._keys = ReceiverKeys.from_settings(settings, now)
            self._grace_ends = _grace_ends(settings, now)
            self._loaded_at = time.monotonic()
            return self._keys

    def _grace_over(self) -> bool:
        return self._grace_ends is not None and utc_now() > self._grace_ends


def _grace_ends(settings: WebhookReceiverSettings, now: datetime) -> datetime | None:
    """When the first of the replaced secrets the keys loaded at ``now`` include stops being
    valid (the same rule as :meth:`WebhookReceiverSettings.secrets`); the reload then finds
    the next one's end."""
    return settings.grace_ends(now)


@dataclass
class Receiver:
    """The app's parts: the keys, the group-committing store, the emitter, the counters."""

    keys: KeyRing
    store: BatchingStore
    sender: Emitter
    counters: Counters = field(default_factory=Counters)

    async def receive(self, request: Request) -> JSONResponse:
        """``POST``: verify, store, answer; the emitter is woken for a new event."""
        headers = {name.lower(): value for name, value in request.headers.items()}
        try:
            await _check_credentials(headers, self.keys)  # before reading any body
            body = await _capped_body(request)
            event = await _verified_event(body, headers, self.keys)
        except DeliveryRefused as refused:
            self.counters.refused[refused.status] = self.counters.refused.get(refused.status, 0) + 1
            _log.warning(
                "webhook delivery %s from %s refused (%d): %s",
                headers.get("adfin-webhook-id", "-"),
                request.client.host if request.client else "-",
                refused.status,
                refused.reason,
            )
            return JSONResponse({"error": "refused"}, status_code=refused.status)
        stored = await self.store.store(event)
        if stored.first:
            self.counters.stored += 1
            self.sender.wake()
        else:
            self.counters.duplicates += 1
        return JSONResponse({"stored": True, "duplicate": not stored.first})

    async def health(self, request: Request) -> JSONResponse:
        """``GET /healthz``: counts only."""
        refused = {str(k): v for k, v in sorted(self.counters.refused.items())}
        return JSONResponse(
            {
                "status": "ok",
                "stored": self.counters.stored,
                "duplicates": self.counters.duplicates,
                "emitted": self.sender.emitted,
                "refused": refused,
            }
        )

    @contextlib.asynccontextmanager
    async def lifespan(self, app: Starlette) -> AsyncIterator[None]:
        """Keys first (no secret configured: refuse to start, saying what to run), then the
        store and the emitter; on the way out, what is stored is emitted once more."""
        await self.keys.current()
        self.store.start()
        stop = asyncio.Event()
        emitting = asyncio.create_task(self.sender.run(stop))
        try:
            yield
        finally:
            stop.set()
            await emitting
            self.store.stop()


def create_app(
    ledger: Ledger,
    load_settings: Callable[[], WebhookReceiverSettings],
    *,
    path: str = DEFAULT_PATH,
    emitter: Emitter | None = None,
    reload_seconds: float = RELOAD_SECONDS,
    reload_after_refusal: float = RELOAD_AFTER_REFUSAL_SECONDS,
) -> Starlette:
    """The receiver on ``ledger``; ``emitter`` defaults to one emitting to the configured Prefect
    API. The ledger stays the caller's to close."""
    receiver = Receiver(
        KeyRing(load_settings, reload_seconds, reload_after_refusal),
        BatchingStore(ledger),
        emitter or Emitter(ledger, BillerDirectory(ledger)),
    )
    routes = [
        Route(path, receiver.receive, methods=["POST"]),
        Route("/healthz", receiver.health, methods=["GET"]),
    ]
    return Starlette(routes=routes, lifespan=receiver.lifespan)


async def _check_credentials(headers: dict[str, str], keys: KeyRing) -> None:
    try:
        check_credentials(headers, await keys.current())
    except DeliveryRefused:
        fresh = await keys.after_refusal()  # the credentials may have been changed meanwhile
        if fresh is None:
            raise
        check_credentials(headers, fresh)


async def _capped_body(request: Request) -> bytes:
    """The raw body, refused (413) past ``MAX_BODY_BYTES`` without reading it all."""
    declared = request.headers.get("content-length", "")
    if declared.isdigit() and int(declared) > MAX_BODY_BYTES:
        raise DeliveryRefused(413, f"body of {declared} bytes is over {MAX_BODY_BYTES}")
    body = bytearray()
    async for chunk in request.stream():
        body += chunk
        if len(body) > MAX_BODY_BYTES:
            raise DeliveryRefused(413, f"body over {MAX_BODY_BYTES} bytes")
    return bytes(body)


async def _verified_event(body: bytes, headers: dict[str, str], keys: KeyRing) -> NewWebhookEvent:
    now = utc_now()
    try:
        check_delivery(body, headers, await keys.current(), now)
    except DeliveryRefused:
        fresh = await keys.after_refusal()  # the secret may have been rotated meanwhile
        if fresh is None:
            raise
        check_delivery(body, headers, fresh, now)
    return read_delivery(body, headers)
