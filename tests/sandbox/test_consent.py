"""The consent page (``/auth/login``) and a command-line login through it with a loopback redirect.

The login here is driven by httpx the way a browser would submit the form; test_consent_browser.py
does the same in Chromium.
"""

from __future__ import annotations

import re
from html.parser import HTMLParser

import httpx

from tests.support.loopback import loopback_receiver
from tests.support.sandbox_admin import SandboxAdmin


class _Form(HTMLParser):
    """Collects the consent form's fields: hidden inputs, biller radios, buttons."""

    def __init__(self) -> None:
        super().__init__()
        self.hidden: dict[str, str] = {}
        self.billers: list[str] = []
        self.buttons: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        a = {k: v or "" for k, v in attrs}
        if tag == "input" and a.get("type") == "hidden":
            self.hidden[a["name"]] = a["value"]
        elif tag == "input" and a.get("type") == "radio":
            self.billers.append(a["value"])
        elif tag == "button":
            self.buttons.append(a["value"])


def _parse(html: str) -> _Form:
    form = _Form()
    form.feed(html)
    return form


def _login_url(root: str, client_id: str, redirect_uri: str, state: str) -> httpx.URL:
    return httpx.URL(
        f"{root}/auth/login",
        params={
            "client_id": client_id,
            "redirect_uri": redirect_uri,
            "state": state,
            "scope": "openid offline_access",
        },
    )


def test_cli_login_through_the_consent_page_with_a_loopback_redirect(admin: SandboxAdmin) -> None:
    app = admin.create_app(name="billops CLI")
    biller_id = admin.create_biller("Loopback Ltd")
    with loopback_receiver() as receiver, httpx.Client(follow_redirects=True) as browser:
        page = browser.get(_login_url(admin.root, app.client_id, receiver.redirect_uri, "st-42"))
        assert page.status_code == 200
        assert "billops CLI" in page.text
        form = _parse(page.text)
        assert biller_id in form.billers
        assert form.buttons == ["approve", "deny"]

        landed = browser.post(
            f"{admin.root}/auth/login",
            data={**form.hidden, "biller_id": biller_id, "decision": "approve"},
        )

        assert landed.status_code == 200
        assert "You may close this window" in landed.text
        assert receiver.arrived.wait(5)
    query = receiver.received[0]
    assert query["state"] == "st-42"
    assert admin.biller_behind_code(app, query["code"], receiver.redirect_uri) == biller_id


def test_deny_redirects_with_access_denied(admin: SandboxAdmin) -> None:
    app = admin.create_app()
    admin.create_biller()
    with loopback_receiver() as receiver, httpx.Client(follow_redirects=True) as browser:
        form = _parse(
            browser.get(_login_url(admin.root, app.client_id, receiver.redirect_uri, "st-1")).text
        )
        browser.post(f"{admin.root}/auth/login", data={**form.hidden, "decision": "deny"})
        assert receiver.arrived.wait(5)
    assert receiver.received[0] == {"error": "access_denied", "state": "st-1"}


def test_unknown_client_gets_an_error_page_and_no_redirect(admin: SandboxAdmin) -> None:
    response = httpx.get(
        _login_url(admin.root, "sbx_ci_unknown", "http://127.0.0.1:9/cb", "s"),
        follow_redirects=False,
    )
    assert response.status_code == 400
    assert "Unknown application" in response.text
    assert "location" not in response.headers


def test_unregistered_non_loopback_redirect_is_refused(admin: SandboxAdmin) -> None:
    app = admin.create_app(redirect_uri="https://app.example/callback")
    evil = httpx.get(
        _login_url(admin.root, app.client_id, "https://evil.example/cb", "s"),
        follow_redirects=False,
    )
    assert evil.status_code == 400
    assert "not registered" in evil.text
    registered = httpx.get(_login_url(admin.root, app.client_id, app.redirect_uri, "s"))
    assert registered.status_code == 200


def test_any_loopback_port_is_accepted(admin: SandboxAdmin) -> None:
    app = admin.create_app(redirect_uri="https://app.example/callback")
    for uri in ("http://127.0.0.1:1/cb", "http://localhost:65000/x", "http://[::1]:8080/"):
        page = httpx.get(_login_url(admin.root, app.client_id, uri, "s"))
        assert page.status_code == 200, uri


def test_consent_page_escapes_what_it_echoes(admin: SandboxAdmin) -> None:
    app = admin.create_app(name="<script>alert(1)</script>")
    admin.create_biller("Tom & Jerry <Ltd>")
    page = httpx.get(_login_url(admin.root, app.client_id, app.redirect_uri, "'\"><b>"))
    assert "<script>alert(1)" not in page.text
    assert "Tom &amp; Jerry &lt;Ltd&gt;" in page.text
    assert re.search(r"value='&#x27;&quot;&gt;&lt;b&gt;'", page.text)
