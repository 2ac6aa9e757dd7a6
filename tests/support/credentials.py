"""Credential blocks for tests: a saved ``BillerCredentials`` connected to a sandbox biller, what
the sandbox counted for it, and the environment of a subprocess that shares the Prefect API.

The fixtures that go with them (a sandbox with 2-second tokens, the Prefect API URL) are in
``tests/support/credential_fixtures.py``.
"""

from __future__ import annotations

import os
import uuid
from datetime import UTC, datetime, timedelta
from typing import Any

from pydantic import SecretStr

from blocks import BillerCredentials
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin
from tests.support.secret_scan import register_secret


def unique_name(prefix: str = "t") -> str:
    """A block name no other test uses (block names share the Prefect API)."""
    return f"{prefix}-{uuid.uuid4().hex[:12]}"


def save_connected_block(
    admin: SandboxAdmin, name: str, *, with_access_token: bool = True
) -> tuple[BillerCredentials, BillerTokens]:
    """Connect a new biller of a new app and save its tokens as block ``name`` (rotation 0)."""
    tokens = admin.connect_biller(f"Biller {name}")
    block = BillerCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=tokens.app.client_id,
        client_secret=SecretStr(tokens.app.client_secret),
        refresh_token=SecretStr(tokens.refresh_token),
        access_token=SecretStr(tokens.access_token) if with_access_token else None,
        access_token_expires_at=(
            datetime.now(UTC) + timedelta(seconds=tokens.expires_in) if with_access_token else None
        ),
        access_token_lifetime=float(tokens.expires_in),
    )
    block.save(name)
    return block, tokens


def token_grants(admin: SandboxAdmin, biller_id: str) -> dict[str, int]:
    """The sandbox's counts of token grants and ``invalid_grant`` answers for one biller."""
    stats = admin.biller_stats(biller_id)
    return {**stats.get("tokenGrants", {}), "invalid_grant": stats.get("invalidGrant", 0)}


def refresh_grants(admin: SandboxAdmin, biller_id: str) -> int:
    """How many refresh_token grants the sandbox answered for this biller."""
    grants: dict[str, Any] = admin.biller_stats(biller_id).get("tokenGrants", {})
    return int(grants.get("refresh_token", 0))


def invalid_grants(admin: SandboxAdmin, biller_id: str) -> int:
    """How many ``invalid_grant`` answers the sandbox gave for this biller."""
    return int(admin.biller_stats(biller_id).get("invalidGrant", 0))


def register_block_secrets(block: BillerCredentials) -> None:
    """Tell the secret scan about the tokens a block holds now."""
    stored = block.read()
    register_secret(stored.refresh_token)
    register_secret(stored.access_token)


def subprocess_env(**extra: str) -> dict[str, str]:
    """The environment for a subprocess that uses this session's Prefect API."""
    from prefect.settings import PREFECT_API_URL

    env = dict(os.environ)
    env["PREFECT_API_URL"] = str(PREFECT_API_URL.value())
    env.update(extra)
    return env
