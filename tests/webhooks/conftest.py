"""Fixtures of the webhook tests: a sandbox that retries deliveries within a second, a platform
block set up by ``set_up_webhooks`` against it, and a ledger of the test's own."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import pytest
from pydantic import SecretStr

from blocks import PlatformCredentials
from ledger import Ledger
from tests.support.credential_fixtures import prefect_api  # noqa: F401 - a fixture
from tests.support.credentials import unique_name
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox

RETRY_BASE = 0.2


@pytest.fixture(scope="session")
def hooks_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxAdmin]:
    """A sandbox whose failed deliveries are retried after 0.2-0.3 s, then 0.4-0.6 s, ..."""
    url = f"sqlite:///{tmp_path_factory.mktemp('hooks') / 'sandbox.db'}"
    with running_sandbox(url, webhookRetryBaseSeconds=RETRY_BASE, webhookTimeoutSeconds=5) as admin:
        yield admin


@dataclass
class Platform:
    block: PlatformCredentials
    name: str
    tokens: BillerTokens  # a biller connected to the platform's app


@pytest.fixture
def platform(prefect_api: str, hooks_sandbox: SandboxAdmin) -> Platform:  # noqa: F811
    """A saved platform block of a new app, with a biller connected to that app."""
    tokens = hooks_sandbox.connect_biller("Hooked Biller Ltd")
    name = unique_name("plat")
    block = PlatformCredentials(
        environment="sandbox",
        base_url=f"{hooks_sandbox.root}/api",
        client_id=tokens.app.client_id,
        client_secret=SecretStr(tokens.app.client_secret),
    )
    block.save(name)
    return Platform(PlatformCredentials.load_named(name), name, tokens)


@pytest.fixture
def ledger(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Ledger]:
    with Ledger(f"sqlite:///{tmp_path_factory.mktemp('ledger') / 'ledger.db'}") as opened:
        yield opened
