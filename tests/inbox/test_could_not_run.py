"""A job that could not run at all (credential, its store or the service unavailable) leaves the
file waiting, not failed: nothing is wrong with the file, and the next pass processes it."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import flow

from billing_api import ReauthorizationRequired, ServerError
from ledger import FileState, Ledger
from tasks.inbox.claim import claim, resume
from tasks.inbox.layout import FileKind, Waiting, processing_files
from tasks.inbox.process import JobResult, process_claimed, raise_if_could_not_run
from tasks.inbox.settings import InboxSettings
from tests.support.ledger_db import clock, ledger, ledger_url  # noqa: F401 - fixtures

KIND = FileKind.PAYMENT_REQUESTS


def _drop(root: Path) -> Path:
    path = root / "acme" / "payment-requests" / "june.csv"
    path.parent.mkdir(parents=True)
    path.write_text("Customer,Amount\nA,1.00\n")
    return path


def _locked_out(path: Path, block: str, settings: InboxSettings) -> JobResult:
    raise ReauthorizationRequired("the refresh of acme failed", command="billops auth login")


def _works(path: Path, block: str, settings: InboxSettings) -> JobResult:
    return JobResult("imported", False, "CREATED 1")


def _broken_file(path: Path, block: str, settings: InboxSettings) -> JobResult:
    raise ValueError("row 2: no such customer")


def test_a_locked_out_job_leaves_the_file_waiting_and_the_next_pass_takes_it(
    tmp_path: Path,
    ledger: Ledger,  # noqa: F811 - fixture
) -> None:
    root = tmp_path / "inbox"
    _drop(root)
    claimed = claim(Waiting("acme", root / "acme/payment-requests/june.csv", KIND), root)
    assert claimed is not None

    with pytest.raises(ReauthorizationRequired):
        try:
            process_claimed(claimed, ledger, detectors={}, runners={KIND: _locked_out}, run_id=None)
        finally:
            claimed.release()

    assert not (root / "acme" / "failed").exists()  # not the file's fault: not failed
    [left] = processing_files(root, "acme")
    [record] = ledger.files(biller="acme")
    assert record.state == FileState.IMPORTING  # the record stays open for the next pass

    again = resume(left)
    assert again is not None
    outcome = process_claimed(again, ledger, detectors={}, runners={KIND: _works}, run_id=None)
    again.release()
    assert outcome is not None and outcome.status == "imported" and not outcome.failed
    assert [f.name for f in (root / "acme" / "processed").rglob("june.csv")] == ["june.csv"]


def test_a_jobs_own_error_still_fails_the_file(
    tmp_path: Path,
    ledger: Ledger,  # noqa: F811 - fixture
) -> None:
    root = tmp_path / "inbox"
    _drop(root)
    claimed = claim(Waiting("acme", root / "acme/payment-requests/june.csv", KIND), root)
    assert claimed is not None
    outcome = process_claimed(
        claimed, ledger, detectors={}, runners={KIND: _broken_file}, run_id=None
    )
    claimed.release()
    assert outcome is not None and outcome.failed and "no such customer" in outcome.message
    assert list((root / "acme" / "failed").glob("june.csv"))


@flow
def _service_down() -> None:
    raise ServerError("HTTP 503 after 4 attempts", status_code=503)


@flow
def _bad_input() -> None:
    raise ValueError("row 2: no such customer")


def test_a_failed_job_state_is_raised_only_when_the_job_could_not_run(prefect: None) -> None:
    with pytest.raises(ServerError):
        raise_if_could_not_run(_service_down(return_state=True))
    raise_if_could_not_run(_bad_input(return_state=True))  # the file's outcome, not raised
