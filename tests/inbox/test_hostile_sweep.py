"""The hostile-input sweep: every bad input the jobs' own tests refuse (``tests/inbox/hostile.py``)
dropped into one biller's inbox at once, beside good files of every kind. Every file ends in
``processed/`` or ``failed/`` with a report naming the file, its kind and what is wrong; nothing
of a refused file reaches the service (the sandbox's own records) or the ledger (no row of any
table but the inbox's own file records and audit carries a refused file's hash); and the inbox
still takes a good file dropped afterwards.

The default suite sweeps a few cases of every job through ``inbox-scan`` in process; ``make soak``
sweeps all of them through a ``billops inbox watch`` process, which must still be running.
"""

from __future__ import annotations

import hashlib
import os
import time
from pathlib import Path

import pytest

from flows.inbox import inbox_scan
from ledger import Ledger, OperationState
from ledger.settings import BillopsSettings
from tests.inbox.conftest import WatcherProcess
from tests.inbox.files import bank_statement, payment_requests
from tests.inbox.hostile import Hostile, bank_files, payment_request_files, payout_files
from tests.inbox.test_watcher import reports, wait_until_put_away
from tests.payouts.test_report_files import write as write_payouts
from tests.support.import_billers import ImportBiller
from tests.support.secret_scan import database_texts

GOOD_ROWS = 3
# Tables where a refused file is rightly named: the inbox's record of the file and the audit.
FILE_RECORDS = ("ledger_files", "ledger_audit")


def _drop_everything(folder: Path, biller: ImportBiller, *, few: int | None) -> list[Hostile]:
    """The hostile files (``few`` of each job, or all) and three good files, all complete."""
    hostile: list[Hostile] = []
    for made in (bank_files(folder), payout_files(folder), payment_request_files(folder, biller)):
        for extra in made[few:] if few is not None else []:
            extra.path.unlink()
        hostile += made[:few] if few is not None else made
    payment_requests(folder / "payment-requests" / "good-requests.csv", biller, "G", GOOD_ROWS)
    bank_statement(folder / "bank" / "good-statement.csv", 3)
    write_payouts(folder / "payouts", [], name="good-payouts.csv")  # a period without payouts
    old = time.time() - 60
    for path in folder.rglob("*.csv"):
        os.utime(path, (old, old))
    return hostile


def _check_sweep(
    folder: Path, biller: ImportBiller, hostile: list[Hostile], hashes: dict[str, str]
) -> None:
    failed, processed = reports(folder / "failed"), reports(folder / "processed")
    for case in hostile:
        name = case.path.name
        assert name in failed, f"{name} not refused: {sorted(processed)}"
        said = failed[name]
        beside = [
            p.read_text(errors="replace")
            for p in (folder / "failed").rglob(f"{case.path.stem}*")
            if p.is_file() and p.name != name
        ]
        assert name in said and f"kind:     {case.job}" in said, said
        assert all(any(w in text for text in beside) for w in case.words), (name, beside)
        assert (folder / "failed" / name).is_file() or list((folder / "failed").rglob(name))
    assert set(processed) >= {"good-requests.csv", "good-statement.csv", "good-payouts.csv"}, (
        sorted(failed),
        sorted(processed),
    )
    assert not [p for p in (folder / "processing").rglob("*") if p.is_file()]
    assert not [p for p in folder.iterdir() if p.is_file() and p.suffix == ".csv"]
    for kind in ("bank", "payouts", "payment-requests"):
        assert not list((folder / kind).glob("*")), kind

    # The service holds the good file's payment requests only.
    references = sorted(str(r.get("reference")) for r in biller.payment_requests())
    assert references == [f"G-{n:05d}" for n in range(GOOD_ROWS)], references
    # The ledger holds nothing of a refused file but its record.
    texts = database_texts(BillopsSettings().ledger_database_url, label="ledger")
    carrying = [
        (table, case)
        for table, text in texts
        if table.removeprefix("ledger: ") not in FILE_RECORDS
        for case, digest in hashes.items()
        if digest in text
    ]
    assert carrying == []
    with Ledger(BillopsSettings().ledger_database_url) as ledger:
        operations = ledger.operations(biller=biller.biller_id)
    assert operations and {op.state for op in operations} == {OperationState.CONFIRMED}


def _hashes(hostile: list[Hostile]) -> dict[str, str]:
    return {case.path.name: hashlib.sha256(case.path.read_bytes()).hexdigest() for case in hostile}


def test_a_few_hostile_files_of_every_job_at_once_are_refused_and_the_scan_goes_on(
    biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "inbox"
    folder = root / biller.block
    hostile = _drop_everything(folder, biller, few=2)
    hashes = _hashes(hostile)

    state = inbox_scan(root=root, settle_seconds=0, return_state=True)

    assert state.name == "Scanned" and f"{len(hostile) + 3} file(s) taken" in str(state.message)
    _check_sweep(folder, biller, hostile, hashes)
    payment_requests(folder / "payment-requests" / "after.csv", biller, "A", 1)
    inbox_scan(root=root, settle_seconds=0)
    assert "after.csv" in reports(folder / "processed")


@pytest.mark.slow
@pytest.mark.timeout(1800)
def test_every_hostile_file_of_every_job_through_the_watcher_which_stays_up(
    biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "inbox"
    folder = root / biller.block
    hostile = _drop_everything(folder, biller, few=None)
    hashes = _hashes(hostile)
    watcher = WatcherProcess(root, home, tmp_path / "watcher.log")
    try:
        wait_until_put_away(folder, len(hostile) + 3, timeout=1500)
        _check_sweep(folder, biller, hostile, hashes)
        payment_requests(folder / "payment-requests" / "after.csv", biller, "A", 1)
        wait_until_put_away(folder, len(hostile) + 4, timeout=300)
        assert "after.csv" in reports(folder / "processed")
        assert watcher.process.poll() is None, watcher.log.read_text()[-2000:]
    finally:
        assert watcher.terminate() == 0
