"""Fixtures of the credential-block tests (defined in ``tests/support/credential_fixtures.py``),
and a ``$BILLOPS_HOME`` of each test's own, where its refresh locks and journal live."""

from pathlib import Path

import pytest

from tests.support.credential_fixtures import (  # noqa: F401 - fixtures, found by name
    prefect_api,
    short_admin,
    short_token_sandbox,
    short_token_sandbox_process,
)


@pytest.fixture(autouse=True)
def billops_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "billops-home"
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    return home
