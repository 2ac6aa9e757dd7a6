"""Sandbox settings: what ``billops sandbox serve`` starts with, and what may change at run time."""

from __future__ import annotations

from datetime import date
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

from sandbox.faults import FaultPlan

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
    # Webhook delivery (wall time; tests set milliseconds): the wait before retry n is
    # base * 2**(n-1) plus up to 50% jitter, capped; delivery stops after the attempts or the
    # window (the real service: 185 attempts within 24 h) [C]; a target gets ``timeout`` s [I].
    webhook_retry_base_seconds: float = Field(5.0, alias="webhookRetryBaseSeconds", gt=0)
    webhook_retry_max_seconds: float = Field(600.0, alias="webhookRetryMaxSeconds", gt=0)
    webhook_max_attempts: int = Field(185, alias="webhookMaxAttempts", ge=1, le=1000)
    webhook_retry_window_seconds: float = Field(86400.0, alias="webhookRetryWindowSeconds", gt=0)
    webhook_timeout_seconds: float = Field(10.0, alias="webhookTimeoutSeconds", gt=0, le=300)


class SandboxSettings(BaseModel):
    """Start-up settings of one sandbox process (or one in-thread test server)."""

    host: str = "127.0.0.1"
    port: int = 8765
    database_url: str = "sqlite:///sandbox.db"
    runtime: RuntimeConfig = Field(default_factory=lambda: RuntimeConfig())
    # The admin API has no authentication; by default only loopback clients may use it.
    admin_allow_remote: bool = False
    # The sandbox's first day (``--clock-start``): pins the clock of a new database so a run is
    # reproducible on any day; a database whose clock already runs keeps it.
    clock_start: date | None = None
    # Fault injection at start-up (``--faults``); off by default, changed by /_sandbox/faults.
    faults: FaultPlan = Field(default_factory=lambda: FaultPlan())
