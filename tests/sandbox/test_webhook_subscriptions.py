"""Webhook subscriptions (``/apps/{clientId}/webhooks``), over HTTP with platform tokens.

The module runs its own sandbox so tests can check what delivery will use (the signing secret
and the target credentials, which the API never shows again) in its database.
"""

from __future__ import annotations

import base64
from typing import Any

import pytest
from sqlalchemy.orm import Session, sessionmaker

from sandbox.core.db import session_scope
from sandbox.webhooks import settings as webhook_settings
from tests.support.sandbox_admin import PlatformToken, SandboxAdmin

GOOD = {"url": "https://example.com/hooks", "events": ["invoice", "payment"]}


@pytest.fixture
def admin(private: tuple[SandboxAdmin, str]) -> SandboxAdmin:
    """This module's own sandbox (see ``private`` in tests/sandbox/conftest.py)."""
    return private[0]


def _base(token: PlatformToken) -> str:
    return f"/apps/{token.app.client_id}/webhooks"


def _create(admin: SandboxAdmin, token: PlatformToken, **body: Any) -> dict[str, Any]:
    response = admin.api.post(_base(token), headers=token.headers, json={**GOOD, **body})
    assert response.status_code == 201, response.text
    return dict(response.json())


# --- subscriptions ----------------------------------------------------------------------------


def test_create_answers_201_enabled(admin, platform_token) -> None:
    created = _create(admin, platform_token, name="Billing", description="all invoices")

    assert created["enabled"] is True and created["clientId"] == platform_token.app.client_id
    assert created["url"] == GOOD["url"] and created["events"] == ["invoice", "payment"]
    assert created["name"] == "Billing" and created["description"] == "all invoices"
    fetched = admin.api.get(
        f"{_base(platform_token)}/{created['id']}", headers=platform_token.headers
    )
    assert fetched.status_code == 200 and fetched.json() == created


def test_each_create_is_another_subscription_and_list_is_oldest_first(
    admin, platform_token
) -> None:
    first = _create(admin, platform_token)
    second = _create(admin, platform_token)

    listed = admin.api.get(_base(platform_token), headers=platform_token.headers)

    assert listed.status_code == 200
    assert [hook["id"] for hook in listed.json()["webhooksResponse"]] == [first["id"], second["id"]]


def test_the_list_shows_only_the_apps_own_webhooks(admin, platform_token) -> None:
    other = admin.platform_token()
    _create(admin, other)
    listed = admin.api.get(_base(platform_token), headers=platform_token.headers).json()
    assert listed == {"webhooksResponse": []}


def test_update_replaces_fields_and_keeps_enabled_unless_given(admin, platform_token) -> None:
    created = _create(admin, platform_token, name="Billing", description="d")
    path, h = f"{_base(platform_token)}/{created['id']}", platform_token.headers

    disabled = admin.api.put(path, headers=h, json={**GOOD, "enabled": False, "name": "B2"})
    assert disabled.status_code == 200, disabled.text
    assert disabled.json()["enabled"] is False and disabled.json()["name"] == "B2"
    assert disabled.json()["description"] is None  # left out: cleared

    replaced = admin.api.put(
        path, headers=h, json={"url": "https://example.org/new", "events": ["customer"]}
    )
    assert replaced.status_code == 200
    body = replaced.json()
    assert body["enabled"] is False  # left out: unchanged
    assert body["url"] == "https://example.org/new" and body["events"] == ["customer"]
    assert body["name"] is None and body["creationTime"] == created["creationTime"]
    assert admin.api.get(path, headers=h).json() == body
    enabled = admin.api.put(path, headers=h, json={**GOOD, "enabled": True})
    assert enabled.json()["enabled"] is True


