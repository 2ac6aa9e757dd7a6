"""Fixtures shared by every test.

- ``sandbox``: a sandbox on a free loopback port for the whole session (its root URL); tests
  isolate by creating their own app and biller. Tests that change the sandbox's config or clock
  start their own with ``running_sandbox`` instead.
- ``admin``: a :class:`SandboxAdmin` on that sandbox; ``biller_token`` / ``platform_token``.
- ``prefect``: a session-scoped Prefect test harness (temporary ``PREFECT_HOME``, 60 s start-up).
- ``database_url``: SQLite, and PostgreSQL when ``BILLOPS_TEST_DATABASE_URL`` is set (a database of
  its own per test session, created and dropped here).
"""

from __future__ import annotations

import logging
import os
import shutil
import sys
import tempfile
from collections.abc import Iterator

import pytest

# Prefect reads these when it is first imported, so they are set before any test module loads.
# A temporary PREFECT_HOME keeps results and cache records from leaking between test sessions.
_PREFECT_HOME = tempfile.mkdtemp(prefix="billops-test-prefect-")
os.environ["PREFECT_HOME"] = _PREFECT_HOME
os.environ["PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS"] = "60"
os.environ["PREFECT_SERVER_ANALYTICS_ENABLED"] = "false"

from tests.support.databases import temporary_postgres_database  # noqa: E402
from tests.support.sandbox_admin import (  # noqa: E402
    BillerTokens,
    PlatformToken,
    SandboxAdmin,
    running_sandbox,
)

pytest_plugins = ["tests.support.secret_scan"]
POSTGRES_ENV = "BILLOPS_TEST_DATABASE_URL"


def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    shutil.rmtree(_PREFECT_HOME, ignore_errors=True)


@pytest.fixture(autouse=True)
def _log_handlers_on_a_live_stream() -> Iterator[None]:
    """Typer's CliRunner swaps sys.stderr for each invoke and closes it after; a logging handler
    set up during one invoke (Prefect's console handler) keeps the closed stream, and its next
    record prints "--- Logging error ---" into a later test's output. Point such handlers back
    at the real stderr around every test."""
    _repoint_closed_handlers()
    yield
    _repoint_closed_handlers()


def _repoint_closed_handlers() -> None:
    loggers = [logging.getLogger(), *logging.Logger.manager.loggerDict.values()]
    for logger in loggers:
        for handler in getattr(logger, "handlers", ()):
            if not isinstance(handler, logging.StreamHandler):
                continue
            if getattr(handler.stream, "closed", False):
                handler.stream = sys.__stderr__  # not setStream: it flushes the closed one
            console = getattr(handler, "console", None)  # Prefect's handler prints through rich
            if console is not None and getattr(console.file, "closed", False):
                console.file = sys.__stderr__


@pytest.fixture(scope="session")
def sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """The root URL of a sandbox shared by the session (SQLite file in a temp dir)."""
    database = tmp_path_factory.mktemp("sandbox") / "sandbox.db"
    with running_sandbox(f"sqlite:///{database}") as admin:
        yield admin.root


@pytest.fixture
def admin(sandbox: str) -> Iterator[SandboxAdmin]:
    helper = SandboxAdmin(sandbox)
    yield helper
    helper.close()


@pytest.fixture
def biller_token(admin: SandboxAdmin) -> BillerTokens:
    """A fresh biller connected to a fresh app: access and refresh token."""
    return admin.connect_biller()


@pytest.fixture
def platform_token(admin: SandboxAdmin) -> PlatformToken:
    """A platform (client-credentials) token of a fresh app."""
    return admin.platform_token()


@pytest.fixture(scope="session")
def prefect() -> Iterator[None]:
    """A Prefect API for the tests that run flows (started on first use: it takes ~10 s)."""
    from prefect.testing.utilities import prefect_test_harness

    with prefect_test_harness(server_startup_timeout=60):
        yield


@pytest.fixture(scope="session")
def postgres_url() -> Iterator[str]:
    server = os.environ.get(POSTGRES_ENV)
    if not server:
        pytest.skip(f"{POSTGRES_ENV} is not set: PostgreSQL tests skipped")
    with temporary_postgres_database(server) as url:
        yield url


@pytest.fixture(params=["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)])
def database_url(request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory) -> str:
    """A database for one test: a new SQLite file, or the session's PostgreSQL database."""
    if request.param == "sqlite":
        return f"sqlite:///{tmp_path_factory.mktemp('db') / 'test.db'}"
    return str(request.getfixturevalue("postgres_url"))
