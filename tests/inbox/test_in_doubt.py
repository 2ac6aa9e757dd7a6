"""A bank run that left payments in doubt (``Pending``) is not done with its statement: the file
stays in ``processing/`` with its record open for the night's retry or the next scan, which
resumes the payments and asks the service about them. Put away in ``processed/`` (as it was
before), nothing ever asked again and the payment was lost: found by the platform night's chaos
soak (``tests/flows/test_nightly_chaos.py``), a biller with its night "ok", its statement
processed, its payment never recorded and the ledger operation left unknown."""

from __future__ import annotations

from pathlib import Path

import pytest
from prefect import flow
from prefect.client.schemas.objects import State

from ledger import FileState, Ledger
from tasks.common.outcome import COMPLETED, PENDING, Outcome, end_run
from tasks.inbox.claim import claim, resume
from tasks.inbox.layout import FileKind, Waiting, processing_files
from tasks.inbox.process import (
    JobResult,
    WritesInDoubt,
    process_claimed,
    raise_if_in_doubt,
)
from tasks.inbox.settings import InboxSettings
from tests.support.ledger_db import clock, ledger, ledger_url  # noqa: F401 - fixtures

KIND = FileKind.BANK


@flow
def _bank_run(name: str) -> State:
    return end_run(Outcome(name, "1 of 1 payments recorded; 1 in doubt", attention=True))


def test_a_bank_run_ending_pending_is_raised_and_a_finished_one_is_not(prefect: None) -> None:
    with pytest.raises(WritesInDoubt, match="in doubt"):
        raise_if_in_doubt(_bank_run(PENDING, return_state=True))
    raise_if_in_doubt(_bank_run(COMPLETED, return_state=True))


def _in_doubt(path: Path, block: str, settings: InboxSettings) -> JobResult:
    raise WritesInDoubt("1 of 2 payments recorded; 1 in doubt: the next run resumes them")


def _resumed(path: Path, block: str, settings: InboxSettings) -> JobResult:
    return JobResult("completed", False, "2 of 2 payments recorded")


def test_a_statement_with_payments_in_doubt_stays_in_processing_until_a_pass_settles_them(
    tmp_path: Path,
    ledger: Ledger,  # noqa: F811 - fixture
) -> None:
    root = tmp_path / "inbox"
    path = root / "acme" / "bank" / "statement.csv"
    path.parent.mkdir(parents=True)
    path.write_text("Date,Type,Counterparty,Reference,Amount,Balance\n")
    claimed = claim(Waiting("acme", path, KIND), root)
    assert claimed is not None

    with pytest.raises(WritesInDoubt):
        try:
            process_claimed(claimed, ledger, detectors={}, runners={KIND: _in_doubt}, run_id=None)
        finally:
            claimed.release()

    assert not (root / "acme" / "processed").exists()
    [left] = processing_files(root, "acme")
    [record] = ledger.files(biller="acme")
    assert record.state == FileState.IMPORTING
    again = resume(left)
    assert again is not None
    outcome = process_claimed(again, ledger, detectors={}, runners={KIND: _resumed}, run_id=None)
    again.release()
    assert outcome is not None and not outcome.failed
    assert [f.name for f in (root / "acme" / "processed").rglob("statement.csv")] == [
        "statement.csv"
    ]
