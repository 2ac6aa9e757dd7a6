"""Fixtures of the delinquency suite: a BILLOPS_HOME with its ledger, a sandbox with a clock."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from pathlib import Path

import pytest

from tests.delinquency.scenario import Scenario, new_scenario
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox

START = date(2027, 3, 1)  # a Monday
# A year-long access token: the clock moves weeks in a test, and only the block's own token is
# under test elsewhere.
LONG_TOKENS = {"accessTokenTtl": 3600 * 24 * 365}


@pytest.fixture
def dlq_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A BILLOPS_HOME of the test's own with its ledger created (as ``billops setup`` does)."""
    from ledger import upgrade_database
    from ledger.settings import BillopsSettings

    home = tmp_path / "billops-home"
    home.mkdir()
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    upgrade_database(BillopsSettings().ledger_database_url)
    return home


@pytest.fixture
def clock_sandbox(tmp_path: Path) -> Iterator[SandboxAdmin]:
    """A sandbox of the test's own whose clock starts on :data:`START`."""
    with running_sandbox(
        f"sqlite:///{tmp_path / 'sandbox.db'}", clock_start=START, **LONG_TOKENS
    ) as admin:
        yield admin


@pytest.fixture
def scenario(prefect: None, dlq_home: Path, clock_sandbox: SandboxAdmin) -> Iterator[Scenario]:
    with new_scenario(clock_sandbox) as made:
        yield made
