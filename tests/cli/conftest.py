"""Fixtures of the CLI tests: the CLI in-process (typer's runner) with ``BILLOPS_HOME`` in a
temporary directory; helpers to run it as a subprocess are in ``tests/support/cli.py``."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.support.credential_fixtures import (  # noqa: F401 - fixtures, found by name
    prefect_api,
    short_admin,
    short_token_sandbox,
)
from tests.support.import_billers import (  # noqa: F401 - fixtures
    empty_home,
    import_biller,
    ledger_home,
)
from tests.support.ledger_db import clock, ledger, ledger_url  # noqa: F401 - fixtures


@pytest.fixture
def billops_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "billops-home"
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    return home


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()
