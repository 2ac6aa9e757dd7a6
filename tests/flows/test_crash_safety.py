"""Crash safety of the import: a crash at each named point, then a rerun, leaves exactly one
payment request per valid row, every ledger operation confirmed, and no chunk sent twice unless
its first outcome was unknown. Crashes are the test-only switch
``BILLOPS_CRASH_AT`` (tasks/common/crash_points.py); ``make soak`` SIGKILLs real processes instead.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest

from flows.payment_requests import import_payment_requests
from ledger import Ledger, OperationState
from tasks.common.crash_points import CRASH_ENV, CRASH_POINTS, SimulatedCrash
from tests.support.faults import clear_faults, fault_counts, plan_faults
from tests.support.import_billers import ImportBiller, make_biller, write_rows
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox

ROWS, CHUNK = 50, 10


def _run(file: Path, biller: ImportBiller) -> object:
    return import_payment_requests(file=file, biller=biller.block, dry_run=False, chunk_size=CHUNK)


def _crash_then_rerun(
    tmp_path: Path,
    biller: ImportBiller,
    point: str,
    monkeypatch: pytest.MonkeyPatch,
    *,
    reruns: int = 1,
) -> tuple[Ledger, int]:
    """Crash at ``point``, then rerun until the import is settled, at most ``reruns`` times.

    Without faults one rerun settles everything. Under injected faults a chunk whose answer is
    lost on each of the sends one run allows is left ``unknown`` for the next run
    (docs/conventions.md §6: at most 3 sends per run), so the run ends ``pending`` and saying so;
    the next run settles it, as the nightly schedule would.
    """
    file = write_rows(tmp_path / f"crash-{point}.csv", biller, ROWS)
    monkeypatch.setenv(CRASH_ENV, point)
    with pytest.raises(BaseException) as crashed:
        _run(file, biller)
    # The switch is consumed when the point is reached: proof the crash happened there.
    assert CRASH_ENV not in os.environ
    assert isinstance(crashed.value, SimulatedCrash) or point in str(crashed.value)
    ledger = _ledger()
    in_doubt = _in_doubt(ledger, biller)
    summary = _run(file, biller)
    for _ in range(reruns - 1):
        if summary.status != "pending":
            break
        assert "still open" in summary.message, summary.message
        summary = _run(file, biller)
    assert summary.status == "imported", summary.message
    return ledger, in_doubt


def _in_doubt(ledger: Ledger, biller: ImportBiller) -> int:
    """Chunks the crash left sent (or being sent) without a job id: their outcome is unknown.

    The crashing chunk at ``after_send``, and any sibling chunk that was mid-request when the
    crash took the process (and its HTTP client) down, exactly as a real crash would.
    """
    return sum(
        1
        for op in ledger.operations(biller=biller.biller_id)
        if op.attempts >= 1 and op.remote_id is None
    )


def _ledger() -> Ledger:
    from tasks.common.session import open_ledger

    return open_ledger()


def _assert_exactly_once(biller: ImportBiller, ledger: Ledger, *, in_doubt: int) -> None:
    """One payment request per row, every operation confirmed, and extra sends (jobs beyond one
    per chunk) no more than the sends whose outcome nobody could know (``in_doubt``)."""
    requests = biller.payment_requests()
    assert len(requests) == ROWS
    assert len({r["externalId"] for r in requests}) == ROWS
    assert ledger.unsettled(biller=biller.biller_id) == []
    ops = ledger.operations(biller=biller.biller_id)
    assert len(ops) == ROWS // CHUNK
    assert {op.state for op in ops} == {OperationState.CONFIRMED}
    # Every job the service holds was a counted attempt (an attempt may also have died unsent).
    assert biller.jobs_submitted() <= sum(op.attempts for op in ops)
    assert biller.jobs_submitted() - len(ops) <= in_doubt


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_crash_then_rerun_imports_every_row_exactly_once(
    point: str,
    import_biller: ImportBiller,
    ledger_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    ledger, in_doubt = _crash_then_rerun(tmp_path, import_biller, point, monkeypatch)
    try:
        _assert_exactly_once(import_biller, ledger, in_doubt=in_doubt)
        if point == "after_send":
            assert in_doubt >= 1  # the crashing chunk itself reached the service
    finally:
        ledger.close()


@pytest.fixture(scope="module")
def faulty_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxAdmin]:
    """A sandbox of its own whose bulk-import path answers 10% 503s and drops 5% after commit."""
    database = tmp_path_factory.mktemp("faulty") / "sandbox.db"
    with running_sandbox(f"sqlite:///{database}") as admin:
        answer = admin.http.post(
            "/_sandbox/faults",
            json={
                "seed": 11,
                "rules": [
                    {
                        "pathPrefix": "/api/payment_requests/bulk_import",
                        "errorRate": 0.10,
                        "errorStatus": 503,
                        "dropAfterCommit": 0.05,
                    }
                ],
            },
        )
        assert answer.status_code == 200, answer.text
        yield admin


def _drops(admin: SandboxAdmin) -> int:
    shown = admin.http.get("/_sandbox/faults").json()
    return int(shown["injected"].get("dropAfterCommit", 0))


@pytest.mark.parametrize("point", CRASH_POINTS)
def test_crash_then_rerun_with_faults_on_the_import_path(
    point: str,
    prefect: None,
    faulty_sandbox: SandboxAdmin,
    ledger_home: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    biller = make_biller(faulty_sandbox)
    drops_before = _drops(faulty_sandbox)
    # 15% of sends lose their answer (a 503 on a write is unknown to the client too), so a
    # chunk loses all 3 sends of a run about once in 300: a second or third run settles it.
    ledger, in_doubt = _crash_then_rerun(tmp_path, biller, point, monkeypatch, reruns=3)
    try:
        # Answers dropped after commit are the only other source of doubt (a 503 refuses first).
        drops = _drops(faulty_sandbox) - drops_before
        _assert_exactly_once(biller, ledger, in_doubt=in_doubt + drops)
    finally:
        ledger.close()
        biller.api.close()


def test_a_chunk_whose_every_answer_is_lost_is_left_for_the_next_run(
    prefect: None, ledger_home: Path, tmp_path: Path
) -> None:
    """Every send answered 503 (unknown to the client: a 5xx on a write may come after it acted):
    each chunk is sent 3 times in the run and no more, the run ends ``pending`` saying so, and
    the next run, with the service well again, imports every row once."""
    with running_sandbox(f"sqlite:///{tmp_path / 'sandbox.db'}") as admin:
        biller = make_biller(admin)
        file = write_rows(tmp_path / "lost.csv", biller, ROWS)
        plan_faults(
            admin,
            {
                "pathPrefix": "/api/payment_requests/bulk_import",
                "method": "POST",
                "errorRate": 1.0,
                "errorStatus": 503,
            },
        )
        first = _run(file, biller)
        assert first.status == "pending", first.message
        assert "still open" in first.message
        assert fault_counts(admin)["error"] == 3 * (ROWS // CHUNK)
        assert biller.payment_requests() == []
        clear_faults(admin)
        second = _run(file, biller)
        assert second.status == "imported", second.message
        ledger = _ledger()
        try:
            _assert_exactly_once(biller, ledger, in_doubt=0)
        finally:
            ledger.close()
            biller.api.close()