def test_delete_answers_204_then_404(admin, platform_token) -> None:
    created = _create(admin, platform_token)
    path, h = f"{_base(platform_token)}/{created['id']}", platform_token.headers

    assert admin.api.delete(path, headers=h).status_code == 204
    assert admin.api.get(path, headers=h).status_code == 404
    assert admin.api.delete(path, headers=h).status_code == 404
    assert admin.api.put(path, headers=h, json=GOOD).status_code == 404
    assert admin.api.get(_base(platform_token), headers=h).json()["webhooksResponse"] == []


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"events": ["invoice", "refund"]}, "events[1]"),
        ({"events": ["invoice", "invoice"]}, "events[1]"),
        ({"events": []}, "events"),
        ({"events": None}, "events"),
        ({"url": None}, "url"),
        ({"url": "example.com/hooks"}, "url"),
        ({"url": "ftp://example.com/hooks"}, "url"),
        ({"url": "http://example.com/hooks"}, "url"),
        ({"url": "https://"}, "url"),
        ({"url": "https://exa mple.com/"}, "url"),
        ({"url": "https://example.com:99999/"}, "url"),
        ({"url": "https://example.com/" + "a" * 2048}, "url"),
        ({"name": "n" * 256}, "name"),
        ({"description": "d" * 1025}, "description"),
        ({"enabled": "yes"}, "enabled"),
    ],
)
def test_invalid_subscriptions_answer_422_with_the_field(
    admin, platform_token, body, field
) -> None:
    data = {k: v for k, v in {**GOOD, **body}.items() if v is not None}

    created = admin.api.post(_base(platform_token), headers=platform_token.headers, json=data)

    assert created.status_code == 422, created.text
    assert created.json()["errors"][0] == {
        **created.json()["errors"][0],
        "type": "VALIDATION_ERROR",
        "field": field,
    }
    hook = _create(admin, platform_token)
    path = f"{_base(platform_token)}/{hook['id']}"
    updated = admin.api.put(path, headers=platform_token.headers, json=data)
    assert updated.status_code == 422 and updated.json()["errors"][0]["field"] == field


@pytest.mark.parametrize(
    "url", ["http://127.0.0.1:8080/hook", "http://localhost/hook", "http://[::1]:9/x"]
)
def test_http_is_allowed_for_loopback_targets(admin, platform_token, url) -> None:
    assert _create(admin, platform_token, url=url)["url"] == url


def test_every_event_kind_can_be_subscribed(admin, platform_token) -> None:
    kinds = ["payment", "dd-mandate", "invoice", "biller", "customer", "payment-request", "payout"]
    assert _create(admin, platform_token, events=kinds)["events"] == kinds


def test_unreadable_bodies_answer_400(admin, platform_token) -> None:
    h = {**platform_token.headers, "Content-Type": "application/json"}
    response = admin.api.post(_base(platform_token), headers=h, content=b"{")
    assert response.status_code == 400 and response.json()["errors"][0]["type"] == "BAD_REQUEST"


# --- who may manage webhooks ------------------------------------------------------------------


def test_a_biller_token_is_refused(admin, biller_token) -> None:
    path = f"/apps/{biller_token.app.client_id}/webhooks"
    h = biller_token.headers
    answers = [
        admin.api.get(path, headers=h),
        admin.api.post(path, headers=h, json=GOOD),
        admin.api.put(f"{path}/digest", headers=h),
        admin.api.put(f"{path}/auth", headers=h, json={}),
    ]
    assert [r.status_code for r in answers] == [403] * 4
    assert answers[0].json()["errors"][0]["type"] == "FORBIDDEN"


def test_another_apps_platform_token_is_refused(admin, platform_token) -> None:
    created = _create(admin, platform_token)
    intruder = admin.platform_token()
    path, h = _base(platform_token), intruder.headers

    answers = [
        admin.api.get(path, headers=h),
        admin.api.post(path, headers=h, json=GOOD),
        admin.api.get(f"{path}/{created['id']}", headers=h),
        admin.api.put(f"{path}/{created['id']}", headers=h, json=GOOD),
        admin.api.delete(f"{path}/{created['id']}", headers=h),
        admin.api.put(f"{path}/digest", headers=h),
        admin.api.put(f"{path}/auth", headers=h, json={}),
    ]

    assert [r.status_code for r in answers] == [403] * len(answers)
    own = admin.api.get(f"{path}/{created['id']}", headers=platform_token.headers)
    assert own.status_code == 200
    # another app's webhook id under one's own clientId does not exist
    assert admin.api.get(f"{_base(intruder)}/{created['id']}", headers=h).status_code == 404


def test_no_token_answers_401(admin, platform_token) -> None:
    assert admin.api.get(_base(platform_token)).status_code == 401


# --- signing secret ---------------------------------------------------------------------------


