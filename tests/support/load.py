"""Load on a running sandbox: a bulk import while other clients write and read at once.

Used by ``tests/sandbox/test_write_load.py``. Each client thread sends one kind of request in a
loop until the import finishes and tallies what it sent and every answer's status, so a test can
say both "no 5xx" and "every request was counted".
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
import uuid
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field

import httpx

from tests.support.sandbox_admin import BillerTokens

HEADER = "externalId,customerExternalId,description,totalAmount,currencyCode,reference,payByDate"
FINAL = {"COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"}


def import_file(rows: int, customer_external_id: str, pay_by: str) -> bytes:
    """A bulk-import CSV of ``rows`` good rows for one customer."""
    run = uuid.uuid4().hex[:8]
    lines = [HEADER] + [
        f"load-{run}-{n},{customer_external_id},Load row {n},{10 + n % 90}.{n % 100:02d},GBP,"
        f"L-{run}-{n},{pay_by}"
        for n in range(rows)
    ]
    return ("\n".join(lines) + "\n").encode()


@dataclass
class Tally:
    """What the client threads sent (per operationId) and got (per status code)."""

    sent: Counter[str] = field(default_factory=Counter)
    statuses: Counter[int] = field(default_factory=Counter)
    server_errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def record(self, operation_id: str, response: httpx.Response) -> None:
        with self.lock:
            self.sent[operation_id] += 1
            self.statuses[response.status_code] += 1
            if response.status_code >= 500:
                self.server_errors.append(f"{operation_id}: {response.status_code} {response.text}")


Call = Callable[[httpx.Client, int], tuple[str, httpx.Response]]


def writers(tokens: BillerTokens, customer_id: str, pay_by: str) -> list[Call]:
    """One call per kind of request the load sends: customer and payment-request writes, a
    payment-request list and a job read."""
    run = uuid.uuid4().hex[:8]

    def create_customer(http: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        body = {"name": f"Load customer {run}-{n}", "externalId": f"load-c-{run}-{n}"}
        return "customers.create", http.post("/customers", json=body)

    def create_payment_request(http: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        body = {
            "customer": {"id": customer_id},
            "description": f"Load request {n}",
            "totalAmount": 12.5,
            "currencyCode": "GBP",
            "payByDate": pay_by,
            "externalId": f"load-pr-{run}-{n}",
        }
        return "payment_requests.create", http.post("/payment_requests", json=body)

    def list_payment_requests(http: httpx.Client, n: int) -> tuple[str, httpx.Response]:
        return "payment_requests.list", http.get("/payment_requests", params={"size": 5})

    return [create_customer, create_payment_request, list_payment_requests]


def hammer(
    api_root: str, tokens: BillerTokens, calls: list[Call], threads: int, until: threading.Event
) -> Tally:
    """Run ``threads`` clients (round-robin over ``calls``) until ``until`` is set."""
    tally = Tally()

    def client(index: int) -> None:
        call = calls[index % len(calls)]
        with httpx.Client(base_url=api_root, headers=tokens.headers, timeout=120) as http:
            n = 0
            while not until.is_set():
                operation_id, response = call(http, index * 1_000_000 + n)
                tally.record(operation_id, response)
                n += 1

    workers = [threading.Thread(target=client, args=(i,), daemon=True) for i in range(threads)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(600)
    return tally


def wait_for_job(
    http: httpx.Client, job_id: str, timeout: float, tally: Tally | None = None
) -> dict[str, object]:
    """Poll the job until it is final (its reads are tallied too when ``tally`` is given)."""
    deadline = time.monotonic() + timeout
    while True:
        response = http.get(f"/payment_requests/bulk_import/{job_id}")
        if tally is not None:
            tally.record("payment_requests.retrieve_bulk_import", response)
        if response.status_code == 200 and response.json()["status"] in FINAL:
            return dict(response.json())
        if time.monotonic() > deadline:
            raise AssertionError(f"job {job_id} not final after {timeout} s: {response.text}")
        time.sleep(0.2)


@contextmanager
def sandbox_process(database_url: str, timeout: float = 60) -> Iterator[str]:
    """A sandbox in a process of its own (as ``billops sandbox serve`` runs it): its root URL."""
    code = (
        "import sys; from sandbox.config import SandboxSettings; from sandbox.serve import serve;"
        "serve(SandboxSettings(port=0, database_url=sys.argv[1]))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", code, database_url],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline()  # "sandbox ready: http://HOST:PORT"
        if not line.startswith("sandbox ready: "):
            raise RuntimeError(f"the sandbox did not start: {line!r}")
        yield line.removeprefix("sandbox ready: ").strip()
    finally:
        process.terminate()
        process.wait(timeout)
