"""The nightly coordinator on a platform: a real Prefect server (``prefect server start``), the
``nightly-biller`` deployment and two process workers (``prefect worker start``), billers on the
sandbox with payment-request files waiting in their inbox folders.

One night, shared by the tests below (starting the platform is most of the cost): two healthy
billers, one whose credential the service never issued, and — the short chaos run of the default
suite — the worker running the second healthy biller's night SIGKILLed (with that night's
process) as soon as its jobs have started, then started again. Each biller's night is a child
run on a worker keyed by biller and night; the crashed one is marked ``Crashed``, its slots
handed back and retried on the other worker; the failing one is retried once and never stops
the others; the coordinator writes its summary table and ends in a failed state naming the
failed biller. The long version (every job, faults, fifty kills) is ``test_nightly_chaos.py``.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from flows.nightly import FAILED, BillerResult, nightly
from ledger import OperationState
from tasks.common.session import open_ledger
from tasks.nightly.limits import LEASE_LABEL, biller_limit, service_limit
from tests.support.import_billers import ImportBiller
from tests.support.nightly_world import dead_biller, night_platform, night_runs, request_biller
from tests.support.platform import Platform
from tests.support.sandbox_admin import SandboxAdmin

ROWS = 6
# The platform starts once for the module (its first test pays for it): minutes on a loaded
# 2-core machine, well under one when it is idle.
pytestmark = pytest.mark.timeout(900)
WORKER = "prefect.worker.name"


@dataclass
class Night:
    platform: Platform
    home: Path
    good: ImportBiller
    killed: ImportBiller
    dead: str
    state: Any
    killed_on: str  # the worker killed under the second biller's night
    summary: dict[str, dict[str, Any]]


def _kill_when_running(running: Platform, block: str, found: list[str]) -> None:
    """Kill the worker running ``block``'s night once its jobs started, then start it again."""
    deadline = time.monotonic() + 600
    while time.monotonic() < deadline:
        for run in night_runs(running.url, block):
            worker = run["labels"].get(WORKER)
            if run["state_type"] == "RUNNING" and LEASE_LABEL in run["labels"] and worker:
                running.kill_worker(worker)
                found.append(worker)
                running.start_worker(worker)
                return
        time.sleep(0.3)


@pytest.fixture(scope="module")
def night(tmp_path_factory: pytest.TempPathFactory, sandbox: str) -> Iterator[Night]:
    admin = SandboxAdmin(sandbox)
    try:
        # One night at a time per worker: with two, the killed worker could also be running
        # the first healthy biller's night, which then crashed too (and, caught before it had
        # announced its process, waited the coordinator's ten stuck minutes for its retry).
        with night_platform(tmp_path_factory.mktemp("night"), worker_limit=1) as running:
            home = Path(running.env["BILLOPS_HOME"])
            with running.api():
                good = request_biller(admin, home, ROWS, tag="G")
                killed = request_biller(admin, home, ROWS, tag="K")
                dead = dead_biller(admin)
                killed_on: list[str] = []
                killer = threading.Thread(
                    target=_kill_when_running, args=(running, killed.block, killed_on)
                )
                killer.start()
                names = [good.block, dead, killed.block]
                state = nightly(billers=names, run_billers="workers", return_state=True)
                killer.join()
                from prefect.artifacts import Artifact

                table = Artifact.get("nightly-summary")
            assert table is not None
            rows = {row["biller"]: row for row in json.loads(str(table.data))}
            yield Night(running, home, good, killed, dead, state, killed_on[0], rows)
    finally:
        admin.close()


def test_one_failing_biller_fails_the_night_after_the_summary_and_stops_no_other(
    night: Night,
) -> None:
    assert night.state.is_failed() and night.state.name == FAILED, night.state
    assert "1 of 3 biller(s) failed: " + night.dead in str(night.state.message)
    assert list(night.summary) == [night.good.block, night.dead, night.killed.block]
    line = night.summary[night.good.block]
    assert line["status"] == "ok" and line["rows"] == ROWS and line["attempts"] == 1, line
    assert line["worker"] in {"w1", "w2"}
    failed = night.summary[night.dead]
    assert failed["status"] == "FAILED" and failed["attempts"] == 2, failed
    assert "billops auth login --block" in failed["error"]
    tries = night_runs(night.platform.url, night.dead)
    assert [run["state_type"] for run in tries] == ["FAILED", "FAILED"]
    keys = [run["idempotency_key"] for run in tries]
    assert keys == [f"nightly:{tries[0]['parameters']['night']}:{night.dead}", keys[0] + ":retry-1"]


def test_a_worker_killed_mid_night_the_biller_is_retried_on_another_and_nothing_is_doubled(
    night: Night,
) -> None:
    line = night.summary[night.killed.block]
    assert line["status"] == "ok" and line["attempts"] == 2, line
    assert line["worker"] != night.killed_on
    tries = night_runs(night.platform.url, night.killed.block)
    assert [run["state_type"] for run in tries] == ["CRASHED", "COMPLETED"]
    assert "is gone" in tries[0]["state"]["message"]
    for biller in (night.good, night.killed):
        requests = biller.payment_requests()
        assert len(requests) == ROWS and len({r["externalId"] for r in requests}) == ROWS
        folder = night.home / "inbox" / biller.block
        assert len(list((folder / "processed").rglob("requests.csv"))) == 1
        assert not [p for p in (folder / "processing").rglob("*") if p.is_file()]
        with open_ledger() as ledger:
            states = {op.state for op in ledger.operations(biller=biller.biller_id)}
        assert states == {OperationState.CONFIRMED}


def test_every_night_gave_its_slots_back(night: Night) -> None:
    from prefect.client.orchestration import get_client

    from blocks import BillerCredentials

    with night.platform.api(), get_client(sync_client=True) as client:
        for block in (night.good.block, night.killed.block, night.dead):
            own = client.read_global_concurrency_limit_by_name(biller_limit(block))
            app_id = BillerCredentials.load(block).client_id
            app = client.read_global_concurrency_limit_by_name(service_limit(app_id))
            assert (own.limit, own.active_slots) == (1, 0), block
            assert app.active_slots == 0, block


def test_a_second_coordinator_the_same_night_starts_nothing_again(night: Night) -> None:
    before = [(run["id"], run["state_type"]) for run in night_runs(night.platform.url)]
    blocks = [night.good.block, night.killed.block]
    with night.platform.api():
        again = nightly(billers=blocks, run_billers="workers")

    assert [(r.biller, r.ok) for r in again] == [(b, True) for b in blocks]
    assert all(isinstance(r, BillerResult) and r.rows == ROWS for r in again)
    assert [(run["id"], run["state_type"]) for run in night_runs(night.platform.url)] == before
