"""Fixtures for sandbox tests that need a sandbox of their own and a look at its database."""

from __future__ import annotations

from collections.abc import Iterator

import pytest
from sqlalchemy.orm import Session, sessionmaker

from sandbox.core.db import make_engine, make_session_factory
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox


@pytest.fixture(scope="module")
def private(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[tuple[SandboxAdmin, str]]:
    """A sandbox for one test module (its admin helper and database URL): for tests that set up
    states no API call produces (a SUBMITTED payment request) by writing to its database."""
    name = request.module.__name__.rsplit(".", 1)[-1]
    url = f"sqlite:///{tmp_path_factory.mktemp(name) / 'sandbox.db'}"
    with running_sandbox(url) as admin:
        yield admin, url


@pytest.fixture(scope="module")
def db(private: tuple[SandboxAdmin, str]) -> Iterator[sessionmaker[Session]]:
    """Sessions on the module's sandbox database."""
    engine = make_engine(private[1])
    yield make_session_factory(engine)
    engine.dispose()
