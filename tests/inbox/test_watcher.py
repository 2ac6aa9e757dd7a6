"""The inbox with real files and real processes: ``billops inbox watch`` (and ``scan``) against
the sandbox, a Prefect API and a ledger, as a finance team would use them.

The twenty files at once and two watchers on eight files run in ``make soak``; the default suite
has their short versions (four files of every outcome; two watchers on four files)."""

from __future__ import annotations

import os
import shutil
import subprocess
import time
from datetime import date
from pathlib import Path

import pytest

from flows.inbox import inbox_scan
from ledger import Ledger
from ledger.settings import BillopsSettings
from tasks.inbox.ledger_files import sha256_of
from tasks.inbox.status import inbox_status
from tests.inbox.conftest import ROOT, WatcherProcess, billops, child_env
from tests.inbox.files import (
    bank_statement,
    garbage,
    payment_requests,
    slowly,
    via_temporary_name,
)
from tests.support.import_billers import ImportBiller


def reports(folder: Path) -> dict[str, str]:
    """File name -> its inbox report, for every file put away in ``folder`` (recursively)."""
    if not folder.is_dir():
        return {}
    return {p.name.removesuffix(".inbox.txt"): p.read_text() for p in folder.rglob("*.inbox.txt")}


def wait_until_put_away(folder: Path, count: int, timeout: float = 420) -> None:
    deadline = time.monotonic() + timeout
    while True:
        done = len(reports(folder / "processed")) + len(reports(folder / "failed"))
        if done >= count:
            return
        assert time.monotonic() < deadline, f"{done} of {count} files put away"
        time.sleep(1)


def outcome(report: str) -> str:
    return (
        next(line for line in report.splitlines() if line.startswith("outcome:"))
        .split(":")[1]
        .strip()
    )


