"""The sandbox under write load never answers 5xx over its own bookkeeping.

Bulk imports run (the background worker writes chunk after chunk) while client threads create
customers and payment requests, list, and poll the jobs: every answer must be below 500, every
job must complete with every row created, and every request must be counted in the stats
(the counters are kept off the requests' transactions). The heavy version (50,000 rows in
ten files, the sandbox in its own process as ``make bench`` runs it) is marked slow. Before the
write gate, writers waited behind the worker for up to the busy timeout and then failed.
"""

from __future__ import annotations

import threading
from collections import Counter
from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest

from tests.support.load import (
    Tally,
    hammer,
    import_file,
    sandbox_process,
    wait_for_job,
    writers,
)
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox

PAY_BY = (date.today() + timedelta(days=40)).isoformat()


def _load(root: str, files: int, rows: int, threads: int, timeout: float) -> None:
    """``files`` bulk imports of ``rows`` rows each (a file holds at most 10,000), uploaded at
    once, with ``threads`` clients writing and reading until every job is final."""
    admin = SandboxAdmin(root)
    try:
        tokens = admin.connect_biller("Load Ltd")
        api = f"{root}/api"
        with httpx.Client(base_url=api, headers=tokens.headers, timeout=120) as http:
            customer = http.post("/customers", json={"name": "Payer", "externalId": "payer-1"})
            assert customer.status_code == 201, customer.text
            uploads = [
                http.post(
                    "/payment_requests/bulk_import",
                    params={"collectionMethod": "NONE", "deleteMissingPaymentRequests": "false"},
                    files={"inputFile": ("load.csv", import_file(rows, "payer-1", PAY_BY))},
                )
                for _ in range(files)
            ]
            assert [upload.status_code for upload in uploads] == [202] * files
            done = threading.Event()
            calls = writers(tokens, customer.json()["id"], PAY_BY)
            results: list[Tally] = []
            load = threading.Thread(
                target=lambda: results.append(hammer(api, tokens, calls, threads, done))
            )
            load.start()
            try:
                jobs = [wait_for_job(http, up.json()["jobId"], timeout) for up in uploads]
            finally:
                done.set()
                load.join(600)
        tally = results[0]
        assert tally.server_errors == []
        assert sum(tally.sent.values()) >= threads  # the load really ran alongside the import
        assert [job["status"] for job in jobs] == ["COMPLETED"] * files
        created = [{"status": "CREATED", "count": rows}]
        assert [job["countsByItemStatus"] for job in jobs] == [created] * files
        counted = admin.biller_stats(tokens.biller_id)["requests"]
        expected = tally.sent + Counter({"customers.create": 1})  # and the payer, made first
        assert {op: counted.get(op) for op in expected} == dict(expected)
    finally:
        admin.close()


def test_concurrent_writes_during_a_bulk_import_get_no_server_error(tmp_path: Path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path / 'sandbox.db'}") as admin:
        _load(admin.root, files=2, rows=1_000, threads=4, timeout=240)


@pytest.mark.slow
@pytest.mark.timeout(3_600)
def test_50000_rows_imported_under_concurrent_writes_get_no_server_error(tmp_path: Path) -> None:
    with sandbox_process(f"sqlite:///{tmp_path / 'sandbox.db'}") as root:
        _load(root, files=10, rows=5_000, threads=8, timeout=1_800)
