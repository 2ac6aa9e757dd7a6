"""Webhook delivery: events to subscriptions, signed HTTP POSTs, retries with backoff.

A background worker (one dispatcher thread and a few sender threads per sandbox app, started
and stopped by the app's lifespan) never runs inside a request, and never holds a database
transaction while it waits for a target:

1. **fan-out**: each new event becomes one delivery per enabled subscription that lists its kind
   (and existed when it happened), of every app with a live grant from the event's biller;
2. **attempt**: a due delivery is read and signed in one short transaction, POSTed with none
   open, and its outcome recorded in another. Any 2xx is success; anything else, a timeout or a
   connection error schedules the next attempt after an exponential backoff with jitter, until
   ``webhookMaxAttempts`` or ``webhookRetryWindowSeconds`` run out (FAILED). A subscription
   disabled or deleted meanwhile gets no further attempts (CANCELLED).

Times here are wall time, not the sandbox clock: receivers check the signature timestamp against
their own clock, and a retry schedule on a clock that jumps by days would make no sense.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import logging
import queue
import random
import threading
import time
import uuid
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from itertools import count

import httpx
from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sandbox.config import RuntimeConfig
from sandbox.core import state
from sandbox.core.db import session_scope
from sandbox.core.timefmt import iso
from sandbox.models import Grant, Webhook
from sandbox.models.webhooks import WebhookAttempt, WebhookDelivery, WebhookEvent
from sandbox.webhooks import events
from sandbox.webhooks import settings as webhook_settings

log = logging.getLogger(__name__)
THREAD_PREFIX = "sandbox-webhooks"
POLL_SECONDS = 0.05
SENDERS = 4
JITTER = 0.5  # each wait is stretched by up to this fraction, at random
OPEN = ("PENDING", "RETRYING")
USER_AGENT = "billops-sandbox-webhooks/1"
_numbers = count(1)


def wall_now() -> datetime:
    return datetime.now(UTC)


def sign(secret: str, body: bytes, timestamp: str) -> str:
    """``base64(HMAC-SHA256(secret as UTF-8, body + timestamp as UTF-8))`` (contract
    ``WebhookDelivery``)."""
    mac = hmac.new(secret.encode("utf-8"), body + timestamp.encode("utf-8"), hashlib.sha256)
    return base64.b64encode(mac.digest()).decode("ascii")


def backoff_seconds(attempt: int, config: RuntimeConfig, rng: random.Random) -> float:
    """The wait after failed attempt number ``attempt`` (1-based): doubling from the base, each
    stretched by up to ``JITTER`` at random, capped. Before the cap every wait is longer than
    the one before whatever the jitter (2x > 1.5x)."""
    delay = config.webhook_retry_base_seconds * 2 ** min(attempt - 1, 60)
    return float(min(config.webhook_retry_max_seconds, delay * (1 + JITTER * rng.random())))


def body_bytes(event: WebhookEvent) -> bytes:
    """The payload as sent: compact JSON, UTF-8 (the same bytes on every attempt)."""
    return json.dumps(events.payload(event), separators=(",", ":"), ensure_ascii=False).encode()


# --- fan-out ------------------------------------------------------------------------------------


def _subscriptions(session: Session, event: WebhookEvent) -> list[Webhook]:
    apps = select(Grant.client_id).where(
        Grant.biller_id == event.biller_id, Grant.revoked_at.is_(None)
    )
    hooks = session.scalars(
        select(Webhook)
        .where(
            Webhook.client_id.in_(apps),
            Webhook.enabled.is_(True),
            Webhook.created_at <= event.occurred_at,
        )
        .order_by(Webhook.created_at, Webhook.id)
    )
    return [hook for hook in hooks if event.kind in (hook.events or [])]


def fan_out(session: Session, limit: int = 200) -> int:
    """Turn new events into deliveries; the number of events handled."""
    pending = session.scalars(
        select(WebhookEvent)
        .where(WebhookEvent.fanned_out.is_(False))
        .order_by(WebhookEvent.seq)
        .limit(limit)
    ).all()
    now = wall_now()
    for event in pending:
        for hook in _subscriptions(session, event):
            session.add(
                WebhookDelivery(
                    id=str(uuid.uuid4()),
                    event_id=event.id,
                    client_id=hook.client_id,
                    webhook_id=hook.id,
                    url=hook.url,
                    status="PENDING",
                    attempts=0,
                    next_attempt_at=now,
                    created_at=now,
                )
            )
        event.fanned_out = True
    return len(pending)


def due_deliveries(session: Session, skip: set[str], limit: int = 50) -> list[str]:
    """Ids of the deliveries whose next attempt is due, oldest due first."""
    rows = session.scalars(
        select(WebhookDelivery.id)
        .where(WebhookDelivery.status.in_(OPEN), WebhookDelivery.next_attempt_at <= wall_now())
        .order_by(WebhookDelivery.next_attempt_at)
        .limit(limit + len(skip))
    )
    return [row for row in rows if row not in skip][:limit]


# --- one attempt --------------------------------------------------------------------------------


@dataclass
class PreparedAttempt:
    delivery_id: str
    instance_id: str
    url: str
    body: bytes
    headers: dict[str, str]
    timeout: float
    signed: bool
    started_at: datetime = field(default_factory=wall_now)


def _finish(delivery: WebhookDelivery, status: str, error: str | None = None) -> None:
    delivery.status = status
    delivery.next_attempt_at = None
    delivery.finished_at = wall_now()
    if error is not None:
        delivery.last_error = error


def prepare(session: Session, delivery_id: str, config: RuntimeConfig) -> PreparedAttempt | None:
    """The request of the delivery's next attempt, or None when it must not be attempted (and
    is then marked so)."""
    delivery = session.get(WebhookDelivery, delivery_id)
    if delivery is None or delivery.status not in OPEN:
        return None
    hook = session.get(Webhook, delivery.webhook_id)
    if hook is None or not hook.enabled:
        _finish(delivery, "CANCELLED", "the subscription was disabled or deleted")
        return None
    event = session.scalars(select(WebhookEvent).where(WebhookEvent.id == delivery.event_id)).one()
    body = body_bytes(event)
    timestamp = iso(wall_now())
    instance_id = str(uuid.uuid4())
    headers = {
        **webhook_settings.target_auth_headers(session, delivery.client_id),
        "Content-Type": "application/json; charset=utf-8",
        "User-Agent": USER_AGENT,
        "adfin-webhook-id": event.id,
        "adfin-webhook-instance-id": instance_id,
        "adfin-webhook-type": event.kind,
        "adfin-webhook-signature-timestamp": timestamp,
    }
    # The secret current at the attempt signs it, retries of older events included [I].
    secret = webhook_settings.signing_secret(session, delivery.client_id)
    if secret is not None:
        headers["adfin-webhook-signature"] = sign(secret, body, timestamp)
    return PreparedAttempt(
        delivery_id=delivery.id,
        instance_id=instance_id,
        url=hook.url,
        body=body,
        headers=headers,
        timeout=config.webhook_timeout_seconds,
        signed=secret is not None,
    )


@dataclass(frozen=True)
class Outcome:
    status_code: int | None
    error: str | None
    duration_ms: float

    @property
    def succeeded(self) -> bool:
        return self.status_code is not None and 200 <= self.status_code < 300


def post(client: httpx.Client, attempt: PreparedAttempt) -> Outcome:
    """POST the attempt; never raises (a timeout or connection error is an outcome)."""
    started = time.monotonic()
    try:
        response = client.post(
            attempt.url, content=attempt.body, headers=attempt.headers, timeout=attempt.timeout
        )
        status, error = response.status_code, None
    except httpx.TimeoutException:
        status, error = None, f"timed out after {attempt.timeout:g} s"
    except httpx.HTTPError as exc:
        status, error = None, f"{type(exc).__name__}: {exc}"[:500]
    return Outcome(status, error, (time.monotonic() - started) * 1000)


def record(
    session: Session,
    attempt: PreparedAttempt,
    outcome: Outcome,
    config: RuntimeConfig,
    rng: random.Random,
) -> None:
    """Store the attempt and decide what comes next for its delivery."""
    delivery = session.get(WebhookDelivery, attempt.delivery_id)
    if delivery is None:  # the sandbox was reset meanwhile
        return
    delivery.attempts += 1
    delivery.last_status_code = outcome.status_code
    delivery.last_error = outcome.error
    delay: float | None = None
    if outcome.succeeded:
        _finish(delivery, "SUCCEEDED")
    else:
        delay = backoff_seconds(delivery.attempts, config, rng)
        retry_at = wall_now() + timedelta(seconds=delay)
        window_end = delivery.created_at + timedelta(seconds=config.webhook_retry_window_seconds)
        if delivery.attempts >= config.webhook_max_attempts or retry_at > window_end:
            delay = None
            _finish(delivery, "FAILED")
        else:
            delivery.status = "RETRYING"
            delivery.next_attempt_at = retry_at
    session.add(
        WebhookAttempt(
            instance_id=attempt.instance_id,
            delivery_id=attempt.delivery_id,
            number=delivery.attempts,
            started_at=attempt.started_at,
            duration_ms=round(outcome.duration_ms, 3),
            status_code=outcome.status_code,
            error=outcome.error,
            succeeded=outcome.succeeded,
            signed=attempt.signed,
            next_delay_seconds=delay,
        )
    )


# --- the worker ---------------------------------------------------------------------------------


def _new_client() -> httpx.Client:
    # Direct connections only: a proxy from the environment must not sit between the sandbox
    # and a loopback receiver. Redirects are not followed: a 3xx is not an acknowledgement.
    return httpx.Client(trust_env=False, follow_redirects=False)


class WebhookDeliveryWorker:
    """The dispatcher thread (fan-out, finding due deliveries) and ``senders`` sender threads
    (one attempt each at a time), so a slow target never holds up the others for long."""

    def __init__(
        self,
        sessions: sessionmaker[Session],
        defaults: RuntimeConfig,
        *,
        poll_seconds: float = POLL_SECONDS,
        senders: int = SENDERS,
    ) -> None:
        self._sessions = sessions
        self._defaults = defaults
        self._poll_seconds = poll_seconds
        self._senders = senders
        self._stop = threading.Event()
        self._queue: queue.Queue[str | None] = queue.Queue()
        self._inflight: set[str] = set()
        self._lock = threading.Lock()
        self._threads: list[threading.Thread] = []
        self._rng = random.Random()
        self._client = _new_client()

    @property
    def running(self) -> bool:
        return any(thread.is_alive() for thread in self._threads)

    def start(self) -> None:
        if self.running:
            return
        self._stop.clear()
        if self._client.is_closed:
            self._client = _new_client()
        self._queue, self._inflight = queue.Queue(), set()
        number = next(_numbers)
        targets = [(self._dispatch, "dispatch")]
        targets += [(self._send, f"send-{i}") for i in range(self._senders)]
        self._threads = [
            threading.Thread(target=target, name=f"{THREAD_PREFIX}-{number}-{name}", daemon=True)
            for target, name in targets
        ]
        for thread in self._threads:
            thread.start()

    def stop(self, timeout: float = 5.0) -> None:
        """Stop picking up work; an attempt in flight is abandoned after ``timeout`` (its
        delivery stays due and is attempted again by the next start)."""
        self._stop.set()
        for _ in self._threads:
            self._queue.put(None)
        deadline = time.monotonic() + timeout
        for thread in self._threads:
            thread.join(max(0.0, deadline - time.monotonic()))
        self._threads = []
        self._client.close()

    def _config(self, session: Session) -> RuntimeConfig:
        return state.runtime_config(session, self._defaults)

    def _dispatch(self) -> None:
        while not self._stop.is_set():
            try:
                worked = self.run_once()
            except Exception:  # the worker must outlive any one failure; the log says what
                log.exception("webhook delivery: polling failed")
                worked = False
            if not worked:
                self._stop.wait(self._poll_seconds)

    def run_once(self) -> bool:
        """Fan out new events and queue the due deliveries; True when there was any work."""
        with self._lock:
            busy = set(self._inflight)
        with session_scope(self._sessions) as session:  # one short transaction per poll
            fanned = fan_out(session)
            session.flush()
            due = due_deliveries(session, busy)
        with self._lock:
            self._inflight.update(due)
        for delivery_id in due:
            self._queue.put(delivery_id)
        return bool(fanned or due)

    def _send(self) -> None:
        while not self._stop.is_set():
            delivery_id = self._queue.get()
            if delivery_id is None:
                return
            try:
                self.attempt(delivery_id)
            except Exception:
                log.exception("webhook delivery %s: the attempt failed", delivery_id)
            finally:
                with self._lock:
                    self._inflight.discard(delivery_id)

    def attempt(self, delivery_id: str) -> None:
        """One attempt of one delivery: prepare, POST (no transaction open), record."""
        with session_scope(self._sessions) as session:
            config = self._config(session)
            prepared = prepare(session, delivery_id, config)
        if prepared is None:
            return
        outcome = post(self._client, prepared)
        if self._stop.is_set():
            return  # shutting down: the delivery stays due for the next start
        with session_scope(self._sessions) as session:
            record(session, prepared, outcome, self._config(session), self._rng)
