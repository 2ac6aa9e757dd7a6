"""Tasks are batch-sized: a 1,200-row import costs one task run per chunk plus a few, never one
per row (Prefect charges milliseconds of bookkeeping per task run)."""

from __future__ import annotations

from pathlib import Path
from uuid import UUID

from prefect.client.orchestration import get_client
from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

from flows.payment_requests import import_payment_requests
from tests.support.import_billers import ImportBiller, write_rows

ROWS, CHUNK = 1200, 200
# prepare-import, settle-import-jobs, write-import-reports (and room for one more).
FIXED_TASKS = 4


def _task_runs(flow_run_id: str) -> list[str]:
    with get_client(sync_client=True) as client:
        runs = client.read_task_runs(
            flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=[UUID(flow_run_id)]))
        )
    return [run.name for run in runs]


def test_a_1200_row_import_costs_chunks_plus_a_constant_in_task_runs(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "big.csv", import_biller, ROWS)

    summary = import_payment_requests(
        file=file, biller=import_biller.block, dry_run=False, chunk_size=CHUNK
    )

    assert summary.status == "imported", summary.message
    chunks = ROWS // CHUNK
    names = _task_runs(summary.run_id)
    assert sum(name.startswith("submit-chunk") for name in names) == chunks
    assert len(names) <= chunks + FIXED_TASKS
    assert len(import_biller.payment_requests()) == ROWS
