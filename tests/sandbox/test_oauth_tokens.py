"""OAuth rules of the contract, over HTTP against a running sandbox: codes, refresh rotation,
client credentials, client authentication, revoke. (The consent page: test_consent.py.)"""

from __future__ import annotations

import base64
import hashlib
import secrets
from concurrent.futures import ThreadPoolExecutor

import pytest

from tests.support.sandbox_admin import SandboxAdmin, running_sandbox


def _error(response):  # the RFC 6749 error code of a failed token call
    assert response.headers["content-type"].startswith("application/json")
    return response.json()["error"]


# --- authorization_code ---------------------------------------------------------------------


def test_code_exchange_returns_access_and_refresh_token(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    biller_id = admin.create_biller("Acme Ltd")
    code = admin.authorization_code(app, biller_id)

    response = admin.token(app, grant_type="authorization_code", code=code)

    assert response.status_code == 200
    body = response.json()
    assert body["token_type"] == "Bearer"
    assert body["expires_in"] == 86400
    assert body["refresh_token"].startswith("v1.")
    assert response.headers["cache-control"] == "no-store"
    me = admin.api.get("/biller", headers={"Authorization": f"Bearer {body['access_token']}"})
    assert me.status_code == 200
    assert me.json()["id"] == biller_id
    assert me.json()["name"] == "Acme Ltd"


def test_code_is_single_use_and_a_replay_revokes_what_it_gave(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    code = admin.authorization_code(app, admin.create_biller())
    first = admin.token(app, grant_type="authorization_code", code=code).json()

    replay = admin.token(app, grant_type="authorization_code", code=code)

    assert replay.status_code == 400
    assert _error(replay) == "invalid_grant"
    # RFC 6749 §4.1.2: tokens issued from a replayed code are revoked.
    me = admin.api.get("/biller", headers={"Authorization": f"Bearer {first['access_token']}"})
    assert me.status_code == 401
    refresh = admin.token(app, grant_type="refresh_token", refresh_token=first["refresh_token"])
    assert _error(refresh) == "invalid_grant"


def test_code_expires(tmp_path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/s.db", codeTtl=60) as admin:
        app = admin.create_app()
        code = admin.authorization_code(app, admin.create_biller())
        admin.advance_clock(seconds=61)

        response = admin.token(app, grant_type="authorization_code", code=code)

    assert response.status_code == 400
    assert _error(response) == "invalid_grant"
    assert "expired" in response.json()["error_description"]


def test_code_of_another_app_is_refused(admin: SandboxAdmin) -> None:
    owner, thief = admin.create_app(), admin.create_app()
    code = admin.authorization_code(owner, admin.create_biller())

    response = admin.token(thief, grant_type="authorization_code", code=code)

    assert _error(response) == "invalid_grant"
    assert admin.token(owner, grant_type="authorization_code", code=code).status_code == 200


def test_redirect_uri_must_match_the_one_the_code_was_issued_for(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    code = admin.authorization_code(
        app, admin.create_biller(), redirect_uri="http://127.0.0.1:4321/callback"
    )

    wrong = admin.token(
        app, grant_type="authorization_code", code=code, redirect_uri="http://127.0.0.1:9/x"
    )
    assert _error(wrong) == "invalid_grant"
    assert "redirect_uri" in wrong.json()["error_description"]


def test_pkce_s256_verifier_is_checked(admin: SandboxAdmin, biller_token) -> None:
    verifier = secrets.token_urlsafe(48)
    challenge = (
        base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest()).rstrip(b"=").decode()
    )
    app = admin.create_app()
    redirect = "http://127.0.0.1:5000/cb"

    def new_code() -> str:
        answer = admin.api.post(
            "/oauth2/authorize",
            headers=biller_token.headers,
            json={
                "clientId": app.client_id,
                "redirectUri": redirect,
                "codeChallenge": challenge,
                "codeChallengeMethod": "S256",
            },
        )
        assert answer.status_code == 200, answer.text
        return answer.json()["code"]

    bad = admin.token(
        app,
        grant_type="authorization_code",
        code=new_code(),
        redirect_uri=redirect,
        code_verifier=secrets.token_urlsafe(48),
    )
    assert _error(bad) == "invalid_grant"
    good = admin.token(
        app,
        grant_type="authorization_code",
        code=new_code(),
        redirect_uri=redirect,
        code_verifier=verifier,
    )
    assert good.status_code == 200, good.text


# --- refresh_token --------------------------------------------------------------------------


def test_refresh_rotates_and_the_used_token_is_dead(admin: SandboxAdmin, biller_token) -> None:
    app = biller_token.app
    rotated = admin.token(app, grant_type="refresh_token", refresh_token=biller_token.refresh_token)

    assert rotated.status_code == 200
    new = rotated.json()
    assert new["refresh_token"] != biller_token.refresh_token
    assert new["access_token"] != biller_token.access_token
    assert (
        admin.api.get(
            "/biller", headers={"Authorization": f"Bearer {new['access_token']}"}
        ).status_code
        == 200
    )

    reuse = admin.token(app, grant_type="refresh_token", refresh_token=biller_token.refresh_token)
    assert reuse.status_code == 400
    assert _error(reuse) == "invalid_grant"
    # Under the default policy the replay does not hurt the newest token.
    again = admin.token(app, grant_type="refresh_token", refresh_token=new["refresh_token"])
    assert again.status_code == 200
    stats = admin.biller_stats(biller_token.biller_id)
    assert stats["tokenGrants"] == {"authorization_code": 1, "refresh_token": 2}
    assert stats["invalidGrant"] == 1


def test_revoke_family_policy_kills_the_newest_token_on_replay(tmp_path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/s.db", refreshReusePolicy="revoke_family") as admin:
        first = admin.connect_biller()
        app = first.app
        new = admin.token(app, grant_type="refresh_token", refresh_token=first.refresh_token).json()

        replay = admin.token(app, grant_type="refresh_token", refresh_token=first.refresh_token)
        newest = admin.token(app, grant_type="refresh_token", refresh_token=new["refresh_token"])

    assert _error(replay) == "invalid_grant"
    assert _error(newest) == "invalid_grant"


def test_concurrent_refreshes_with_one_token_have_exactly_one_winner(database_url) -> None:
    with running_sandbox(database_url) as admin:
        tokens = admin.connect_biller()

        def refresh(_):
            return admin.token(
                tokens.app, grant_type="refresh_token", refresh_token=tokens.refresh_token
            )

        with ThreadPoolExecutor(max_workers=8) as pool:
            answers = list(pool.map(refresh, range(8)))

        statuses = sorted(a.status_code for a in answers)
        assert statuses == [200] + [400] * 7
        assert all(_error(a) == "invalid_grant" for a in answers if a.status_code == 400)
        assert admin.biller_stats(tokens.biller_id)["invalidGrant"] == 7


def test_unknown_refresh_token_is_invalid_grant(admin: SandboxAdmin) -> None:
    response = admin.token(admin.create_app(), grant_type="refresh_token", refresh_token="v1.nope")
    assert response.status_code == 400
    assert _error(response) == "invalid_grant"


# --- client_credentials and permissions -----------------------------------------------------


def test_client_credentials_give_a_platform_token_without_refresh(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    response = admin.token(app, grant_type="client_credentials")

    assert response.status_code == 200
    body = response.json()
    assert "refresh_token" not in body
    assert body["expires_in"] == 3600
    own = admin.api.get(
        f"/apps/{app.client_id}/webhooks",
        headers={"Authorization": f"Bearer {body['access_token']}"},
    )
    assert own.status_code == 200
    assert own.json() == {"webhooksResponse": []}


def test_platform_token_cannot_read_biller_data(admin: SandboxAdmin, platform_token) -> None:
    response = admin.api.get("/biller", headers=platform_token.headers)
    assert response.status_code == 403
    assert response.json()["errors"][0]["type"] == "FORBIDDEN"


def test_platform_token_cannot_manage_another_apps_webhooks(admin, platform_token) -> None:
    other = admin.create_app()
    response = admin.api.get(f"/apps/{other.client_id}/webhooks", headers=platform_token.headers)
    assert response.status_code == 403


def test_biller_token_cannot_manage_webhooks(admin: SandboxAdmin, biller_token) -> None:
    path = f"/apps/{biller_token.app.client_id}/webhooks"
    response = admin.api.get(path, headers=biller_token.headers)
    assert response.status_code == 403
    assert response.json()["errors"][0]["type"] == "FORBIDDEN"


def test_read_only_biller_token_reads_but_cannot_update(admin: SandboxAdmin) -> None:
    tokens = admin.connect_biller(read_only=True)
    assert admin.api.get("/biller", headers=tokens.headers).status_code == 200

    response = admin.api.patch(
        "/biller", headers=tokens.headers, json=[{"op": "replace", "path": "/alias", "value": "x"}]
    )
    assert response.status_code == 403


@pytest.mark.parametrize(
    "authorization", [None, "Bearer", "Bearer sbx_at_unknown", "Basic dXNlcjpwYXNz"]
)
def test_missing_or_invalid_token_is_401(admin: SandboxAdmin, authorization) -> None:
    headers = {"Authorization": authorization} if authorization else {}
    response = admin.api.get("/biller", headers=headers)
    assert response.status_code == 401
    assert response.json()["errors"][0]["type"] == "UNAUTHORIZED"
    assert response.headers["www-authenticate"] == "Bearer"


def test_access_token_expires_and_lifetimes_follow_config(tmp_path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/s.db", accessTokenTtl=120) as admin:
        tokens = admin.connect_biller()
        assert tokens.expires_in == 120
        admin.configure(platformTokenTtl=45)
        assert admin.platform_token().expires_in == 45
        admin.advance_clock(seconds=121)

        expired = admin.api.get("/biller", headers=tokens.headers)
        refreshed = admin.token(
            tokens.app, grant_type="refresh_token", refresh_token=tokens.refresh_token
        )

    assert expired.status_code == 401
    assert refreshed.status_code == 200  # the refresh token outlives the access token


def test_each_biller_sees_only_its_own_record(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    a = admin.connect_biller("Alpha Ltd", app=app)
    b = admin.connect_biller("Beta Ltd", app=app)
    assert admin.api.get("/biller", headers=a.headers).json()["name"] == "Alpha Ltd"
    assert admin.api.get("/biller", headers=b.headers).json()["name"] == "Beta Ltd"


# --- client authentication ------------------------------------------------------------------


def test_client_may_authenticate_with_http_basic(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    response = admin.api.post(
        "/oauth2/token",
        auth=(app.client_id, app.client_secret),
        data={"grant_type": "client_credentials"},
    )
    assert response.status_code == 200


def test_wrong_secret_is_invalid_client_with_a_basic_challenge(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    response = admin.api.post(
        "/oauth2/token", auth=(app.client_id, "wrong"), data={"grant_type": "client_credentials"}
    )
    assert response.status_code == 401
    assert _error(response) == "invalid_client"
    assert response.headers["www-authenticate"].startswith("Basic")


def test_basic_and_form_credentials_that_differ_are_refused(admin: SandboxAdmin) -> None:
    app, other = admin.create_app(), admin.create_app()
    response = admin.api.post(
        "/oauth2/token",
        auth=(app.client_id, app.client_secret),
        data={
            "grant_type": "client_credentials",
            "client_id": other.client_id,
            "client_secret": other.client_secret,
        },
    )
    assert response.status_code == 400
    assert _error(response) == "invalid_request"


@pytest.mark.parametrize(
    ("form", "error"),
    [
        ({}, "invalid_request"),
        ({"grant_type": "password"}, "unsupported_grant_type"),
        ({"grant_type": "authorization_code"}, "invalid_request"),
        ({"grant_type": "refresh_token"}, "invalid_request"),
    ],
)
def test_malformed_token_requests(admin: SandboxAdmin, form, error) -> None:
    response = admin.token(admin.create_app(), **form)
    assert response.status_code == 400
    assert _error(response) == error


def test_no_client_credentials_is_invalid_client(admin: SandboxAdmin) -> None:
    response = admin.api.post("/oauth2/token", data={"grant_type": "client_credentials"})
    assert response.status_code == 401
    assert _error(response) == "invalid_client"


# --- revoke ---------------------------------------------------------------------------------


def test_revoked_refresh_token_is_dead_but_access_token_lives(admin, biller_token) -> None:
    app = biller_token.app
    form = {
        "client_id": app.client_id,
        "client_secret": app.client_secret,
        "token": biller_token.refresh_token,
    }
    assert admin.api.post("/oauth2/revoke", data=form).status_code == 200

    refresh = admin.token(app, grant_type="refresh_token", refresh_token=biller_token.refresh_token)
    assert _error(refresh) == "invalid_grant"
    assert admin.api.get("/biller", headers=biller_token.headers).status_code == 200


def test_revoke_of_an_unknown_token_succeeds(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    form = {"client_id": app.client_id, "client_secret": app.client_secret, "token": "v1.nope"}
    assert admin.api.post("/oauth2/revoke", data=form).status_code == 200


def test_revoke_of_another_apps_token_is_refused(admin: SandboxAdmin, biller_token) -> None:
    other = admin.create_app()
    form = {
        "client_id": other.client_id,
        "client_secret": other.client_secret,
        "token": biller_token.refresh_token,
    }
    response = admin.api.post("/oauth2/revoke", data=form)
    assert response.status_code == 400
    assert _error(response) == "unauthorized_client"
    refresh = admin.token(
        biller_token.app, grant_type="refresh_token", refresh_token=biller_token.refresh_token
    )
    assert refresh.status_code == 200


# --- authorize / authorization ----------------------------------------------------------------


def test_authorize_then_authorization_details(admin: SandboxAdmin, biller_token) -> None:
    app = admin.create_app(name="Reporting tool")
    before = admin.api.get(
        "/oauth2/authorization", params={"clientId": app.client_id}, headers=biller_token.headers
    )
    assert before.json()["authorized"] is False

    answer = admin.api.post(
        "/oauth2/authorize",
        headers=biller_token.headers,
        json={"clientId": app.client_id, "redirectUri": app.redirect_uri, "state": "s-1"},
    )
    assert answer.status_code == 200
    assert answer.json()["redirectUri"].startswith(app.redirect_uri + "?code=")
    assert answer.json()["redirectUri"].endswith("&state=s-1")
    exchanged = admin.token(
        app,
        grant_type="authorization_code",
        code=answer.json()["code"],
        redirect_uri=app.redirect_uri,
    )
    assert exchanged.status_code == 200

    after = admin.api.get(
        "/oauth2/authorization", params={"clientId": app.client_id}, headers=biller_token.headers
    ).json()
    assert after["authorized"] is True
    assert after["appName"] == "Reporting tool"
    assert after["billerId"] == biller_token.biller_id


def test_authorize_refuses_a_foreign_redirect_uri(admin: SandboxAdmin, biller_token) -> None:
    app = admin.create_app()
    answer = admin.api.post(
        "/oauth2/authorize",
        headers=biller_token.headers,
        json={"clientId": app.client_id, "redirectUri": "https://evil.example/cb"},
    )
    assert answer.status_code == 422
    assert answer.json()["errors"][0] == {
        "type": "VALIDATION_ERROR",
        "detail": "redirectUri is neither the app's registered redirect URI nor a loopback URI",
        "field": "redirectUri",
    }


def test_authorize_an_unknown_app_is_404(admin: SandboxAdmin, biller_token) -> None:
    answer = admin.api.post(
        "/oauth2/authorize",
        headers=biller_token.headers,
        json={"clientId": "sbx_ci_nope", "redirectUri": "http://127.0.0.1:1/cb"},
    )
    assert answer.status_code == 404
    assert answer.json()["errors"][0]["type"] == "NOT_FOUND"