def test_digest_generates_a_new_secret_each_call(admin, platform_token, db) -> None:
    path = f"{_base(platform_token)}/digest"

    first = admin.api.put(path, headers=platform_token.headers)
    second = admin.api.put(path, headers=platform_token.headers)

    assert first.status_code == 200 and first.headers["cache-control"] == "no-store"
    secrets = [first.json()["secretKey"], second.json()["secretKey"]]
    assert secrets[0] != secrets[1] and all(len(s) >= 32 for s in secrets)
    assert all(
        set(s) <= set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        for s in secrets
    )
    with session_scope(db) as session:
        stored = webhook_settings.signing_secret(session, platform_token.app.client_id)
    assert stored == secrets[1]


def test_no_secret_until_digest_is_called(admin, platform_token, db) -> None:
    _create(admin, platform_token)
    with session_scope(db) as session:
        assert webhook_settings.signing_secret(session, platform_token.app.client_id) is None


# --- target authentication --------------------------------------------------------------------


def _auth(admin: SandboxAdmin, token: PlatformToken, body: dict[str, Any]):
    return admin.api.put(f"{_base(token)}/auth", headers=token.headers, json=body)


def _stored_headers(db: sessionmaker[Session], token: PlatformToken) -> dict[str, str]:
    with session_scope(db) as session:
        return webhook_settings.target_auth_headers(session, token.app.client_id)


def test_auth_stores_basic_and_api_key_credentials(admin, platform_token, db) -> None:
    body = {
        "basicAuthentication": {"username": "hook", "password": "s3cret"},
        "apiKeyAuthentication": {"headerKey": "X-Api-Key", "headerValue": "k-123"},
    }

    response = _auth(admin, platform_token, body)

    assert response.status_code == 200 and response.json() == {"statusCode": "200"}
    assert "s3cret" not in response.text
    assert _stored_headers(db, platform_token) == {
        "Authorization": "Basic " + base64.b64encode(b"hook:s3cret").decode(),
        "X-Api-Key": "k-123",
    }


def test_a_method_left_out_is_removed_and_neither_clears_both(admin, platform_token, db) -> None:
    both = {
        "basicAuthentication": {"username": "hook", "password": ""},
        "apiKeyAuthentication": {"headerKey": "X-Api-Key", "headerValue": "k"},
    }
    assert _auth(admin, platform_token, both).status_code == 200

    assert (
        _auth(
            admin, platform_token, {"apiKeyAuthentication": both["apiKeyAuthentication"]}
        ).status_code
        == 200
    )
    assert _stored_headers(db, platform_token) == {"X-Api-Key": "k"}

    assert _auth(admin, platform_token, {}).status_code == 200
    assert _stored_headers(db, platform_token) == {}


@pytest.mark.parametrize(
    ("body", "field"),
    [
        (
            {"basicAuthentication": {"username": " ", "password": "p"}},
            "basicAuthentication.username",
        ),
        (
            {"basicAuthentication": {"username": "a:b", "password": "p"}},
            "basicAuthentication.username",
        ),
        ({"basicAuthentication": {"password": "p"}}, "basicAuthentication.username"),
        (
            {"apiKeyAuthentication": {"headerKey": "", "headerValue": "v"}},
            "apiKeyAuthentication.headerKey",
        ),
        (
            {"apiKeyAuthentication": {"headerKey": "X Key", "headerValue": "v"}},
            "apiKeyAuthentication.headerKey",
        ),
        (
            {"apiKeyAuthentication": {"headerKey": "Authorization", "headerValue": "v"}},
            "apiKeyAuthentication.headerKey",
        ),
        (
            {"apiKeyAuthentication": {"headerKey": "content-type", "headerValue": "v"}},
            "apiKeyAuthentication.headerKey",
        ),
        (
            {"apiKeyAuthentication": {"headerKey": "Adfin-Webhook-Id", "headerValue": "v"}},
            "apiKeyAuthentication.headerKey",
        ),
        (
            {"apiKeyAuthentication": {"headerKey": "X-Key", "headerValue": "  "}},
            "apiKeyAuthentication.headerValue",
        ),
        (
            {"apiKeyAuthentication": {"headerKey": "X-Key", "headerValue": "a\r\nEvil: 1"}},
            "apiKeyAuthentication.headerValue",
        ),
    ],
)
def test_invalid_target_credentials_answer_422_and_keep_the_old_ones(
    admin, platform_token, db, body, field
) -> None:
    keep = {"apiKeyAuthentication": {"headerKey": "X-Old", "headerValue": "old"}}
    assert _auth(admin, platform_token, keep).status_code == 200

    response = _auth(admin, platform_token, body)

    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field
    assert _stored_headers(db, platform_token) == {"X-Old": "old"}
