"""Fixtures of the credential-block tests: the Prefect harness and a sandbox with 2-second
access tokens (so refreshes happen within a test's seconds)."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.sandbox_admin import SandboxAdmin, running_sandbox


@pytest.fixture(scope="session")
def short_token_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Root URL of a sandbox whose biller access tokens live 2 seconds."""
    database = tmp_path_factory.mktemp("short-sandbox") / "sandbox.db"
    with running_sandbox(f"sqlite:///{database}", accessTokenTtl=2, platformTokenTtl=2) as admin:
        yield admin.root


@pytest.fixture
def short_admin(short_token_sandbox: str) -> Iterator[SandboxAdmin]:
    helper = SandboxAdmin(short_token_sandbox)
    yield helper
    helper.close()


@pytest.fixture
def prefect_api(prefect: None) -> str:
    """The session's Prefect API URL (the harness is started on first use)."""
    from prefect.settings import PREFECT_API_URL

    return str(PREFECT_API_URL.value())
