"""Fixtures of the ``billing_api`` transport tests (H2's resource fixtures live in
``fixtures_resources.py``).

- ``StaticBearer``: an ``httpx.Auth`` that only sets ``Authorization: Bearer <token>`` (the real,
  refreshing OAuth flow is tested on its own).
- ``Sleeps``: an injected sleep that records the delays asked for instead of waiting.
- ``faulty``: a sandbox of the test module's own, for tests that inject faults (fault plans are
  sandbox-wide, so they must not touch the session's sandbox); ``faulty_tokens`` connects a fresh
  biller to it and clears the faults after the test.
"""

from __future__ import annotations

from collections.abc import Generator, Iterator
from typing import Any

import httpx
import pytest

from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox


class StaticBearer(httpx.Auth):
    """Attach a fixed bearer token; nothing else."""

    def __init__(self, token: str) -> None:
        self._token = token

    def auth_flow(self, request: httpx.Request) -> Generator[httpx.Request, httpx.Response, None]:
        request.headers["Authorization"] = f"Bearer {self._token}"
        yield request


class Sleeps:
    """Records the delays a client asks for (sync and async), never waiting."""

    def __init__(self) -> None:
        self.delays: list[float] = []

    def __call__(self, seconds: float) -> None:
        self.delays.append(seconds)

    async def asleep(self, seconds: float) -> None:
        self.delays.append(seconds)


def plan_faults(admin: SandboxAdmin, *rules: dict[str, Any], seed: int = 7) -> None:
    """Replace the sandbox's fault plan (rules use the admin API's camelCase names)."""
    response = admin.http.post("/_sandbox/faults", json={"seed": seed, "rules": list(rules)})
    assert response.status_code == 200, response.text


def fault_counts(admin: SandboxAdmin) -> dict[str, Any]:
    """``requests`` matched by a rule and ``injected`` per kind, since the plan was set."""
    shown = admin.http.get("/_sandbox/faults").json()
    return {"requests": shown["requests"], **shown["injected"]}


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
    assert faulty.http.delete("/_sandbox/faults").status_code == 204
