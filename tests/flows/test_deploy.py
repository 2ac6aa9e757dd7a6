"""``billops deploy``: setup, the work pool, and every deployment of deployments/prefect.yaml on
the Prefect server (the session harness), with the nightly schedule and its concurrency rule."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from prefect.client.orchestration import get_client

from tests.support.credentials import subprocess_env


@pytest.mark.slow
def test_deploy_creates_the_pool_and_the_deployments(prefect: None, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "billops.cli", "deploy"],
        env=subprocess_env(BILLOPS_HOME=str(tmp_path)),
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert done.returncode == 0, done.stdout + done.stderr

    with get_client(sync_client=True) as client:
        assert client.read_work_pool("billops").type == "process"
        nightly = client.read_deployment_by_name("nightly/nightly")
        imports = client.read_deployment_by_name("import-payment-requests/import-payment-requests")
        client.read_deployment_by_name("poll-import-jobs/poll-import-jobs")
    (schedule,) = nightly.schedules
    assert schedule.schedule.cron == "30 2 * * *"  # type: ignore[union-attr]
    assert schedule.schedule.timezone == "Europe/London"  # type: ignore[union-attr]
    assert nightly.global_concurrency_limit is not None
    assert nightly.global_concurrency_limit.limit == 1
    assert nightly.concurrency_options is not None
    assert str(nightly.concurrency_options.collision_strategy).endswith("CANCEL_NEW")
    assert imports.parameters["dry_run"] is True
