"""The nightly flow: every biller independently, a summary table, failure only at the end."""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest
from prefect.artifacts import Artifact

from blocks import BillerCredentials
from flows.nightly import NightlyFailed, nightly
from flows.payment_requests import import_payment_requests
from tasks.common.crash_points import CRASH_ENV
from tests.support.import_billers import ImportBiller, write_rows
from tests.support.sandbox_admin import SandboxAdmin


def _dead_biller(admin: SandboxAdmin) -> str:
    """A credential block whose refresh token the service has never issued."""
    app = admin.create_app()
    name = f"dead-{uuid.uuid4().hex[:8]}"
    BillerCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=app.client_id,
        client_secret=app.client_secret,
        refresh_token="not-a-refresh-token",
    ).save(name)
    return name


def test_nightly_settles_open_imports_and_one_dead_biller_does_not_stop_the_others(
    import_biller: ImportBiller,
    admin: SandboxAdmin,
    ledger_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    file = write_rows(tmp_path / "open.csv", import_biller, 8)
    monkeypatch.setenv(CRASH_ENV, "mid_poll")
    with pytest.raises(BaseException) as crashed:  # noqa: B017 - a simulated crash is a BaseException
        import_payment_requests(file=file, biller=import_biller.block, dry_run=False)
    assert "mid_poll" in repr(crashed.value)
    dead = _dead_biller(admin)

    with pytest.raises(NightlyFailed, match=dead):
        nightly(billers=[dead, import_biller.block])

    summary = Artifact.get("nightly-summary")
    assert summary is not None
    assert dead in str(summary.data) and "FAILED" in str(summary.data)
    assert "billops auth login --block" in str(summary.data)
    assert len(import_biller.payment_requests()) == 8


def test_nightly_over_healthy_billers_succeeds(
    import_biller: ImportBiller, ledger_home: Path
) -> None:
    results = nightly(billers=[import_biller.block])

    assert [(r.biller, r.ok) for r in results] == [(import_biller.block, True)]
