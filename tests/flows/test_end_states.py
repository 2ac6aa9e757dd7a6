"""How runs look in the Prefect UI: named end states with the outcome as their message (never a
plain green "Completed" for a rejected file), a needs-attention event an automation can catch,
artifacts on the flow run keyed by biller and file with the report's rows in them, and an
unknown biller named with how to create it."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from flows.payment_requests import import_payment_requests, poll_import_jobs
from tasks.common.outcome import ATTENTION_EVENT
from tasks.common.session import UnknownBiller
from tests.support.import_billers import ImportBiller, write_rows
from tests.support.prefect_api import flow_run_artifacts, flow_run_events


def _with_a_bad_row(path: Path, biller: ImportBiller) -> Path:
    write_rows(path, biller, 3)
    with path.open("a", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerow(["Nobody Ltd", "5.00", "x", "BAD-1", ""])
    return path


def test_a_rejected_file_ends_rejected_and_asks_for_attention(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = _with_a_bad_row(tmp_path / "bad.csv", import_biller)

    state = import_payment_requests(
        file=file, biller=import_biller.block, dry_run=False, return_state=True
    )

    assert state.is_completed() and state.name == "Rejected"
    assert "nothing was sent" in (state.message or "")
    run_id = state.state_details.flow_run_id
    assert run_id is not None
    (event,) = flow_run_events(run_id, ATTENTION_EVENT)
    assert event.payload["outcome"] == "Rejected"


def test_partial_already_imported_and_dry_run_are_named(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = _with_a_bad_row(tmp_path / "mixed.csv", import_biller)
    common = {"file": file, "biller": import_biller.block, "return_state": True}

    dry = import_payment_requests(**common, on_bad_rows="skip")
    partial = import_payment_requests(**common, dry_run=False, on_bad_rows="skip")
    again = import_payment_requests(**common, dry_run=False, on_bad_rows="skip")

    assert (dry.name, partial.name, again.name) == (
        "Dry run with rejections",
        "Completed with rejections",
        "Already imported",
    )
    assert "CREATED 3" in (partial.message or "") and "REJECTED 1" in (partial.message or "")
    assert all(s.is_completed() for s in (dry, partial, again))


def test_artifacts_hang_on_the_flow_run_keyed_by_biller_and_file_with_the_report_rows(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "June Invoices.csv", import_biller, 4)

    state = import_payment_requests(
        file=file, biller=import_biller.block, dry_run=False, return_state=True
    )

    run_id = state.state_details.flow_run_id
    # Keyed artifacts are the run's reports: on the flow run itself. (The polling task's progress
    # bar stays on its task: that is where the run graph draws it.)
    artifacts = [a for a in flow_run_artifacts(run_id) if a.key]  # type: ignore[arg-type]
    assert artifacts and all(a.task_run_id is None for a in artifacts), [
        (a.key, a.task_run_id) for a in artifacts
    ]
    keys = {a.key for a in artifacts}
    prefix = f"payment-requests-{import_biller.block}-june-invoices-csv"
    assert {f"{prefix}-summary", f"{prefix}-outcome", f"{prefix}-report"} <= keys, keys
    (report,) = [a for a in artifacts if a.key == f"{prefix}-report"]
    assert report.type == "table" and report.data.count('"CREATED"') == 4
    (outcome,) = [a for a in artifacts if a.key == f"{prefix}-outcome"]
    assert "Completed" in outcome.data and "job `" in outcome.data


def test_poll_import_jobs_leaves_a_summary(import_biller: ImportBiller, ledger_home: Path) -> None:
    state = poll_import_jobs(biller=import_biller.block, return_state=True)

    assert state.is_completed() and state.message == "no import job was left open"
    keys = {a.key for a in flow_run_artifacts(state.state_details.flow_run_id)}  # type: ignore[arg-type]
    assert f"payment-requests-{import_biller.block}-settled-summary" in keys


def test_an_unknown_biller_says_how_to_create_it(prefect: None, ledger_home: Path) -> None:
    with pytest.raises(UnknownBiller, match=r"billops auth login --block acme-nosuch"):
        poll_import_jobs(biller="acme-nosuch")
