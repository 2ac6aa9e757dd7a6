"""The admin API (``/_sandbox``), request ids, counters and the error shape of unknown paths."""

from __future__ import annotations

import asyncio
from datetime import date, timedelta

import httpx
import pytest

from sandbox.app import create_app
from sandbox.config import SandboxSettings
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox


def test_every_response_carries_a_request_id(admin: SandboxAdmin, biller_token) -> None:
    answers = [
        admin.api.get("/biller", headers=biller_token.headers),  # 200
        admin.api.get("/biller"),  # 401
        admin.api.get("/no/such/path"),  # 404
        admin.api.delete("/biller", headers=biller_token.headers),  # 405
        admin.token(biller_token.app, grant_type="nope"),  # OAuth error
        admin.http.get("/_sandbox/stats"),  # admin
        admin.http.get("/auth/login"),  # consent page error
    ]
    ids = [a.headers.get("x-request-id") for a in answers]
    assert all(ids), ids
    assert len(set(ids)) == len(ids)


@pytest.mark.parametrize(
    ("sent", "echoed"),
    [("ops-2am-incident-7", True), ("x" * 128, True), ("x" * 129, False), ("has space", False)],
)
def test_request_id_echoes_a_well_formed_caller_id(admin: SandboxAdmin, sent, echoed) -> None:
    got = admin.api.get("/biller", headers={"X-Request-Id": sent}).headers["x-request-id"]
    assert (got == sent) is echoed


def test_unknown_path_and_method_answer_the_contract_error_body(admin, biller_token) -> None:
    missing = admin.api.get("/no/such/path")
    assert missing.status_code == 404
    assert missing.json()["errors"][0]["type"] == "NOT_FOUND"
    wrong_method = admin.api.delete("/biller", headers=biller_token.headers)
    assert wrong_method.status_code == 405
    assert wrong_method.json()["errors"][0]["type"] == "METHOD_NOT_ALLOWED"


def test_stats_count_requests_per_operation_and_grants(admin: SandboxAdmin, biller_token) -> None:
    for _ in range(3):
        admin.api.get("/biller", headers=biller_token.headers)
    admin.api.patch(
        "/biller",
        headers=biller_token.headers,
        json=[{"op": "replace", "path": "/alias", "value": "A"}],
    )

    stats = admin.biller_stats(biller_token.biller_id)

    assert stats["requests"]["biller.retrieve"] == 3
    assert stats["requests"]["biller.update"] == 1
    assert stats["tokenGrants"] == {"authorization_code": 1}
    assert stats["requests"]["oauth.token"] == 1
    platform = admin.platform_token(biller_token.app)
    app_stats = admin.stats()["apps"][platform.app.client_id]
    assert app_stats["tokenGrants"] == {"client_credentials": 1}


def test_config_changes_are_validated(admin: SandboxAdmin) -> None:
    bad = admin.http.post("/_sandbox/config", json={"accessTokenTtl": 0})
    assert bad.status_code == 422
    assert bad.json()["errors"][0]["field"] == "accessTokenTtl"
    unknown = admin.http.post("/_sandbox/config", json={"tokenTtl": 5})
    assert unknown.status_code == 422


def test_clock_moves_forward_only(tmp_path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/s.db") as admin:
        start = admin.http.get("/_sandbox/clock").json()
        moved = admin.advance_clock(days=2)
        assert moved["offsetSeconds"] >= 2 * 86400
        assert moved["now"] > start["now"]
        back = admin.http.post("/_sandbox/clock/advance", json={"until": "2001-01-01"})
        assert back.status_code == 422
        target = (date.fromisoformat(moved["now"][:10]) + timedelta(days=5)).isoformat()
        until = admin.advance_clock(until=target)
        assert until["now"].startswith(f"{target}T00:00:0")
        too_far = admin.http.post("/_sandbox/clock/advance", json={"days": 3700})
        assert too_far.status_code == 422
        too_late = admin.http.post("/_sandbox/clock/advance", json={"until": "2199-01-01"})
        assert too_late.status_code == 422


def test_reset_forgets_apps_billers_and_tokens(tmp_path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/s.db", accessTokenTtl=60) as admin:
        tokens = admin.connect_biller()
        admin.configure(accessTokenTtl=99)
        admin.reset()

        assert admin.stats() == {"billers": {}, "apps": {}, "anonymous": {}}
        assert admin.api.get("/biller", headers=tokens.headers).status_code == 401
        assert admin.http.get("/_sandbox/config").json()["accessTokenTtl"] == 60


def test_admin_code_endpoint_checks_its_input(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    unknown_biller = admin.http.post(
        f"/_sandbox/apps/{app.client_id}/authorization_codes", json={"billerId": "nope"}
    )
    assert unknown_biller.status_code == 404
    unknown_app = admin.http.post(
        "/_sandbox/apps/nope/authorization_codes", json={"billerId": admin.create_biller()}
    )
    assert unknown_app.status_code == 404


@pytest.mark.parametrize(("allow_remote", "status"), [(False, 403), (True, 200)])
def test_admin_api_answers_loopback_clients_only_by_default(tmp_path, allow_remote, status):
    # A non-loopback client address cannot be produced over real sockets on this machine, so this
    # one test drives the real app in-process (httpx's ASGI transport) with a chosen client address.
    app = create_app(
        SandboxSettings(database_url=f"sqlite:///{tmp_path}/s.db", admin_allow_remote=allow_remote)
    )

    async def call() -> httpx.Response:
        transport = httpx.ASGITransport(app=app, client=("10.1.2.3", 40000))
        async with httpx.AsyncClient(transport=transport, base_url="http://sandbox") as client:
            return await client.get("/_sandbox/stats")

    response = asyncio.run(call())
    assert response.status_code == status


def test_a_bad_query_parameter_is_400_naming_it(admin: SandboxAdmin, biller_token) -> None:
    response = admin.api.get("/oauth2/authorization", headers=biller_token.headers)
    assert response.status_code == 400
    assert response.json()["errors"] == [
        {"type": "BAD_REQUEST", "detail": "Field required", "field": "clientId"}
    ]


def test_reset_also_clears_injected_faults(tmp_path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/s.db") as admin:
        plan = admin.http.post("/_sandbox/faults", json={"rules": [{"errorRate": 1.0}]})
        assert plan.status_code == 200, plan.text
        assert admin.api.get("/biller").status_code == 500
        admin.reset()
        assert admin.api.get("/biller").status_code == 401


def test_clock_start_pins_a_new_sandbox_and_a_running_clock_is_kept(tmp_path) -> None:
    url = f"sqlite:///{tmp_path}/s.db"
    with running_sandbox(url, clock_start=date(2026, 1, 5)) as admin:
        assert admin.http.get("/_sandbox/clock").json()["now"].startswith("2026-01-05T06:0")
        admin.advance_clock(days=3)
    with running_sandbox(url, clock_start=date(2026, 1, 5)) as admin:
        assert admin.http.get("/_sandbox/clock").json()["now"].startswith("2026-01-08T06:0")
