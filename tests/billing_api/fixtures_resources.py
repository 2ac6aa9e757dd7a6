"""Fixtures and helpers of the resource tests: a scenario is a function taking a client;
:func:`drive` runs it with a :class:`BillingClient` over the real sandbox.

A test module re-binds the fixtures it uses (``biller = fixtures_resources.biller``).
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from typing import Any, TypeVar

import pytest

from billing_api import BillingClient, StaticTokenAuth
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

T = TypeVar("T")
Scenario = Callable[[BillingClient], T]


class Connected:
    """A biller connected to an app, as tests need it. Its repr hides the token: pytest prints
    the arguments of every frame of a failure, and those reports are scanned for secrets."""

    def __init__(self, tokens: BillerTokens) -> None:
        self.biller_id = tokens.biller_id
        self.client_id = tokens.app.client_id
        self.auth = StaticTokenAuth(tokens.access_token)

    def __repr__(self) -> str:
        return f"Connected(biller_id={self.biller_id!r})"


def drive(root: str, auth: StaticTokenAuth, scenario: Scenario[T], **client: Any) -> T:
    """Run ``scenario`` with a fresh client on the sandbox at ``root``, authenticated by ``auth``
    (never a bare token: see :class:`Connected`)."""
    with BillingClient(f"{root}/api", auth, **client) as sync_client:
        return scenario(sync_client)


def unique(prefix: str) -> str:
    """A name no other test uses (customer create is idempotent by body)."""
    return f"{prefix} {uuid.uuid4().hex[:10]}"


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
