"""The import's answers are the service's answers in this run, and every write is the one meant:
undo then import again, a full sync after a plain import, resends, a small import after a large
one, a file replaced or reshaped during a run, and the report a later run brings up to date."""

from __future__ import annotations

import csv
import random
from collections.abc import Iterator
from datetime import datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from billops.cli import app
from flows.payment_requests import import_payment_requests, poll_import_jobs
from ledger import OperationState
from tasks.common.progress import add_listener
from tasks.payment_requests.jobs import LIST_PAGE_SIZE
from tasks.payment_requests.known import OVERLAP
from tasks.payment_requests.summary import ImportStatus
from tests.support.import_billers import ImportBiller, make_biller, write_rows
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox

runner = CliRunner()


def _report(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def _cli(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def _list_calls(biller: ImportBiller) -> int:
    requests = biller.admin.biller_stats(biller.biller_id).get("requests", {})
    return int(requests.get("payment_requests.list", 0))


def test_undo_then_a_forced_import_imports_again(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    """The undone payment requests are VOID and the service edits no VOID request, so the forced
    import creates new ones (new derived ids) and says so with their new ids."""
    file = write_rows(tmp_path / "june.csv", import_biller, 3)
    block = import_biller.block
    code, out = _cli("run", "import-payment-requests", str(file), "--biller", block, "--apply")
    assert code == 0, out
    first = {r["Reference"]: r["payment_request_id"] for r in _report(tmp_path / "june.report.csv")}
    run_id = out.split("run: ")[1].split()[0]
    code, out = _cli(
        "undo-import", run_id, "--biller", block, "--apply", "--approve-as", "Dana", "--reason", "x"
    )
    assert code == 0, out

    code, out = _cli(
        "run", "import-payment-requests", str(file), "--biller", block, "--apply", "--force"
    )

    assert code == 0, out
    report = _report(tmp_path / "june.report.csv")
    assert [r["outcome"] for r in report] == ["CREATED"] * 3
    again = {r["Reference"]: r["payment_request_id"] for r in report}
    assert set(again.values()).isdisjoint(first.values())  # new payment requests, new ids
    held = {r["id"]: r["status"] for r in import_biller.payment_requests()}
    assert {held[i] for i in first.values()} == {"VOID"}
    assert {held[i] for i in again.values()} == {"DRAFT"}
    assert import_biller.jobs_submitted() == 2


def test_a_full_sync_after_a_plain_import_is_sent_and_lists_what_it_deletes(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    """The full sync's first chunk has the bytes of the plain import's first chunk: it is still
    another request (delete_missing is part of its key), so it is sent and deletes."""
    plain = write_rows(tmp_path / "all.csv", import_biller, 4)
    block = import_biller.block
    code, out = _cli(
        "run", "import-payment-requests", str(plain), "--biller", block, "--apply",
        "--chunk-size", "3",
    )  # fmt: skip
    assert code == 0, out
    gone = _report(tmp_path / "all.report.csv")[3]
    sync = write_rows(tmp_path / "sync.csv", import_biller, 3)

    code, out = _cli(
        "run", "import-payment-requests", str(sync), "--biller", block, "--delete-missing"
    )
    assert code == 0, out
    dry = _report(tmp_path / "sync.dry-run.report.csv")  # kept beside the applied run's
    would = [r for r in dry if r["outcome"] == "WOULD_DELETE"]
    assert [r["payment_request_id"] for r in would] == [gone["payment_request_id"]]
    assert gone["Amount"].replace(",", "") in would[0]["outcome_notes"]
    assert "WOULD_DELETE" in out

    code, out = _cli(
        "run", "import-payment-requests", str(sync), "--biller", block, "--apply",
        "--delete-missing", "--approve-as", "Dana", "--reason", "July re-sync",
    )  # fmt: skip

    assert code == 0, out
    assert import_biller.jobs_submitted() == 3  # two plain chunks, then the full sync
    ids = {r["id"] for r in import_biller.payment_requests()}
    assert gone["payment_request_id"] not in ids and len(ids) == 3
    report = _report(tmp_path / "sync.report.csv")
    deleted = [r for r in report if r["outcome"] == "DELETED"]
    assert [r["payment_request_id"] for r in deleted] == [gone["payment_request_id"]]
    assert "DELETED" in out


def _seed_for(draws: list[bool], rate: float) -> int:
    """A fault-plan seed whose first draws fall below ``rate`` exactly where ``draws`` says."""
    for seed in range(10_000):
        rng = random.Random(seed)
        if [rng.random() < rate for _ in draws] == draws:
            return seed
    raise AssertionError("no seed found")


@pytest.fixture
def dropping_sandbox(tmp_path: Path) -> Iterator[SandboxAdmin]:
    with running_sandbox(f"sqlite:///{tmp_path / 'sandbox.db'}") as admin:
        yield admin


def _drop_uploads(admin: SandboxAdmin, *, rate: float, seed: int) -> None:
    rule = {"pathPrefix": "/api/payment_requests/bulk_import", "method": "POST"}
    answer = admin.http.post(
        "/_sandbox/faults", json={"seed": seed, "rules": [{**rule, "dropAfterCommit": rate}]}
    )
    assert answer.status_code == 200, answer.text


def test_a_chunk_is_sent_at_most_three_times_in_one_run(
    prefect: None, dropping_sandbox: SandboxAdmin, ledger_home: Path, tmp_path: Path
) -> None:
    biller = make_biller(dropping_sandbox)
    _drop_uploads(dropping_sandbox, rate=1.0, seed=1)  # every answer lost
    file = write_rows(tmp_path / "lost.csv", biller, 2)

    summary = import_payment_requests(file=file, biller=biller.block, dry_run=False)

    assert biller.jobs_submitted() == 3  # first send and two resends, never a fourth
    assert summary.status is ImportStatus.PENDING
    biller.api.close()


def test_rows_a_lost_first_send_created_are_reported_created_and_the_resend_counted(
    prefect: None, dropping_sandbox: SandboxAdmin, ledger_home: Path, tmp_path: Path
) -> None:
    biller = make_biller(dropping_sandbox)
    _drop_uploads(dropping_sandbox, rate=0.5, seed=_seed_for([True, False], 0.5))
    file = write_rows(tmp_path / "once.csv", biller, 3)

    summary = import_payment_requests(file=file, biller=biller.block, dry_run=False)

    assert biller.jobs_submitted() == 2  # the lost one, and the resend
    assert summary.status is ImportStatus.IMPORTED, summary.message
    assert summary.report is not None and summary.report.resent == 1
    assert summary.report.by_status == {"CREATED": 3}
    assert "repeated after a lost answer" in summary.message
    report = _report(tmp_path / "once.report.csv")
    assert {r["outcome"] for r in report} == {"CREATED"}
    assert all("created by this run" in r["outcome_notes"] for r in report)
    assert len(biller.payment_requests()) == 3
    biller.api.close()


def test_a_small_import_after_a_large_one_makes_a_bounded_number_of_list_calls(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    large = write_rows(tmp_path / "large.csv", import_biller, 2_000, prefix="L")
    summary = import_payment_requests(
        file=large, biller=import_biller.block, dry_run=False, chunk_size=500
    )
    assert summary.status is ImportStatus.IMPORTED, summary.message
    # The sync re-lists what changed within OVERLAP of the newest change it saw (a write
    # committed a moment late is not missed), so how many rows that is depends on how fast the
    # sandbox applied the last chunks; count them rather than guess.
    stamps = [
        datetime.fromisoformat(str(row["lastUpdatedTime"]))
        for row in import_biller.payment_requests()
    ]
    in_overlap = sum(1 for stamp in stamps if stamp >= max(stamps) - OVERLAP)
    small = write_rows(tmp_path / "small.csv", import_biller, 1, prefix="S")
    before = _list_calls(import_biller)

    summary = import_payment_requests(file=small, biller=import_biller.block, dry_run=False)

    assert summary.status is ImportStatus.IMPORTED, summary.message
    calls = _list_calls(import_biller) - before
    # The ledger's sync before the import and the one after it each list the overlap and the
    # new row (a page more for the end), and the report looks up what changed since the run's
    # job was created (one page): never the 2,000 rows of history again.
    bound = 2 * ((in_overlap + 1) // LIST_PAGE_SIZE + 1) + 1
    assert in_overlap < 2_000, "the whole history fell within the overlap; the test proves nothing"
    assert calls <= bound, (calls, in_overlap)


def test_a_file_replaced_during_the_run_does_not_move_outcomes(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    """The report is built from the rows the run read: replacing the file mid-run (blank lines
    added, rows changed) neither shifts ids onto other rows nor reports rows never sent."""
    file = write_rows(tmp_path / "moving.csv", import_biller, 12)
    original = file.read_text(encoding="utf-8")

    def replace_the_file(label: str, done: int, total: int) -> None:
        if done == 1:
            lines = original.splitlines()
            file.write_text("\n\n".join(lines[:1] + ["Nobody,1,x,X-1,"] + lines[1:]) + "\n")

    remove = add_listener(replace_the_file)
    try:
        summary = import_payment_requests(
            file=file, biller=import_biller.block, dry_run=False, chunk_size=4
        )
    finally:
        remove()

    assert summary.status is ImportStatus.IMPORTED, summary.message
    report = _report(tmp_path / "moving.report.csv")
    held = {r["id"]: r["reference"] for r in import_biller.payment_requests()}
    assert [r["Reference"] for r in report] == [f"R-{n:05d}" for n in range(12)]
    assert [r["line"] for r in report] == [str(n) for n in range(2, 14)]
    assert all(held[r["payment_request_id"]] == r["Reference"] for r in report)


def test_poll_import_jobs_fills_in_the_report_of_the_file_it_settles(
    prefect: None, dropping_sandbox: SandboxAdmin, ledger_home: Path, tmp_path: Path
) -> None:
    """An import whose every answer was lost leaves its rows PENDING in the report; the run that
    later settles the chunk fills those rows in (from the ledger, by line) and records the file
    as imported."""
    biller = make_biller(dropping_sandbox)
    _drop_uploads(dropping_sandbox, rate=1.0, seed=1)
    file = write_rows(tmp_path / "open.csv", biller, 3)
    summary = import_payment_requests(file=file, biller=biller.block, dry_run=False)
    assert summary.status is ImportStatus.PENDING
    assert {r["outcome"] for r in _report(tmp_path / "open.report.csv")} == {"PENDING"}
    assert dropping_sandbox.http.delete("/_sandbox/faults").status_code in (200, 204)

    settled = poll_import_jobs(biller=biller.block)

    assert [s.state for s in settled] == [OperationState.CONFIRMED]
    report = _report(tmp_path / "open.report.csv")
    assert {r["outcome"] for r in report} == {"CREATED"}  # the lost sends created them
    held = {r["id"]: r["reference"] for r in biller.payment_requests()}
    assert all(held[r["payment_request_id"]] == r["Reference"] for r in report)
    again = import_payment_requests(file=file, biller=biller.block, dry_run=False)
    assert again.status is ImportStatus.ALREADY_IMPORTED
    biller.api.close()