@pytest.mark.slow
@pytest.mark.timeout(900)
def test_twenty_files_dropped_at_once_are_each_processed_once(
    biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "inbox"
    folder = root / "acme"
    (folder).mkdir(parents=True)
    (folder / "inbox.yaml").write_text(f"block: {biller.block}\non_bad_rows: reject_file\n")
    (folder / "~$lists.xlsx").write_bytes(b"excel lock")
    (folder / ".DS_Store").write_bytes(b"finder")
    watcher = WatcherProcess(root, home, tmp_path / "watcher.log")
    try:
        prs = folder / "payment-requests"
        kept = [payment_requests(prs / f"june-{n}.csv", biller, f"J{n}") for n in range(6)]
        kept += [payment_requests(folder / f"top-{n}.csv", biller, f"T{n}") for n in range(3)]
        shutil.copy(kept[0], folder / "june-0 copy.csv")  # duplicates, by content
        shutil.copy(kept[6], prs / "top-0 again.csv")
        banks = [bank_statement(folder / "bank" / f"statement-{n}.csv", n) for n in range(2)]
        banks += [bank_statement(folder / f"barclays-{n}.csv", n + 2) for n in range(2)]
        shutil.copy(banks[0], folder / "bank" / "statement-0 (1).csv")
        garbage(folder / "scan.pdf")
        bad = payment_requests(tmp_path / "bad.csv", biller, "B")
        with bad.open("a", encoding="utf-8") as out:
            out.write("Nobody We Know,12.00,Row x,B-99999,01/01/2099\r\n")
        shutil.move(bad, prs / "bad-rows.csv")
        slow = payment_requests(tmp_path / "slow.csv", biller, "S", rows=40).read_bytes()
        part = payment_requests(tmp_path / "part.csv", biller, "P").read_bytes()
        writers = [slowly(prs / "slow.csv", slow), via_temporary_name(folder / "part.csv", part)]
        for writer in writers:
            writer.join()
        wait_until_put_away(folder, 20)
        time.sleep(2)  # anything taken twice would show by now
    finally:
        code = watcher.terminate()
    log = watcher.log.read_text()
    assert code == 0, log
    assert "inbox watcher stopped after" in log

    processed, failed = reports(folder / "processed"), reports(folder / "failed")
    assert sorted(failed) == ["bad-rows.csv", "scan.pdf"], log
    assert outcome(failed["scan.pdf"]) == "not recognised"
    assert "no job recognises" in failed["scan.pdf"]
    assert outcome(failed["bad-rows.csv"]) == "rejected"
    assert (folder / "failed" / "bad-rows.failed.csv").is_file()
    # Of each pair of copies (whichever was taken first), one was processed, one reported.
    pairs = [
        ("june-0.csv", "june-0 copy.csv"),
        ("top-0.csv", "top-0 again.csv"),
        ("statement-0.csv", "statement-0 (1).csv"),
    ]
    for pair in pairs:
        assert sorted(outcome(processed[name]) == "duplicate" for name in pair) == [False, True]
        [copy] = [name for name in pair if outcome(processed[name]) == "duplicate"]
        assert "was not processed again" in processed[copy]
    duplicates = [name for name, text in processed.items() if outcome(text) == "duplicate"]
    assert len(processed) == 18 and len(duplicates) == 3
    day = folder / "processed" / date.today().isoformat()
    for name in ("june-3.csv", "top-1.csv", "slow.csv", "part.csv"):
        assert outcome(processed[name]) != "duplicate", processed[name]
        assert (day / name).is_file() and (day / name.replace(".csv", ".report.csv")).is_file()
    assert "recognised as payment-requests from its content" in processed["top-1.csv"]
    for name in ("statement-1.csv", "barclays-0.csv"):  # nothing in them is owed to the biller
        assert outcome(processed[name]) == "nothing to record", processed[name]
    assert (day / "barclays-0.report.csv").is_file() and (day / "barclays-0.review.csv").is_file()
    # Nothing left behind but what is never taken; the half-written files were taken whole.
    left = sorted(p.name for p in folder.iterdir() if p.is_file())
    assert left == [".DS_Store", "inbox.yaml", "~$lists.xlsx"]
    assert (day / "slow.csv").read_bytes() == slow and (day / "part.csv").read_bytes() == part
    # Exactly once at the service: 11 distinct files of 2 rows, and the 40-row slow file.
    created = biller.payment_requests()
    references = sorted(str(pr.get("reference")) for pr in created)
    assert len(created) == 10 * 2 + 40 == len(set(references))
    with Ledger(BillopsSettings().ledger_database_url) as ledger:
        for pair, kind in ((pairs[0], "inbox-payment-requests"), (pairs[2], "inbox-bank")):
            record = ledger.file_seen(sha256_of(day / pair[0]), biller=biller.block, kind=kind)
            assert record is not None and record.state == "imported"
            assert record.name in pair and "was not processed again" not in processed[record.name]


def test_four_files_dropped_at_once_are_each_processed_once(
    biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    """The short version of the twenty files: one written slowly, a copy of it dropped at the top
    level (detected, then reported as a duplicate), a bank statement, an unreadable file."""
    root = tmp_path / "inbox"
    folder = root / "acme"
    (folder / "payment-requests").mkdir(parents=True)
    (folder / "inbox.yaml").write_text(f"block: {biller.block}\n")
    (folder / "~$lists.xlsx").write_bytes(b"excel lock")
    watcher = WatcherProcess(root, home, tmp_path / "watcher.log")
    try:
        content = payment_requests(tmp_path / "june.csv", biller, "Q").read_bytes()
        writer = slowly(folder / "payment-requests" / "june.csv", content)
        (folder / "june copy.csv").write_bytes(content)
        bank_statement(folder / "bank" / "statement.csv", 0)
        garbage(folder / "scan.pdf")
        writer.join()
        wait_until_put_away(folder, 4)
        time.sleep(2)  # anything taken twice would show by now
    finally:
        code = watcher.terminate()
    log = watcher.log.read_text()
    assert code == 0, log

    processed, failed = reports(folder / "processed"), reports(folder / "failed")
    assert list(failed) == ["scan.pdf"] and outcome(failed["scan.pdf"]) == "not recognised"
    assert sorted(processed) == ["june copy.csv", "june.csv", "statement.csv"], log
    pair = ("june.csv", "june copy.csv")
    assert sorted(outcome(processed[name]) == "duplicate" for name in pair) == [False, True]
    assert outcome(processed["statement.csv"]) == "nothing to record"
    day = folder / "processed" / date.today().isoformat()
    assert (day / "june.csv").read_bytes() == content  # the slowly written file, taken whole
    left = sorted(p.name for p in folder.iterdir() if p.is_file())
    assert left == ["inbox.yaml", "~$lists.xlsx"]
    created = biller.payment_requests()
    assert sorted(str(pr.get("reference")) for pr in created) == ["Q-00000", "Q-00001"]


@pytest.mark.timeout(900)
@pytest.mark.parametrize("files", [4, pytest.param(8, marks=pytest.mark.slow)])
def test_two_watchers_on_one_folder_never_take_one_file_twice(
    files: int, biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "inbox"
    folder = root / biller.block / "payment-requests"
    folder.mkdir(parents=True)
    first = WatcherProcess(root, home, tmp_path / "first.log", ready=False)
    second = WatcherProcess(root, home, tmp_path / "second.log", ready=False)
    try:
        first.wait_ready()
        second.wait_ready()
        for n in range(files):
            payment_requests(folder / f"list-{n}.csv", biller, f"W{n}")
        wait_until_put_away(root / biller.block, files)
        time.sleep(2)
    finally:
        codes = first.terminate(), second.terminate()
    assert codes == (0, 0)
    processed = reports(root / biller.block / "processed")
    assert sorted(processed) == [f"list-{n}.csv" for n in range(files)]
    assert all(outcome(text) != "duplicate" for text in processed.values())
    assert reports(root / biller.block / "failed") == {}
    assert len(biller.payment_requests()) == files * 2
    # Both took files (each stops saying how many it processed); together, each file once.
    counts = [
        int(log.read_text().rsplit("stopped after ", 1)[1].split(" ")[0])
        for log in (first.log, second.log)
    ]
    assert sum(counts) == files, counts


@pytest.mark.parametrize("through_cli", [False, pytest.param(True, marks=pytest.mark.slow)])
def test_a_watcher_killed_mid_file_is_resumed_by_the_next_scan(
    through_cli: bool, biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    """The default suite resumes with the scan flow in this process; ``make soak`` through
    ``billops inbox status`` and ``billops inbox scan`` as processes of their own."""
    root = tmp_path / "inbox"
    folder = root / biller.block / "payment-requests"
    folder.mkdir(parents=True)
    # The watcher SIGKILLs itself once the bulk import has reached the service, before the
    # ledger knows its job: the worst moment.
    watcher = WatcherProcess(
        root,
        home,
        tmp_path / "watcher.log",
        BILLOPS_CRASH_AT="after_send",
        BILLOPS_CRASH_MODE="kill",
    )
    payment_requests(folder / "killed.csv", biller, "K", rows=3)
    watcher.process.wait(180)
    watcher.kill()
    assert watcher.process.returncode == -9, watcher.log.read_text()
    left = list((root / biller.block / "processing").rglob("killed.csv"))
    assert len(left) == 1

    if through_cli:
        status = subprocess.run(
            billops("inbox", "status", "--root", str(root)),
            env=child_env(home),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=120,
        )
        assert status.returncode == 0 and " 1 " in status.stdout.splitlines()[1], status.stdout
        scan = subprocess.run(
            billops("inbox", "scan", "--root", str(root)),
            env=child_env(home),
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=300,
        )
        assert scan.returncode == 0, scan.stdout + scan.stderr
        assert "1 file(s) taken" in scan.stdout
    else:
        [folder_status] = inbox_status(root)
        assert folder_status.orphaned == ["processing/payment-requests/killed.csv"], folder_status
        scanned = inbox_scan(root=root, return_state=True)
        assert "1 file(s) taken" in str(scanned.message)
    processed = reports(root / biller.block / "processed")
    assert list(processed) == ["killed.csv"] and outcome(processed["killed.csv"]) != "duplicate"
    created = biller.payment_requests()
    assert sorted(str(pr.get("reference")) for pr in created) == ["K-00000", "K-00001", "K-00002"]
    # One write in the ledger, settled: the resumed run finished the same operation (a resend
    # of a write whose answer was lost updates, by the rows' external ids, rather than adds).
    with Ledger(BillopsSettings().ledger_database_url) as ledger:
        operations = ledger.operations(biller=biller.biller_id)
    assert [op.state.value for op in operations] == ["confirmed"]
    assert not any(os.scandir(root / biller.block / "processing" / "payment-requests"))
