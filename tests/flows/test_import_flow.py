"""The import flow end to end against the sandbox: dry run, apply, bad rows, re-drops, reports."""

from __future__ import annotations

import csv
import uuid
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path

import pytest

from billing_api import Forbidden
from billops.run_cli import import_exit_code
from blocks import BillerCredentials
from flows.payment_requests import import_payment_requests, poll_import_jobs
from ledger import OperationState
from tasks.common.approval import ApprovalRequired, approved_from_cli
from tasks.common.session import open_ledger
from tests.support.import_billers import ImportBiller, write_rows
from tests.support.sandbox_admin import SandboxAdmin


def _read_report(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8") as handle:
        return list(csv.DictReader(handle))


def _bad_file(path: Path, biller: ImportBiller) -> Path:
    write_rows(path, biller, 6)
    past = (date.today() - timedelta(days=3)).strftime("%d/%m/%Y")
    with path.open("a", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["No Such Customer Ltd", "12.00", "Unknown", "BAD-1", past])
        writer.writerow([biller.customers[0][1], "-4.00", "Negative", "BAD-2", ""])
    return path


def test_dry_run_sends_nothing_and_reports_every_row(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "june.csv", import_biller, 12)

    summary = import_payment_requests(file=file, biller=import_biller.block)

    assert summary.status == "dry_run"
    assert import_exit_code(summary) == 0
    assert import_biller.jobs_submitted() == 0
    assert summary.report is not None
    report = _read_report(summary.report.report_csv)
    assert [row["outcome"] for row in report] == ["WOULD_IMPORT"] * 12
    expected_total = sum(Decimal(f"{10 + n}.{n % 100:02d}") for n in range(12))
    assert summary.report.amount_valid == expected_total


def test_apply_creates_one_payment_request_per_row_and_a_rerun_is_recognised(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "july.csv", import_biller, 23)

    summary = import_payment_requests(
        file=file, biller=import_biller.block, dry_run=False, chunk_size=10
    )

    assert summary.status == "imported", summary.message
    assert import_exit_code(summary) == 0
    assert len(summary.chunks) == 3
    requests = import_biller.payment_requests()
    assert len(requests) == 23
    assert {r["reference"] for r in requests} == {f"R-{n:05d}" for n in range(23)}
    report = _read_report(summary.report.report_csv)  # type: ignore[union-attr]
    assert {row["outcome"] for row in report} == {"CREATED"}
    assert all(row["payment_request_id"] for row in report)

    again = import_payment_requests(file=file, biller=import_biller.block, dry_run=False)

    assert again.status == "already_imported"
    assert "already imported on" in again.message and summary.run_id in again.message
    assert import_biller.jobs_submitted() == 3


def test_a_file_with_bad_rows_is_rejected_whole_by_default(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = _bad_file(tmp_path / "bad.csv", import_biller)

    summary = import_payment_requests(file=file, biller=import_biller.block, dry_run=False)

    assert summary.status == "rejected"
    assert import_exit_code(summary) == 3
    assert import_biller.jobs_submitted() == 0
    failed = _read_report(summary.report.failed_csv)  # type: ignore[union-attr, arg-type]
    assert [row["Reference"] for row in failed] == ["BAD-1", "BAD-2"]
    assert "customer" in failed[0]["reason"].lower()
    assert "amount" in failed[1]["reason"].lower()


def test_skip_imports_the_good_rows_and_reports_the_bad_ones(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = _bad_file(tmp_path / "mixed.csv", import_biller)

    summary = import_payment_requests(
        file=file, biller=import_biller.block, dry_run=False, on_bad_rows="skip"
    )

    assert summary.status == "partial"
    assert import_exit_code(summary) == 3
    assert len(import_biller.payment_requests()) == 6
    outcomes = [row["outcome"] for row in _read_report(summary.report.report_csv)]  # type: ignore[union-attr]
    assert outcomes.count("CREATED") == 6 and outcomes.count("REJECTED") == 2


def test_full_sync_needs_an_approval_from_the_cli(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "sync.csv", import_biller, 4)

    with pytest.raises(ApprovalRequired, match="--approve-as NAME --reason TEXT"):
        import_payment_requests(
            file=file, biller=import_biller.block, dry_run=False, delete_missing=True
        )
    assert import_biller.jobs_submitted() == 0

    with approved_from_cli("Dana Finance", "July re-sync"):  # what --approve-as does
        summary = import_payment_requests(
            file=file, biller=import_biller.block, dry_run=False, delete_missing=True
        )
    assert summary.status == "imported"
    assert len(summary.chunks) == 1  # a full sync is never chunked


def test_poll_import_jobs_with_nothing_open_is_a_quiet_success(
    import_biller: ImportBiller, ledger_home: Path
) -> None:
    assert poll_import_jobs(biller=import_biller.block) == []


def test_a_refusal_before_anything_is_applied_leaves_the_chunk_sendable(
    import_biller: ImportBiller, admin: SandboxAdmin, ledger_home: Path, tmp_path: Path
) -> None:
    """A read-only login is refused (403) on the upload: nothing was applied, so the ledger puts
    the chunk back to `intended` and the run fails saying why; a proper login then sends it."""
    app = admin.create_app()
    code = admin.authorization_code(app, import_biller.biller_id, read_only=True)
    tokens = admin.token(app, grant_type="authorization_code", code=code).json()
    read_only = f"read-only-{uuid.uuid4().hex[:8]}"
    BillerCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=app.client_id,
        client_secret=app.client_secret,
        refresh_token=tokens["refresh_token"],
    ).save(read_only)
    file = write_rows(tmp_path / "ro.csv", import_biller, 3)

    with pytest.raises(Forbidden):
        import_payment_requests(file=file, biller=read_only, dry_run=False)

    ledger = open_ledger()
    try:
        (op,) = ledger.operations(biller=import_biller.biller_id)
        assert op.state is OperationState.INTENDED and "not applied" in (op.error or "")
    finally:
        ledger.close()
    summary = import_payment_requests(file=file, biller=import_biller.block, dry_run=False)
    assert summary.status == "imported"
    assert len(import_biller.payment_requests()) == 3
