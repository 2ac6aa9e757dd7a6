"""With a Prefect server, each file's run is started through the ``process-inbox-file``
deployment under an idempotency key from its content: two copies of one content start one run,
and the copy whose run never started is reported as a duplicate once that run has ended."""

from __future__ import annotations

import shutil
from pathlib import Path
from typing import Any

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import DeploymentFilter, DeploymentFilterId
from prefect.flow_engine import run_flow

from flows.inbox import inbox_scan, process_inbox_file
from tests.inbox.files import payment_requests
from tests.support.import_billers import ImportBiller


def runs_of(deployment_id: Any) -> list[Any]:
    with get_client(sync_client=True) as client:
        return client.read_flow_runs(
            deployment_filter=DeploymentFilter(id=DeploymentFilterId(any_=[deployment_id]))
        )


def test_copies_of_one_content_start_one_run_and_the_other_is_a_duplicate(
    biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    deployment: Any = process_inbox_file.to_deployment(name=f"inbox-{biller.block}")
    deployment_id = deployment.apply()
    name = f"process-inbox-file/inbox-{biller.block}"
    root = tmp_path / "inbox"
    folder = root / biller.block / "payment-requests"
    original = payment_requests(folder / "a.csv", biller, "D")
    shutil.copy(original, folder / "b.csv")

    first = inbox_scan(root=root, via_deployment=name, settle_seconds=0, return_state=True)
    assert "2 file(s) taken" in str(first.message)
    [run] = runs_of(deployment_id)
    assert run.parameters["file"].endswith("/processing/payment-requests/a.csv")
    waiting = sorted(p.name for p in (root / biller.block / "processing").rglob("*.csv"))
    assert waiting == ["a.csv", "b.csv"]  # a waits for its run; b for a's run to end

    # A worker runs it (here, in this process).
    state: Any = run_flow(
        process_inbox_file, flow_run=run, parameters=run.parameters, return_type="state"
    )
    assert state.name == "Processed", state.message

    second = inbox_scan(root=root, via_deployment=name, settle_seconds=0, return_state=True)
    assert "1 file(s) taken" in str(second.message)
    assert len(runs_of(deployment_id)) == 1
    reports = {p.name: p.read_text() for p in (root / biller.block / "processed").rglob("*.txt")}
    assert "outcome:  duplicate" in reports["b.csv.inbox.txt"]
    assert "outcome:  duplicate" not in reports["a.csv.inbox.txt"]
    assert len(biller.payment_requests()) == 2
    assert not list((root / biller.block / "processing").rglob("*.csv"))
