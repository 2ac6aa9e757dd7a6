"""A small client of the sandbox's admin API (``/_sandbox``) and its OAuth endpoints, for tests.

Set-up calls raise with the sandbox's answer in the message when they fail; calls whose answer the
test asserts on (``token``) return the raw ``httpx.Response``.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from datetime import date
from typing import Any

import httpx

from sandbox.config import RuntimeConfig, SandboxSettings
from sandbox.serve import serve_in_thread
from tests.support.contract_check import check_response


@dataclass(frozen=True)
class AppCredentials:
    client_id: str
    client_secret: str
    redirect_uri: str


@dataclass(frozen=True)
class BillerTokens:
    app: AppCredentials
    biller_id: str
    access_token: str
    refresh_token: str
    expires_in: int

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}


@dataclass(frozen=True)
class PlatformToken:
    app: AppCredentials
    access_token: str
    expires_in: int

    @property
    def headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.access_token}"}


def _ok(response: httpx.Response) -> dict[str, Any]:
    if response.is_error:
        raise AssertionError(
            f"{response.request.method} {response.request.url} -> {response.status_code}: "
            f"{response.text}"
        )
    return response.json() if response.content else {}


def _read_and_check(response: httpx.Response) -> None:
    response.read()
    check_response(response)


class SandboxAdmin:
    """Drives one running sandbox: ``root`` is its root URL, ``api`` a client on ``root/api``."""

    def __init__(self, root: str) -> None:
        self.root = root
        self.http = httpx.Client(base_url=root, timeout=30)
        # Every API answer a test sees is checked against the contract.
        self.api = httpx.Client(
            base_url=f"{root}/api", timeout=30, event_hooks={"response": [_read_and_check]}
        )

    def close(self) -> None:
        self.http.close()
        self.api.close()

    # --- setup ---
    def create_app(self, name: str = "test app", redirect_uri: str | None = None) -> AppCredentials:
        body: dict[str, Any] = {"name": name}
        if redirect_uri:
            body["redirectUri"] = redirect_uri
        data = _ok(self.http.post("/_sandbox/apps", json=body))
        return AppCredentials(data["clientId"], data["clientSecret"], data["redirectUri"])

    def create_biller(self, name: str = "Test Biller Ltd", **fields: Any) -> str:
        return str(
            _ok(self.http.post("/_sandbox/billers", json={"name": name, **fields}))["billerId"]
        )

    def authorization_code(
        self,
        app: AppCredentials,
        biller_id: str,
        *,
        read_only: bool = False,
        redirect_uri: str | None = None,
    ) -> str:
        body: dict[str, Any] = {"billerId": biller_id, "readOnly": read_only}
        if redirect_uri:
            body["redirectUri"] = redirect_uri
        path = f"/_sandbox/apps/{app.client_id}/authorization_codes"
        return str(_ok(self.http.post(path, json=body))["code"])

    # --- OAuth ---
    def token(self, app: AppCredentials, **form: str) -> httpx.Response:
        """``POST /api/oauth2/token`` with the app's credentials as form fields."""
        data = {"client_id": app.client_id, "client_secret": app.client_secret, **form}
        return self.api.post("/oauth2/token", data=data)

    def connect_biller(
        self,
        name: str = "Test Biller Ltd",
        *,
        read_only: bool = False,
        app: AppCredentials | None = None,
    ) -> BillerTokens:
        """A new biller authorised for an app: what a biller's first login leaves behind."""
        app = app or self.create_app()
        biller_id = self.create_biller(name)
        code = self.authorization_code(app, biller_id, read_only=read_only)
        data = _ok(self.token(app, grant_type="authorization_code", code=code))
        return BillerTokens(
            app, biller_id, data["access_token"], data["refresh_token"], data["expires_in"]
        )

    def biller_behind_code(self, app: AppCredentials, code: str, redirect_uri: str) -> str:
        """Exchange a code as a CLI login would; returns the id of the biller the token opens."""
        tokens = _ok(
            self.token(app, grant_type="authorization_code", code=code, redirect_uri=redirect_uri)
        )
        me = self.api.get("/biller", headers={"Authorization": f"Bearer {tokens['access_token']}"})
        return str(_ok(me)["id"])

    def platform_token(self, app: AppCredentials | None = None) -> PlatformToken:
        app = app or self.create_app()
        data = _ok(self.token(app, grant_type="client_credentials"))
        return PlatformToken(app, data["access_token"], data["expires_in"])

    # --- observe and steer ---
    def stats(self, biller_id: str | None = None) -> dict[str, Any]:
        params = {"billerId": biller_id} if biller_id else {}
        return _ok(self.http.get("/_sandbox/stats", params=params))

    def biller_stats(self, biller_id: str) -> dict[str, Any]:
        return dict(self.stats(biller_id)["billers"].get(biller_id, {}))

    def configure(self, **changes: Any) -> dict[str, Any]:
        return _ok(self.http.post("/_sandbox/config", json=changes))

    def advance_clock(self, **how: Any) -> dict[str, Any]:
        return _ok(self.http.post("/_sandbox/clock/advance", json=how))

    def reset(self) -> None:
        _ok(self.http.post("/_sandbox/reset"))


@contextmanager
def running_sandbox(
    database_url: str, *, clock_start: date | None = None, **runtime: Any
) -> Iterator[SandboxAdmin]:
    """A sandbox of its own on a free loopback port (for tests that change config or the clock);
    ``runtime`` are ``/_sandbox/config`` settings by their camelCase names."""
    settings = SandboxSettings(
        port=0,
        database_url=database_url,
        runtime=RuntimeConfig.model_validate(runtime),
        clock_start=clock_start,
    )
    with serve_in_thread(settings) as root:
        admin = SandboxAdmin(root)
        try:
            yield admin
        finally:
            admin.close()
