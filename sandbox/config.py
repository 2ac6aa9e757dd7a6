"""Sandbox settings: what ``billops sandbox serve`` starts with, and what may change at run time."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

RefreshReusePolicy = Literal["reject", "revoke_family"]


class RuntimeConfig(BaseModel):
    """Settings that ``POST /_sandbox/config`` may change while the sandbox runs.

    ``refresh_reuse_policy`` decides what a second use of a rotated refresh token does. ``reject``
    (default) answers ``invalid_grant`` and leaves the newer token valid, which is all the contract
    says. ``revoke_family`` also kills every token issued from the same grant, the way Auth0's
    reuse detection does [I]: a client that ever replays a token locks its biller out, so tests can
    prove billops never does.
    """

    model_config = ConfigDict(populate_by_name=True, extra="forbid")

    access_token_ttl: int = Field(86400, alias="accessTokenTtl", ge=1)
    platform_token_ttl: int = Field(3600, alias="platformTokenTtl", ge=1)
    code_ttl: int = Field(600, alias="codeTtl", ge=1)
    refresh_reuse_policy: RefreshReusePolicy = Field("reject", alias="refreshReusePolicy")


class SandboxSettings(BaseModel):
    """Start-up settings of one sandbox process (or one in-thread test server)."""

    host: str = "127.0.0.1"
    port: int = 8765
    database_url: str = "sqlite:///sandbox.db"
    runtime: RuntimeConfig = Field(default_factory=lambda: RuntimeConfig())
    # The admin API has no authentication; by default only loopback clients may use it.
    admin_allow_remote: bool = False
