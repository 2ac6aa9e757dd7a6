"""Fixtures of the ``billing_api`` tests.

- ``sleeps``: an injected sleep that records the delays asked for instead of waiting.
- ``faulty``: a sandbox of the test module's own, for tests that inject faults (fault plans are
  sandbox-wide, so they must not touch the session's sandbox); ``faulty_tokens`` connects a fresh
  biller to it and clears the faults after the test.
"""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from tests.support.clocks import Sleeps
from tests.support.faults import clear_faults
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox


@pytest.fixture
def sleeps() -> Sleeps:
    return Sleeps()


@pytest.fixture(scope="module")
def faulty(
    request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> Iterator[SandboxAdmin]:
    name = request.module.__name__.rsplit(".", 1)[-1]
    with running_sandbox(f"sqlite:///{tmp_path_factory.mktemp(name) / 'sandbox.db'}") as admin:
        yield admin


@pytest.fixture
def faulty_tokens(faulty: SandboxAdmin) -> Iterator[BillerTokens]:
    yield faulty.connect_biller()
    clear_faults(faulty)
