"""Soak (``make soak``): SIGKILL the import at 20 random moments, rerun each time, then check the
same guarantees as the crash tests: one payment request per row, every operation confirmed, and
no chunk sent more often than the kills that could have caught it mid-send explain.

Each run is a real ``billops run import-payment-requests`` process on the test session's Prefect
API, killed with SIGKILL (no cleanup of any kind), so this is the crash a power cut gives. No
``--force``: a rerun resumes the import a killed run left (a forced run would be a new round of
the file and send every chunk again, on purpose); once a run has finished, the next ones find the
file imported.
"""

from __future__ import annotations

import random
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from ledger import OperationState
from tasks.common.session import open_ledger
from tests.support.credentials import subprocess_env
from tests.support.import_billers import ImportBiller, write_rows

ROWS, CHUNK, KILLS = 400, 20, 20


def _start(file: Path, biller: ImportBiller) -> subprocess.Popen[bytes]:
    command = [
        sys.executable,
        "-m",
        "billops.cli",
        "run",
        "import-payment-requests",
        str(file),
        "--biller",
        biller.block,
        "--apply",
        "--chunk-size",
        str(CHUNK),
    ]
    return subprocess.Popen(
        command, env=subprocess_env(), stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
    )


@pytest.mark.slow
def test_twenty_sigkills_then_a_clean_finish(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "soak.csv", import_biller, ROWS)
    rng = random.Random(20261122)
    for _ in range(KILLS):
        process = _start(file, import_biller)
        time.sleep(rng.uniform(2.0, 9.0))  # import + Prefect start take ~4 s: kill all phases
        if process.poll() is None:
            process.send_signal(signal.SIGKILL)
        process.wait(timeout=60)
    final = _start(file, import_biller)
    assert final.wait(timeout=600) in (0, 3)

    ledger = open_ledger()
    try:
        ops = ledger.operations(biller=import_biller.biller_id)
        assert len(ops) == ROWS // CHUNK
        assert {op.state for op in ops} == {OperationState.CONFIRMED}
        requests = import_biller.payment_requests()
        assert len(requests) == ROWS
        assert len({r["externalId"] for r in requests}) == ROWS
        sent = sum(op.attempts for op in ops)
        assert import_biller.jobs_submitted() <= sent
        # A kill can leave at most the chunks in flight (4 at a time) in doubt.
        assert sent - len(ops) <= 4 * KILLS
    finally:
        ledger.close()
