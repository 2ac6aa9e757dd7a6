"""Fixtures of the credential tests (blocks and ``billops auth``): a sandbox whose access tokens
live 2 seconds, so refreshes happen within a test's seconds (in this process's threads, or in a
process of its own, as the real service is), and the Prefect API's URL.

A ``conftest.py`` that needs them imports them by name (pytest finds fixtures in a conftest's
namespace).
"""

from __future__ import annotations

import subprocess
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

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
    """An admin client of the 2-second-token sandbox."""
    helper = SandboxAdmin(short_token_sandbox)
    yield helper
    helper.close()


@pytest.fixture
def prefect_api(prefect: None) -> str:
    """The session's Prefect API URL (the harness is started on first use)."""
    from prefect.settings import PREFECT_API_URL

    return str(PREFECT_API_URL.value())


@contextmanager
def sandbox_process(database: Path, *, access_token_ttl: int = 2) -> Iterator[SandboxAdmin]:
    """``billops sandbox serve`` in a process of its own: it shares no interpreter lock with the
    test, so its answers leave it as promptly as the real service's would."""
    command = [sys.executable, "-m", "billops.cli", "sandbox", "serve", "--port", "0"]
    command += ["--db", f"sqlite:///{database}", "--access-token-ttl", str(access_token_ttl)]
    server = subprocess.Popen(command, stdout=subprocess.PIPE, text=True)
    try:
        assert server.stdout is not None
        line = server.stdout.readline().strip()
        assert line.startswith("sandbox ready: "), f"sandbox did not start: {line!r}"
        admin = SandboxAdmin(line.removeprefix("sandbox ready: "))
        try:
            yield admin
        finally:
            admin.close()
    finally:
        server.terminate()
        server.wait(timeout=30)


@pytest.fixture(scope="module")
def short_token_sandbox_process(
    tmp_path_factory: pytest.TempPathFactory,
) -> Iterator[SandboxAdmin]:
    """A sandbox process of the test module's own whose access tokens live 2 seconds."""
    with sandbox_process(tmp_path_factory.mktemp("sandbox-process") / "sandbox.db") as admin:
        yield admin
