"""The retry policy against a real sandbox injecting faults over HTTP.

Delays are asserted through the injected ``sleep`` (it records, never waits) and an injected
``random`` (the jitter); the sandbox's seeded fault plan makes the sequence of faults reproducible.
"""

from __future__ import annotations

import logging
import socket
import uuid
from typing import Any

import httpx
import pytest

from billing_api import StaticTokenAuth
from billing_api._base_client import SyncAPIClient
from billing_api._exceptions import (
    Conflict,
    NotFound,
    OutcomeUnknown,
    RateLimited,
    RequestTimeout,
    SentRequest,
    ServerError,
    TransportError,
)
from billing_api._operations import OPERATIONS
from billing_api._retries import Fail, Retry, backoff_delay, decide
from tests.support.clocks import Sleeps
from tests.support.faults import fault_counts, plan_faults
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

JITTER = 0.25  # random() -> 0.25 gives the jitter factor 0.5 + 0.5 * 0.25 = 0.625
PERSON = [{"firstName": "Pat", "email": "pat@example.com"}]


def _client(
    admin: SandboxAdmin, tokens: BillerTokens, sleeps: Sleeps, **options: Any
) -> SyncAPIClient:
    options.setdefault("random", lambda: JITTER)
    return SyncAPIClient(
        f"{admin.root}/api", StaticTokenAuth(tokens.access_token), sleep=sleeps, **options
    )


def _customer_body() -> dict[str, Any]:
    return {"name": f"Retry {uuid.uuid4().hex[:8]}", "people": PERSON}


def _count_named(client: SyncAPIClient, name: str) -> int:
    listed = client.request_json("customers.list", params={"size": 200})["customers"]
    return [customer["name"] for customer in listed].count(name)


# --- idempotent reads ---------------------------------------------------------------------------


