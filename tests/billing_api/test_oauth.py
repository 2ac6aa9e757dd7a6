"""``billing_api.oauth`` against the sandbox over HTTP: every grant, revoke, both ways of client
authentication, typed errors, the retry rules of the token endpoint, the login helpers."""

from __future__ import annotations

import socket
from collections.abc import Iterator
from datetime import timedelta
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest

from billing_api import (
    ClientCredentials,
    OAuthClient,
    OAuthError,
    OutcomeUnknown,
    TokenResponse,
    TransportError,
    build_authorize_url,
    new_state,
    pkce_pair,
    utc_now,
)
from tests.billing_api.oauth_helpers import (
    close_oauth_clients,
    oauth_for,
    tracked,
)
from tests.support.credentials import token_grants
from tests.support.faults import clear_faults, plan_faults
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

AUTH_METHODS = ["basic", "form"]


@pytest.fixture(autouse=True)
def _close_clients() -> Iterator[None]:
    yield
    close_oauth_clients()


def _biller_id_of(admin: SandboxAdmin, access_token: str) -> str:
    me = admin.api.get("/biller", headers={"Authorization": f"Bearer {access_token}"})
    assert me.status_code == 200, me.text
    return str(me.json()["id"])


@pytest.mark.parametrize("auth_method", AUTH_METHODS)
def test_code_exchange_gives_tokens_that_open_the_biller(
    admin: SandboxAdmin, auth_method: str
) -> None:
    app = admin.create_app()
    biller_id = admin.create_biller("Acme Ltd")
    code = admin.authorization_code(app, biller_id)
    before = utc_now()

    with OAuthClient(
        f"{admin.root}/api",
        ClientCredentials(app.client_id, app.client_secret),
        auth_method=auth_method,  # type: ignore[arg-type]
    ) as oauth:
        answer = oauth.exchange_code(code, redirect_uri=None)

    assert answer.token_type == "Bearer"
    assert answer.expires_in == 86400
    assert answer.refresh_token is not None and answer.refresh_token.startswith("v1.")
    assert before <= answer.obtained_at <= utc_now()
    assert answer.expires_at == answer.obtained_at + timedelta(seconds=86400)
    assert _biller_id_of(admin, answer.access_token) == biller_id
    tokens = answer.to_token_set(0)
    assert (tokens.refresh_token, tokens.access_token) == (
        answer.refresh_token,
        answer.access_token,
    )
    assert tokens.access_token_lifetime == 86400
    assert tokens.access_token_usable(utc_now())


@pytest.mark.parametrize("auth_method", AUTH_METHODS)
def test_refresh_rotates_and_the_old_token_is_invalid_grant(
    admin: SandboxAdmin, biller_token: BillerTokens, auth_method: str
) -> None:
    with oauth_for(admin, biller_token, auth_method=auth_method) as oauth:
        rotated = oauth.refresh(biller_token.refresh_token)
        with pytest.raises(OAuthError) as reused:
            oauth.refresh(biller_token.refresh_token)

    assert rotated.refresh_token not in (None, biller_token.refresh_token)
    assert _biller_id_of(admin, rotated.access_token) == biller_token.biller_id
    assert reused.value.is_invalid_grant
    assert reused.value.status_code == 400
    assert biller_token.refresh_token not in str(reused.value)
    assert token_grants(admin, biller_token.biller_id) == {
        "authorization_code": 1,
        "refresh_token": 1,
        "invalid_grant": 1,
    }


