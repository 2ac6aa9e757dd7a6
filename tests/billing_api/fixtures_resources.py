"""Fixtures and helpers of the resource tests (H2): one scenario, both clients.

A scenario is an ``async def`` taking a client; :func:`drive` runs it with a blocking
:class:`BillingClient` or an :class:`AsyncBillingClient` over the real sandbox, so every resource
group is exercised by both flavours from one text. :func:`done` awaits a coroutine (async client)
or returns a plain value (blocking client); :func:`collect` drains either kind of pager.

A test module re-binds the fixtures it uses (``flavour = fixtures_resources.flavour``), since
H1 owns ``tests/billing_api/conftest.py``.
"""

from __future__ import annotations

import asyncio
import inspect
import uuid
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import pytest

from billing_api._auth import StaticTokenAuth
from billing_api._client import AsyncBillingClient, BillingClient
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

T = TypeVar("T")
Client = BillingClient | AsyncBillingClient
Scenario = Callable[[Any], Awaitable[T]]


async def done(value: Any) -> Any:
    """The result of a client call, whichever flavour made it."""
    if inspect.isawaitable(value):
        return await value
    return value


async def collect(pager: Any) -> list[Any]:
    """Every item of a sync or async pager."""
    if hasattr(pager, "__aiter__"):
        return [item async for item in pager]
    return list(pager)


class Connected:
    """A biller connected to an app, as tests need it. Its repr hides the token: pytest prints
    the arguments of every frame of a failure, and those reports are scanned for secrets."""

    def __init__(self, tokens: BillerTokens) -> None:
        self.biller_id = tokens.biller_id
        self.client_id = tokens.app.client_id
        self.auth = StaticTokenAuth(tokens.access_token)

    def __repr__(self) -> str:
        return f"Connected(biller_id={self.biller_id!r})"


def drive(
    flavour: str, root: str, auth: StaticTokenAuth, scenario: Scenario[T], **client: Any
) -> T:
    """Run ``scenario`` with a fresh client of ``flavour`` (``sync`` or ``async``) on the
    sandbox at ``root``, authenticated by ``auth`` (never a bare token: see :class:`Connected`)."""

    async def main() -> T:
        if flavour == "sync":
            with BillingClient(f"{root}/api", auth, **client) as sync_client:
                return await scenario(sync_client)
        async with AsyncBillingClient(f"{root}/api", auth, **client) as async_client:
            return await scenario(async_client)

    return asyncio.run(main())


def unique(prefix: str) -> str:
    """A name no other test uses (customer create is idempotent by body)."""
    return f"{prefix} {uuid.uuid4().hex[:10]}"


@pytest.fixture(params=["sync", "async"])
def flavour(request: pytest.FixtureRequest) -> str:
    """Which client a test drives: each resource test runs once per flavour."""
    return str(request.param)


@pytest.fixture
def biller(admin: SandboxAdmin) -> Connected:
    """A fresh biller connected to a fresh app (its tokens are registered as secrets)."""
    return Connected(admin.connect_biller(unique("Biller")))


def add_card(admin: SandboxAdmin, customer_id: str) -> dict[str, Any]:
    """A test card on file (as the hosted pay page would save it)."""
    response = admin.http.post(f"/_sandbox/customers/{customer_id}/cards", json={})
    assert response.status_code in (200, 201), response.text
    return dict(response.json())


def force_mandate(admin: SandboxAdmin, customer_id: str, status: str) -> dict[str, Any]:
    """Force a customer's mandate into ``status`` (admin API)."""
    response = admin.http.put(f"/_sandbox/customers/{customer_id}/mandate", json={"status": status})
    assert response.status_code == 200, response.text
    return dict(response.json())