def test_reads_succeed_through_429s_waiting_retry_after(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/biller", "rateLimit": 0.5, "retryAfter": 2})

    with _client(faulty, faulty_tokens, sleeps, max_retries=10) as client:
        ids = {client.request_json("biller.retrieve")["id"] for _ in range(10)}

    assert ids == {faulty_tokens.biller_id}
    injected = fault_counts(faulty)["rateLimit"]
    assert injected >= 1
    assert sleeps.delays == [2.0] * injected


def test_reads_succeed_through_503s_waiting_retry_after(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    rule = {"pathPrefix": "/biller", "errorRate": 0.5, "errorStatus": 503, "retryAfter": 3}
    plan_faults(faulty, rule)

    with _client(faulty, faulty_tokens, sleeps, max_retries=10) as client:
        for _ in range(10):
            assert client.request_json("biller.retrieve")["id"] == faulty_tokens.biller_id

    injected = fault_counts(faulty)["error"]
    assert injected >= 1
    assert sleeps.delays == [3.0] * injected


def test_a_500_without_retry_after_backs_off_exponentially_then_raises(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/biller", "errorRate": 1})
    sent_ids: list[str] = []
    hooks = {"request": [lambda request: sent_ids.append(request.headers["X-Request-Id"])]}

    with (
        httpx.Client(event_hooks=hooks) as http,
        _client(faulty, faulty_tokens, sleeps, max_retries=3, http_client=http) as client,
        pytest.raises(ServerError) as raised,
    ):
        client.request("biller.retrieve")

    assert sleeps.delays == [0.5 * 0.625, 1.0 * 0.625, 2.0 * 0.625]
    error = raised.value
    assert (error.status_code, error.error_types) == (500, ["INTERNAL_ERROR"])
    # One logical request, one id, kept across its four attempts and echoed by the service.
    assert len(sent_ids) == 4 and set(sent_ids) == {error.request_id}
    assert error.request_id and error.request_id.startswith("billops-")
    assert fault_counts(faulty)["requests"] == 4


def test_exhausted_429s_raise_rate_limited_with_the_servers_answer(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/biller", "rateLimit": 1, "retryAfter": 2})

    with _client(faulty, faulty_tokens, sleeps) as client, pytest.raises(RateLimited) as raised:
        client.request("biller.retrieve")

    error = raised.value
    assert (error.status_code, error.error_types, error.retry_after) == (429, ["RATE_LIMITED"], 2)
    assert error.request_id and error.request_id in str(error)
    assert sleeps.delays == [2.0, 2.0, 2.0]  # DEFAULT_MAX_RETRIES = 3
    assert fault_counts(faulty)["requests"] == 4


def test_a_huge_retry_after_is_capped_at_sixty_seconds(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/biller", "rateLimit": 1, "retryAfter": 3600})

    with (
        _client(faulty, faulty_tokens, sleeps, max_retries=1) as client,
        pytest.raises(RateLimited) as raised,
    ):
        client.request("biller.retrieve")

    assert raised.value.retry_after == 3600
    assert sleeps.delays == [60.0]


def test_read_timeouts_of_an_idempotent_read_are_retried_then_raise_transport_error(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/biller", "latencyMs": 400})

    with (
        _client(faulty, faulty_tokens, sleeps, max_retries=2, timeout=0.1) as client,
        pytest.raises(TransportError) as raised,
    ):
        client.request("biller.retrieve")

    assert isinstance(raised.value.__cause__, httpx.ReadTimeout)
    assert raised.value.may_have_arrived  # every attempt left; the answers were lost
    assert "biller.retrieve" in str(raised.value) and "3 attempts" in str(raised.value)
    assert sleeps.delays == [0.5 * 0.625, 1.0 * 0.625]
    assert fault_counts(faulty)["requests"] == 3


def test_retries_are_logged_without_the_token(
    faulty: SandboxAdmin,
    faulty_tokens: BillerTokens,
    sleeps: Sleeps,
    caplog: pytest.LogCaptureFixture,
) -> None:
    plan_faults(faulty, {"pathPrefix": "/biller", "rateLimit": 1, "retryAfter": 2})
    caplog.set_level(logging.DEBUG)

    with (
        _client(faulty, faulty_tokens, sleeps, max_retries=1) as client,
        pytest.raises(RateLimited),
    ):
        client.request("biller.retrieve")

    assert "biller.retrieve" in caplog.text and "retrying in 2.00s" in caplog.text
    assert faulty_tokens.access_token not in caplog.text


# --- non-idempotent writes ----------------------------------------------------------------------


def test_a_dropped_post_raises_outcome_unknown_and_is_not_resent(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/customers", "method": "POST", "dropAfterCommit": 1})
    body = _customer_body()

    with _client(faulty, faulty_tokens, sleeps) as client:
        with pytest.raises(OutcomeUnknown) as raised:
            client.request("customers.create", json=body)
        created = _count_named(client, body["name"])

    error = raised.value
    assert error.request == SentRequest("customers.create", "POST", f"{faulty.root}/api/customers")
    assert isinstance(error.__cause__, httpx.RemoteProtocolError)
    assert sleeps.delays == []
    assert created == 1  # it did take effect: exactly why it must not be resent blindly
    requests = faulty.biller_stats(faulty_tokens.biller_id)["requests"]
    assert requests["customers.create"] == 1
    assert fault_counts(faulty)["requests"] == 1


def test_a_500_on_a_post_raises_outcome_unknown_carrying_the_error(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/customers", "method": "POST", "errorRate": 1})

    with (
        _client(faulty, faulty_tokens, sleeps) as client,
        pytest.raises(OutcomeUnknown) as raised,
    ):
        client.request("customers.create", json=_customer_body())

    cause = raised.value.__cause__
    assert isinstance(cause, ServerError) and cause.status_code == 500
    assert cause.request_id and cause.request_id in str(raised.value)
    assert sleeps.delays == []
    assert fault_counts(faulty)["requests"] == 1


def test_a_timed_out_post_raises_outcome_unknown_and_is_not_resent(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/customers", "method": "POST", "latencyMs": 400})

    with (
        _client(faulty, faulty_tokens, sleeps, timeout=0.1) as client,
        pytest.raises(OutcomeUnknown) as raised,
    ):
        client.request("customers.create", json=_customer_body())

    assert isinstance(raised.value.__cause__, httpx.ReadTimeout)
    assert "ReadTimeout" in str(raised.value) and "not resent" in str(raised.value)
    assert sleeps.delays == []
    assert fault_counts(faulty)["requests"] == 1


def test_a_post_refused_with_429_and_retry_after_is_retried_and_created_once(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    # Seed 1: the first draw (0.13) refuses, the second (0.85) lets the create through.
    rule = {"pathPrefix": "/customers", "method": "POST", "rateLimit": 0.5, "retryAfter": 2}
    plan_faults(faulty, rule, seed=1)
    body = _customer_body()

    with _client(faulty, faulty_tokens, sleeps) as client:
        created = client.request_json("customers.create", json=body)
        count = _count_named(client, body["name"])

    assert created["name"] == body["name"] and count == 1
    assert fault_counts(faulty)["rateLimit"] == 1
    assert sleeps.delays == [2.0]
    requests = faulty.biller_stats(faulty_tokens.biller_id)["requests"]
    assert requests["customers.create"] == 1


def test_a_post_refused_with_429_until_the_budget_ends_raises_rate_limited(
    faulty: SandboxAdmin, faulty_tokens: BillerTokens, sleeps: Sleeps
) -> None:
    plan_faults(faulty, {"pathPrefix": "/customers", "method": "POST", "rateLimit": 1})

    with (
        _client(faulty, faulty_tokens, sleeps, max_retries=2) as client,
        pytest.raises(RateLimited),
    ):
        client.request("customers.create", json=_customer_body())

    assert sleeps.delays == [1.0, 1.0]  # the sandbox's default Retry-After is 1
    assert fault_counts(faulty)["requests"] == 3


def _refused_port() -> int:
    """A loopback port nothing listens on (bound, then released): connecting is refused."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def test_a_post_that_never_connected_is_retried_then_raises_transport_error(
    sleeps: Sleeps,
) -> None:
    # A refused connection means the request never left, so even a create is safe to resend.
    base_url = f"http://127.0.0.1:{_refused_port()}/api"

    with (
        SyncAPIClient(base_url, max_retries=2, sleep=sleeps, random=lambda: 0.0) as client,
        pytest.raises(TransportError) as raised,
    ):
        client.request("customers.create", json=_customer_body())

    assert isinstance(raised.value.__cause__, httpx.ConnectError)
    assert not raised.value.may_have_arrived
    assert sleeps.delays == [0.25, 0.5]


# --- the decision itself, for answers the sandbox never gives (pure function) ------------------

READ, WRITE = OPERATIONS["customers.list"], OPERATIONS["customers.create"]


def _answer(status: int, operation: Any = WRITE, **headers: str) -> httpx.Response:
    request = httpx.Request(operation.method, f"http://service.test/api{operation.path}")
    return httpx.Response(status, headers=headers, json={"errors": []}, request=request)


def test_backoff_doubles_from_half_a_second_up_to_eight_times_the_jitter() -> None:
    assert [backoff_delay(n, lambda: 0.0) for n in range(7)] == [0.25, 0.5, 1, 2, 4, 4, 4]
    assert [backoff_delay(n, lambda: 1.0) for n in range(7)] == [0.5, 1, 2, 4, 8, 8, 8]


@pytest.mark.parametrize(
    ("operation", "status", "headers", "expected"),
    [
        (READ, 408, {}, Retry(0.5 * 0.625, "HTTP 408")),
        (READ, 409, {}, Retry(0.5 * 0.625, "HTTP 409")),
        (READ, 502, {"Retry-After": "7"}, Retry(7.0, "HTTP 502")),
        (READ, 404, {}, NotFound),
        (WRITE, 429, {}, RateLimited),  # no Retry-After: not a refusal the policy may resend
        (WRITE, 429, {"Retry-After": "soon"}, RateLimited),
        (WRITE, 429, {"Retry-After": "4"}, Retry(4.0, "HTTP 429")),
        (WRITE, 408, {}, RequestTimeout),
        (WRITE, 409, {}, Conflict),
        (WRITE, 503, {"Retry-After": "1"}, OutcomeUnknown),
    ],
)
def test_what_each_answer_decides(
    operation: Any, status: int, headers: dict[str, str], expected: Any
) -> None:
    response = _answer(status, operation, **headers)

    decision = decide(operation, 0, 3, response.request, response, lambda: JITTER)

    if isinstance(expected, Retry):
        assert decision == expected
    else:
        assert isinstance(decision, Fail) and type(decision.error) is expected


@pytest.mark.parametrize(
    ("exc", "operation", "expected"),
    [
        (httpx.ConnectTimeout("no connection"), WRITE, Retry),  # never left: safe to resend
        (httpx.PoolTimeout("no free connection"), WRITE, Retry),
        (httpx.WriteError("broken pipe"), WRITE, OutcomeUnknown),  # maybe partly received
        (httpx.ReadError("reset"), WRITE, OutcomeUnknown),
        (httpx.WriteTimeout("slow"), READ, Retry),
        (httpx.UnsupportedProtocol("ftp://"), READ, TransportError),  # no retry can mend it
    ],
)
def test_what_each_transport_failure_decides(exc: Exception, operation: Any, expected: Any) -> None:
    request = _answer(200, operation).request

    decision = decide(operation, 0, 3, request, exc, lambda: JITTER)  # type: ignore[arg-type]

    if expected is Retry:
        assert isinstance(decision, Retry)
    else:
        assert isinstance(decision, Fail) and type(decision.error) is expected
        assert decision.cause is exc


def test_the_last_attempt_raises_instead_of_retrying() -> None:
    response = _answer(503, READ)

    decision = decide(READ, 3, 3, response.request, response, lambda: JITTER)

    assert isinstance(decision, Fail) and isinstance(decision.error, ServerError)
