"""``PlatformCredentials``: the client-credentials token is cached in the block and shared."""

from __future__ import annotations

import httpx
import pytest
from pydantic import SecretStr

from billing_api import RefreshingAuth
from blocks import PlatformCredentials
from tests.support.credentials import unique_name
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret


def _platform_grants(admin: SandboxAdmin, client_id: str) -> int:
    apps = admin.stats()["apps"]
    return int(apps.get(client_id, {}).get("tokenGrants", {}).get("client_credentials", 0))


def test_the_platform_token_is_cached_in_the_block_and_reused(
    prefect_api: str, admin: SandboxAdmin
) -> None:
    credentials = admin.create_app("platform app")
    name = unique_name("plat")
    PlatformCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=credentials.client_id,
        client_secret=SecretStr(credentials.client_secret),
    ).save(name)

    first = PlatformCredentials.load(name).get_token_provider().access_token()
    register_secret(first)
    # Another worker (a new provider on a fresh load) finds the cached token: no second grant.
    second = PlatformCredentials.load(name).get_token_provider().access_token()

    assert first == second
    assert _platform_grants(admin, credentials.client_id) == 1
    stored = PlatformCredentials.load(name)
    assert stored.access_token is not None and stored.access_token.get_secret_value() == first
    assert first not in repr(stored)
    hooks = httpx.get(
        f"{admin.root}/api/apps/{credentials.client_id}/webhooks",
        auth=RefreshingAuth(stored.get_token_provider()),
    )
    assert hooks.status_code == 200


def test_a_sandbox_platform_block_needs_its_base_url() -> None:
    with pytest.raises(ValueError, match="base_url is required"):
        PlatformCredentials(environment="sandbox", client_id="c", client_secret=SecretStr("s"))
