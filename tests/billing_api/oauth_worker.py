"""The worker of the multi-process rotation test: imports only ``billing_api`` and httpx, so that
spawned processes start fast (no sandbox, no pytest)."""

from __future__ import annotations

import time
from typing import Any

import httpx

from billing_api import (
    BillingApiError,
    ClientCredentials,
    FileTokenStore,
    OAuthClient,
    RefreshingAuth,
    TokenManager,
)


def hammer(
    store_path: str, api_url: str, client_id: str, client_secret: str, seconds: float
) -> dict[str, Any]:
    """One worker PROCESS: GET /biller through a refreshing client for ``seconds``."""
    store = FileTokenStore(
        store_path, name="shared", reauthorize_command="billops auth login --block shared"
    )
    oauth = OAuthClient(api_url, ClientCredentials(client_id, client_secret))
    manager = TokenManager(store, oauth)
    outcome: dict[str, Any] = {"ok": 0, "failed": 0, "errors": []}
    deadline = time.monotonic() + seconds
    with oauth, httpx.Client(base_url=api_url, auth=RefreshingAuth(manager), timeout=30) as http:
        while time.monotonic() < deadline:
            try:
                response = http.get("/biller")
            except BillingApiError as error:
                outcome["failed"] += 1
                outcome["errors"].append(type(error).__name__)
                break
            if response.status_code == 200:
                outcome["ok"] += 1
            else:
                outcome["failed"] += 1
                outcome["errors"].append(response.status_code)
            time.sleep(0.05)
    return outcome
