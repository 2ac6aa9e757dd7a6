"""The retry decision of the client and the OAuth client: a pure function, no I/O.

Given the operation, the attempt number and what came back (a response or a transport
exception), :func:`decide` says whether to retry and after how long, or what to raise. The clients
only do the sending and the sleeping, so all follow exactly the same policy:

- **Idempotent operations** (the contract's ``x-idempotent: true``): connection errors, timeouts,
  408, 409, 429 and 5xx are retried up to ``max_retries`` times. The delay is the server's
  ``Retry-After`` when it gives one (capped at :data:`RETRY_AFTER_CAP` seconds, so a broken or
  hostile header cannot park a nightly job for hours), otherwise a capped exponential backoff with
  jitter (:func:`backoff_delay`). When the budget is spent the typed :class:`ApiError` is raised, or
  :class:`TransportError` (with the httpx exception chained) for connection-level failures.
- **Non-idempotent operations**: only a refusal the server gives *before* acting is retried: 429
  with ``Retry-After``, and failures to connect at all (``ConnectError``, ``ConnectTimeout``,
  ``PoolTimeout``: the request never left this process, so the server cannot have acted on it).
  A timeout after the request was (possibly) sent, a dropped connection or a 5xx raises
  :class:`OutcomeUnknown` and is never resent: the caller's ledger decides
  (docs/conventions.md §6 Writes).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import httpx

from billing_api._exceptions import (
    OutcomeUnknown,
    SentRequest,
    TransportError,
    error_for_response,
    parse_retry_after,
)
from billing_api._operations import Operation

__all__ = [
    "BACKOFF_BASE",
    "BACKOFF_CAP",
    "RETRYABLE_STATUSES",
    "RETRY_AFTER_CAP",
    "Fail",
    "Retry",
    "backoff_delay",
    "decide",
]

#: First backoff delay in seconds; doubles with each attempt.
BACKOFF_BASE = 0.5
#: Longest backoff delay in seconds (before jitter): 0.5, 1, 2, 4, 8, 8, ...
BACKOFF_CAP = 8.0
#: Longest ``Retry-After`` honoured, in seconds; a longer one is shortened to this.
RETRY_AFTER_CAP = 60.0
#: Statuses an idempotent operation retries (408 and 409 are transient by the contract's reading).
RETRYABLE_STATUSES = frozenset({408, 409, 429})

# Failures where the request provably never reached the server: safe to resend even for writes.
_NEVER_SENT: tuple[type[Exception], ...] = (
    httpx.ConnectError,
    httpx.ConnectTimeout,
    httpx.PoolTimeout,
)
# Failures of the connection itself: retried for idempotent operations.
_TRANSIENT: tuple[type[Exception], ...] = (
    httpx.TimeoutException,
    httpx.NetworkError,
    httpx.RemoteProtocolError,
)


@dataclass(frozen=True, slots=True)
class Retry:
    """Send the request again after ``delay`` seconds; ``reason`` is for the log."""

    delay: float
    reason: str


@dataclass(frozen=True, slots=True)
class Fail:
    """Stop and raise ``error`` (with ``cause`` chained as ``__cause__`` when given)."""

    error: BaseException
    cause: BaseException | None = None


def backoff_delay(attempt: int, random: Callable[[], float]) -> float:
    """The delay before retry number ``attempt + 1`` when the server named none.

    ``min(BACKOFF_BASE * 2**attempt, BACKOFF_CAP)`` times a jitter factor in ``[0.5, 1.0)`` drawn
    from ``random`` (so many workers failing together do not retry in lockstep, and no delay
    drops below half of the schedule).
    """
    base: float = min(BACKOFF_BASE * 2.0**attempt, BACKOFF_CAP)
    return base * (0.5 + 0.5 * random())


def _retry_after_delay(response: httpx.Response) -> float | None:
    seconds = parse_retry_after(response.headers.get("retry-after"))
    return None if seconds is None else min(seconds, RETRY_AFTER_CAP)


def sent_request(operation: Operation, request: httpx.Request) -> SentRequest:
    """What was sent, safe to log: the operation, method and URL without its query."""
    return SentRequest(operation.id, request.method, str(request.url.copy_with(query=None)))


def decide(
    operation: Operation,
    attempt: int,
    max_retries: int,
    request: httpx.Request,
    outcome: httpx.Response | httpx.TransportError,
    random: Callable[[], float],
) -> Retry | Fail | None:
    """What to do after ``attempt`` (0 for the first send) ended with ``outcome``.

    ``None`` means success (a 2xx response: return it). ``outcome`` is either the response or the
    httpx transport exception the send raised.
    """
    budget_left = attempt < max_retries
    if isinstance(outcome, httpx.Response):
        return _decide_response(operation, attempt, budget_left, request, outcome, random)
    return _decide_exception(operation, attempt, budget_left, request, outcome, random)


def _decide_response(
    operation: Operation,
    attempt: int,
    budget_left: bool,
    request: httpx.Request,
    response: httpx.Response,
    random: Callable[[], float],
) -> Retry | Fail | None:
    status = response.status_code
    if 200 <= status < 300:
        return None
    error = error_for_response(response)
    retry_after = _retry_after_delay(response)
    reason = f"HTTP {status}"
    if operation.idempotent:
        if budget_left and (status in RETRYABLE_STATUSES or status >= 500):
            delay = retry_after if retry_after is not None else backoff_delay(attempt, random)
            return Retry(delay, reason)
        return Fail(error)
    # Non-idempotent: a 429 with Retry-After is a refusal before acting; a 5xx may come after.
    if status == 429 and retry_after is not None:
        return Retry(retry_after, reason) if budget_left else Fail(error)
    if status >= 500:
        cause = f"HTTP {status}" + (f" (request id {error.request_id})" if error.request_id else "")
        return Fail(OutcomeUnknown(sent_request(operation, request), cause), error)
    return Fail(error)


def _decide_exception(
    operation: Operation,
    attempt: int,
    budget_left: bool,
    request: httpx.Request,
    exc: httpx.TransportError,
    random: Callable[[], float],
) -> Retry | Fail:
    kind = type(exc).__name__
    never_sent = isinstance(exc, _NEVER_SENT)
    retryable = isinstance(exc, _TRANSIENT) and (operation.idempotent or never_sent)
    if retryable and budget_left:
        return Retry(backoff_delay(attempt, random), kind)
    if retryable or not isinstance(exc, _TRANSIENT):
        # Spent budget, or a failure no retry can mend (a bad proxy, an unsupported scheme).
        message = (
            f"{request.method} {request.url.copy_with(query=None)} ({operation.id}) failed: "
            f"{kind}" + (f" after {attempt + 1} attempts" if retryable else "")
        )
        arrived = retryable and not never_sent  # the last attempt left; its answer was lost
        return Fail(TransportError(message, may_have_arrived=arrived), exc)
    return Fail(OutcomeUnknown(sent_request(operation, request), kind), exc)
