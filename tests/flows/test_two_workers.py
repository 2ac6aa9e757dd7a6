"""Two workers import the same file at the same moment (two real processes sharing one ledger, on
SQLite and on PostgreSQL): the ledger decides who sends each chunk, so the service ends with one
payment request per row and one job per chunk, whichever worker sent it."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from ledger import Ledger
from tests.support.credentials import subprocess_env
from tests.support.import_billers import ImportBiller, write_rows

ROWS, CHUNK = 120, 10


def _worker(file: Path, biller: ImportBiller, ledger_url: str, home: Path) -> subprocess.Popen[str]:
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
    env = subprocess_env(BILLOPS_LEDGER_URL=ledger_url, BILLOPS_HOME=str(home))
    return subprocess.Popen(
        command, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgresql", marks=pytest.mark.postgres)]
)
def test_two_workers_on_one_file_send_each_chunk_once(
    backend: str,
    import_biller: ImportBiller,
    tmp_path: Path,
    request: pytest.FixtureRequest,
) -> None:
    if backend == "sqlite":
        url = f"sqlite:///{tmp_path / 'shared-ledger.db'}"
    else:
        url = str(request.getfixturevalue("postgres_url"))
    Ledger(url).close()  # migrate once up front, as `billops setup` would
    file = write_rows(tmp_path / "race.csv", import_biller, ROWS)

    workers = [_worker(file, import_biller, url, tmp_path / f"home-{n}") for n in (1, 2)]
    outputs = [w.communicate(timeout=300)[0] for w in workers]

    assert all(w.returncode == 0 for w in workers), outputs
    requests = import_biller.payment_requests()
    assert len(requests) == ROWS
    assert len({r["externalId"] for r in requests}) == ROWS
    assert import_biller.jobs_submitted() == ROWS // CHUNK
    with Ledger(url) as ledger:
        ops = ledger.operations(biller=import_biller.biller_id)
    assert len(ops) == ROWS // CHUNK
    assert all(op.attempts == 1 for op in ops)
