"""Fault injection (README, The sandbox): ``--faults`` and ``/_sandbox/faults``, over real HTTP.

The module's sandbox starts without faults; each test sets the plan it needs (and the fixture
clears it afterwards). Tests scope their rules to a path so that set-up calls are never faulted.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest
from typer.testing import CliRunner

from billops.cli import app as cli
from sandbox.config import SandboxSettings
from sandbox.faults import FaultSpecError, parse_faults
from sandbox.serve import serve_in_thread
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin


@pytest.fixture(scope="module")
def faulty(private: tuple[SandboxAdmin, str]) -> SandboxAdmin:
    return private[0]


@pytest.fixture
def tokens(faulty: SandboxAdmin) -> Iterator[BillerTokens]:
    yield faulty.connect_biller()
    assert faulty.http.delete("/_sandbox/faults").status_code == 204


def _plan(admin: SandboxAdmin, *rules: dict[str, Any], seed: int = 7) -> dict[str, Any]:
    response = admin.http.post("/_sandbox/faults", json={"seed": seed, "rules": list(rules)})
    assert response.status_code == 200, response.text
    return dict(response.json())


def _injected(admin: SandboxAdmin) -> dict[str, int]:
    return dict(admin.http.get("/_sandbox/faults").json()["injected"])


def _error(response: httpx.Response, status: int) -> dict[str, Any]:
    assert response.status_code == status, response.text
    return dict(response.json()["errors"][0])


# --- the --faults string ------------------------------------------------------------------------


def test_the_faults_string_is_one_global_rule() -> None:
    plan = parse_faults("latency=50ms,error_rate=0.1,rate_limit=0.05,drop_after_commit=0.05,seed=7")

    assert plan.seed == 7
    (rule,) = plan.rules
    assert (rule.path_prefix, rule.method, rule.latency_ms) == ("/api", None, 50)
    assert (rule.error_rate, rule.rate_limit, rule.drop_after_commit) == (0.1, 0.05, 0.05)


def test_the_faults_string_takes_units_scope_and_status() -> None:
    plan = parse_faults(
        "latency=0.2s, jitter=5, retry_after=3s, error_rate=1, error_status=503, "
        "path_prefix=/customers, method=post"
    )

    (rule,) = plan.rules
    assert (rule.latency_ms, rule.jitter_ms, rule.retry_after) == (200, 5, 3)
    assert (rule.error_status, rule.path_prefix, rule.method) == (503, "/api/customers", "POST")


def test_an_empty_faults_string_is_no_faults() -> None:
    assert parse_faults("").rules == []


@pytest.mark.parametrize(
    ("text", "named"),
    [
        ("latency=fast", "'latency=fast'"),
        ("latency=-5ms", "'latency=-5ms'"),
        ("error_rate=1.5", "'error_rate=1.5'"),
        ("rate_limit=often", "'rate_limit=often'"),
        ("bogus=1", "'bogus=1'"),
        ("latency=5ms,drop_after_commit", "'drop_after_commit'"),
        ("seed=x", "'seed=x'"),
        ("error_rate=0.1,error_rate=0.2", "'error_rate=0.2'"),
        ("error_status=404", "'error_status=404'"),
        ("method=FETCH", "'method=FETCH'"),
        ("path_prefix=customers", "'path_prefix=customers'"),
        ("rate_limit=0.6,error_rate=0.6", "'error_rate', 'rate_limit'"),
    ],
)
def test_a_bad_faults_string_names_the_bad_part(text: str, named: str) -> None:
    with pytest.raises(FaultSpecError, match=named):
        parse_faults(text)


def test_the_cli_refuses_a_bad_faults_string_before_serving() -> None:
    result = CliRunner().invoke(cli, ["sandbox", "serve", "--faults", "latency=50ms,oops=1"])

    assert result.exit_code == 2
    assert "'oops=1'" in result.output


def test_faults_given_at_start_up_apply(tmp_path) -> None:
    settings = SandboxSettings(
        port=0,
        database_url=f"sqlite:///{tmp_path / 'sandbox.db'}",
        faults=parse_faults("rate_limit=1,retry_after=4,seed=3"),
    )
    with serve_in_thread(settings) as root, httpx.Client(base_url=root) as http:
        response = http.get("/api/biller")
        shown = http.get("/_sandbox/faults").json()

    assert _error(response, 429)["type"] == "RATE_LIMITED"
    assert response.headers["Retry-After"] == "4"
    assert shown["seed"] == 3
    assert shown["rules"][0]["rateLimit"] == 1
    assert shown["injected"]["rateLimit"] == 1


# --- the admin API ------------------------------------------------------------------------------


def test_faults_are_off_by_default(faulty: SandboxAdmin, tokens: BillerTokens) -> None:
    shown = faulty.http.get("/_sandbox/faults").json()

    assert shown["rules"] == []
    assert set(shown["injected"].values()) == {0}
    assert faulty.api.get("/biller", headers=tokens.headers).status_code == 200


@pytest.mark.parametrize(
    ("rule", "field"),
    [
        ({"errorRate": 2}, "rules[0].errorRate"),
        ({"method": "FETCH"}, "rules[0].method"),
        ({"pathPrefix": "customers"}, "rules[0].pathPrefix"),
        ({"errorStatus": 502}, "rules[0].errorStatus"),
        ({"rateLimit": 0.5, "errorRate": 0.6}, "rules[0]"),
        ({"latency": 5}, "rules[0].latency"),
    ],
)
def test_a_bad_plan_is_refused_naming_the_field(
    faulty: SandboxAdmin, tokens: BillerTokens, rule: dict[str, Any], field: str
) -> None:
    response = faulty.http.post("/_sandbox/faults", json={"rules": [rule]})

    error = _error(response, 422)
    assert (error["type"], error["field"]) == ("VALIDATION_ERROR", field)
    assert faulty.http.get("/_sandbox/faults").json()["rules"] == []


def test_delete_clears_the_faults(faulty: SandboxAdmin, tokens: BillerTokens) -> None:
    _plan(faulty, {"pathPrefix": "/biller", "errorRate": 1})

    assert faulty.http.delete("/_sandbox/faults").status_code == 204
    assert faulty.api.get("/biller", headers=tokens.headers).status_code == 200
    assert faulty.http.get("/_sandbox/faults").json()["rules"] == []


def test_the_admin_api_is_never_faulted(faulty: SandboxAdmin, tokens: BillerTokens) -> None:
    _plan(faulty, {"errorRate": 0.5, "rateLimit": 0.5}, {"pathPrefix": "/_sandbox", "errorRate": 1})

    assert faulty.http.get("/_sandbox/stats").status_code == 200
    assert faulty.http.get("/_sandbox/faults").status_code == 200
    assert faulty.http.post("/_sandbox/billers", json={"name": "Still Ltd"}).status_code == 201
    assert faulty.api.get("/biller", headers=tokens.headers).status_code in (429, 500)


# --- each kind over HTTP ------------------------------------------------------------------------


def test_rate_limit_answers_429_with_retry_after(
    faulty: SandboxAdmin, tokens: BillerTokens
) -> None:
    _plan(faulty, {"pathPrefix": "/biller", "rateLimit": 1, "retryAfter": 2})

    response = faulty.api.get("/biller", headers=tokens.headers)

    assert _error(response, 429)["type"] == "RATE_LIMITED"
    assert response.headers["Retry-After"] == "2"
    assert response.headers["X-Request-Id"]
    assert _injected(faulty)["rateLimit"] == 1


def test_error_rate_answers_500_before_doing_anything(
    faulty: SandboxAdmin, tokens: BillerTokens
) -> None:
    _plan(faulty, {"pathPrefix": "/customers", "method": "POST", "errorRate": 1})
    name = f"Never {uuid.uuid4().hex[:8]}"

    response = faulty.api.post("/customers", headers=tokens.headers, json={"name": name})

    assert _error(response, 500)["type"] == "INTERNAL_ERROR"
    listed = faulty.api.get("/customers", headers=tokens.headers).json()["customers"]
    assert name not in [customer["name"] for customer in listed]
    assert _injected(faulty)["error"] == 1


def test_error_status_503_carries_retry_after(faulty: SandboxAdmin, tokens: BillerTokens) -> None:
    _plan(faulty, {"pathPrefix": "/biller", "errorRate": 1, "errorStatus": 503, "retryAfter": 5})

    # 503 is not among the contract's declared answers: read it with the unchecked client.
    response = faulty.http.get("/api/biller", headers=tokens.headers)

    assert _error(response, 503)["type"] == "SERVICE_UNAVAILABLE"
    assert response.headers["Retry-After"] == "5"


def test_latency_delays_the_answer(faulty: SandboxAdmin, tokens: BillerTokens) -> None:
    _plan(faulty, {"pathPrefix": "/biller", "latencyMs": 300, "jitterMs": 50})

    started = time.monotonic()
    response = faulty.api.get("/biller", headers=tokens.headers)

    assert response.status_code == 200
    assert time.monotonic() - started >= 0.3
    assert _injected(faulty)["latency"] == 1


def test_drop_after_commit_commits_but_never_answers(
    faulty: SandboxAdmin, tokens: BillerTokens
) -> None:
    _plan(faulty, {"pathPrefix": "/customers", "method": "POST", "dropAfterCommit": 1.0})
    name = f"Dropped {uuid.uuid4().hex[:8]}"
    body = {"name": name, "people": [{"firstName": "Pat", "email": "pat@example.com"}]}

    with pytest.raises(httpx.RemoteProtocolError):
        faulty.api.post("/customers", headers=tokens.headers, json=body)

    listed = faulty.api.get("/customers", headers=tokens.headers).json()["customers"]
    assert [customer["name"] for customer in listed].count(name) == 1
    assert _injected(faulty)["dropAfterCommit"] == 1


def test_rules_are_scoped_by_path_prefix_and_method(
    faulty: SandboxAdmin, tokens: BillerTokens
) -> None:
    _plan(faulty, {"pathPrefix": "/api/customers", "method": "POST", "errorRate": 1})

    assert faulty.api.get("/customers", headers=tokens.headers).status_code == 200
    assert faulty.api.get("/biller", headers=tokens.headers).status_code == 200
    posted = faulty.api.post("/customers", headers=tokens.headers, json={"name": "X"})
    assert posted.status_code == 500
    assert faulty.http.get("/_sandbox/faults").json()["requests"] == 1


def test_the_first_matching_rule_decides(faulty: SandboxAdmin, tokens: BillerTokens) -> None:
    _plan(faulty, {"pathPrefix": "/biller", "rateLimit": 1}, {"errorRate": 1})

    assert faulty.api.get("/biller", headers=tokens.headers).status_code == 429
    assert faulty.api.get("/customers", headers=tokens.headers).status_code == 500


def test_the_same_seed_gives_the_same_faults(faulty: SandboxAdmin, tokens: BillerTokens) -> None:
    rule = {"pathPrefix": "/biller", "errorRate": 0.3, "rateLimit": 0.3}

    def sequence(seed: int) -> list[int]:
        _plan(faulty, rule, seed=seed)
        return [faulty.api.get("/biller", headers=tokens.headers).status_code for _ in range(16)]

    first = sequence(7)

    assert sequence(7) == first
    assert {200, 429, 500} <= set(first)
    assert sequence(8) != first