def test_reused_authorization_code_is_invalid_grant(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    code = admin.authorization_code(app, admin.create_biller())
    oauth = tracked(
        OAuthClient(f"{admin.root}/api", ClientCredentials(app.client_id, app.client_secret))
    )
    oauth.exchange_code(code, redirect_uri=None)

    with pytest.raises(OAuthError) as replay:
        oauth.exchange_code(code, redirect_uri=None)

    assert replay.value.error == "invalid_grant"
    assert "OAuth error invalid_grant" in str(replay.value)
    assert code not in str(replay.value)


@pytest.mark.parametrize("auth_method", AUTH_METHODS)
def test_client_credentials_gives_a_platform_token_without_refresh_token(
    admin: SandboxAdmin, auth_method: str
) -> None:
    app = admin.create_app()
    oauth = tracked(
        OAuthClient(
            f"{admin.root}/api",
            ClientCredentials(app.client_id, app.client_secret),
            auth_method=auth_method,  # type: ignore[arg-type]
        )
    )

    answer = oauth.client_credentials()

    assert answer.refresh_token is None
    assert answer.expires_in == 3600
    hooks = admin.api.get(
        f"/apps/{app.client_id}/webhooks",
        headers={"Authorization": f"Bearer {answer.access_token}"},
    )
    assert hooks.status_code == 200, hooks.text
    with pytest.raises(ValueError, match="no refresh_token"):
        answer.to_token_set(0)


@pytest.mark.parametrize("auth_method", AUTH_METHODS)
def test_revoke_kills_the_refresh_token(
    admin: SandboxAdmin, biller_token: BillerTokens, auth_method: str
) -> None:
    oauth = oauth_for(admin, biller_token, auth_method=auth_method)

    oauth.revoke(biller_token.refresh_token, token_type_hint="refresh_token")
    oauth.revoke(biller_token.refresh_token)  # again: still 200, nothing changes

    with pytest.raises(OAuthError) as refused:
        oauth.refresh(biller_token.refresh_token)
    assert refused.value.is_invalid_grant


def test_wrong_client_secret_is_invalid_client_without_the_secret(
    admin: SandboxAdmin, biller_token: BillerTokens
) -> None:
    wrong = "definitely-not-the-secret"
    oauth = tracked(
        OAuthClient(f"{admin.root}/api", ClientCredentials(biller_token.app.client_id, wrong))
    )

    with pytest.raises(OAuthError) as refused:
        oauth.refresh(biller_token.refresh_token)

    assert (refused.value.error, refused.value.status_code) == ("invalid_client", 401)
    assert wrong not in str(refused.value)
    assert wrong not in repr(oauth) and wrong not in repr(oauth.credentials)


def test_pkce_code_exchange_with_the_verifier(
    admin: SandboxAdmin, biller_token: BillerTokens
) -> None:
    verifier, challenge = pkce_pair()
    app = admin.create_app()
    redirect = "http://127.0.0.1:5000/cb"
    issued = admin.api.post(
        "/oauth2/authorize",
        headers=biller_token.headers,
        json={
            "clientId": app.client_id,
            "redirectUri": redirect,
            "codeChallenge": challenge,
            "codeChallengeMethod": "S256",
        },
    )
    assert issued.status_code == 200, issued.text
    oauth = tracked(
        OAuthClient(f"{admin.root}/api", ClientCredentials(app.client_id, app.client_secret))
    )

    answer = oauth.exchange_code(
        issued.json()["code"], redirect_uri=redirect, code_verifier=verifier
    )

    assert _biller_id_of(admin, answer.access_token) == biller_token.biller_id


def test_authorize_url_reaches_the_consent_page(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    state = new_state()
    _, challenge = pkce_pair()
    url = build_authorize_url(
        f"{admin.root}/auth/login",
        client_id=app.client_id,
        redirect_uri="http://127.0.0.1:8123/callback",
        state=state,
        code_challenge=challenge,
        scope="openid offline_access",
    )

    query = parse_qs(urlsplit(url).query)
    assert query["state"] == [state] and query["code_challenge_method"] == ["S256"]
    assert query["response_type"] == ["code"] and query["client_id"] == [app.client_id]
    page = httpx.get(url)
    assert page.status_code == 200, page.text
    assert "Cannot connect" not in page.text
    assert new_state() != state


def test_reprs_never_show_secrets() -> None:
    credentials = ClientCredentials("client-1", "s3cret-value")
    answer = TokenResponse("acc-xyz", "v1.ref-xyz", 60.0, None, "Bearer", utc_now())

    shown = repr(credentials) + str(credentials) + repr(answer) + repr(answer.to_token_set(3))

    for secret in ("s3cret-value", "acc-xyz", "v1.ref-xyz"):
        assert secret not in shown
    assert "client-1" in shown and "rotation=3" in shown


# --- retry rules of the token endpoint (a sandbox of this module's own: faults are global) ---


def test_429_is_retried_after_the_asked_delay(faulty: SandboxAdmin) -> None:
    tokens = faulty.connect_biller()
    delays: list[float] = []
    plan_faults(
        faulty, {"pathPrefix": "/oauth2/token", "method": "POST", "rateLimit": 1, "retryAfter": 3}
    )
    oauth = oauth_for(faulty, tokens, sleep=delays.append, max_retries=2)
    try:
        with pytest.raises(OAuthError) as limited:
            oauth.refresh(tokens.refresh_token)
    finally:
        clear_faults(faulty)

    assert delays == [3, 3]
    assert limited.value.status_code == 429
    # Nothing reached the grant: the token still works (and rotates).
    assert oauth.refresh(tokens.refresh_token).refresh_token not in (None, tokens.refresh_token)


def test_dropped_answer_after_commit_is_outcome_unknown_and_not_resent(
    faulty: SandboxAdmin,
) -> None:
    tokens = faulty.connect_biller()
    delays: list[float] = []
    plan_faults(faulty, {"pathPrefix": "/oauth2/token", "method": "POST", "dropAfterCommit": 1})
    oauth = oauth_for(faulty, tokens, sleep=delays.append)
    try:
        with pytest.raises(OutcomeUnknown) as unknown:
            oauth.refresh(tokens.refresh_token)
    finally:
        clear_faults(faulty)

    assert unknown.value.request.operation_id == "oauth.token"
    assert delays == []
    # The sandbox did rotate: one grant, and the token sent is now dead.
    assert token_grants(faulty, tokens.biller_id)["refresh_token"] == 1
    with pytest.raises(OAuthError) as dead:
        oauth.refresh(tokens.refresh_token)
    assert dead.value.is_invalid_grant


def test_connection_refused_is_retried_then_transport_error() -> None:
    with socket.socket() as probe:  # a port nobody listens on
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    delays: list[float] = []
    oauth = tracked(
        OAuthClient(
            f"http://127.0.0.1:{port}/api",
            ClientCredentials("id", "never-shown"),
            sleep=delays.append,
            random=lambda: 1.0,  # the top of the jitter range: the schedule's own delays
            max_retries=2,
        )
    )

    with pytest.raises(TransportError) as failed:
        oauth.refresh("v1.token")

    assert delays == [0.5, 1.0]
    assert "3 attempts" in str(failed.value)
    assert "never-shown" not in str(failed.value) and "v1.token" not in str(failed.value)


def test_bad_auth_method_is_refused() -> None:
    with pytest.raises(ValueError, match="auth_method must be"):
        OAuthClient("http://x/api", ClientCredentials("a", "b"), auth_method="query")  # type: ignore[arg-type]
