"""Fixtures of the payout suite: a BILLOPS_HOME with its ledger, a sandbox with a clock, and a
biller on it with a credential block (``scenario.py``); one month of that biller shared by the
session's tests (each edits the month's files and reconciles them on a fresh ledger)."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.payouts.scenario import START, Month, PayoutScenario, month_on, new_payout_scenario
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox

# A year-long access token: the clock moves weeks in a test; the block's own token handling is
# tested elsewhere.
LONG_TOKENS = {"accessTokenTtl": 3600 * 24 * 365}


@pytest.fixture
def payout_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
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
def payouts(
    prefect: None, payout_home: Path, clock_sandbox: SandboxAdmin, tmp_path: Path
) -> Iterator[PayoutScenario]:
    with new_payout_scenario(clock_sandbox, tmp_path / "finance") as made:
        yield made


@pytest.fixture(scope="session")
def month(prefect: None, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Month]:
    """The month (``scenario.month_on``) on a sandbox of its own, made once per session."""
    folder = tmp_path_factory.mktemp("month")
    with running_sandbox(
        f"sqlite:///{folder / 'sandbox.db'}", clock_start=START, **LONG_TOKENS
    ) as admin:
        yield from month_on(admin, folder)


@pytest.fixture
def fresh_ledger(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A BILLOPS_HOME of the test's own with an empty ledger."""
    from ledger import upgrade_database
    from ledger.settings import BillopsSettings

    home = tmp_path / "home"
    home.mkdir()
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    upgrade_database(BillopsSettings().ledger_database_url)
    return home
