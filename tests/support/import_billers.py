"""A biller ready for imports (its credential block, customers, and a client to check what the
service holds) and clean payment-request files for it. Used by the flow and CLI tests: each test
gets a biller of its own, so tests never see each other's payment requests."""

from __future__ import annotations

import csv
import uuid
from collections.abc import Iterator
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import httpx
import pytest

from tests.support.sandbox_admin import SandboxAdmin


@dataclass
class ImportBiller:
    """A biller ready for imports: its block name, id, customers, and the sandbox behind it."""

    block: str
    biller_id: str
    customers: list[tuple[str, str]]  # (id, name)
    admin: SandboxAdmin
    api: httpx.Client  # the biller's own bearer client, for checking what the service holds

    def payment_requests(self) -> list[dict[str, object]]:
        found: list[dict[str, object]] = []
        page = 0
        while True:
            body = self.api.get("/payment_requests", params={"page": page, "size": 100}).json()
            found.extend(body["paymentRequests"])
            if page + 1 >= body["pagination"]["totalPages"]:
                return found
            page += 1

    def jobs_submitted(self) -> int:
        return int(self.admin.biller_stats(self.biller_id).get("bulkImportJobs", 0))


def make_biller(admin: SandboxAdmin, customers: int = 5) -> ImportBiller:
    from blocks import BillerCredentials

    tokens = admin.connect_biller()
    # Through the contract-checking hook, like every API answer a test reads.
    api = httpx.Client(
        base_url=f"{admin.root}/api",
        headers=tokens.headers,
        timeout=30,
        event_hooks=admin.api.event_hooks,
    )
    made = []
    for number in range(customers):
        name = f"Customer {number} {uuid.uuid4().hex[:6]}"
        body = {"name": name, "people": [{"firstName": "Pat", "email": "pat@example.com"}]}
        answer = api.post("/customers", json=body)
        assert answer.status_code == 201, answer.text
        made.append((answer.json()["id"], name))
    block = f"biller-{uuid.uuid4().hex[:10]}"
    BillerCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=tokens.app.client_id,
        client_secret=tokens.app.client_secret,
        refresh_token=tokens.refresh_token,
    ).save(block)
    return ImportBiller(block, tokens.biller_id, made, admin, api)


@pytest.fixture
def import_biller(prefect: None, admin: SandboxAdmin) -> Iterator[ImportBiller]:
    """A biller of the test's own, with five customers and a credential block."""
    biller = make_biller(admin)
    yield biller
    biller.api.close()


@pytest.fixture
def empty_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A BILLOPS_HOME of the test's own, with no ledger in it yet."""
    home = tmp_path / "billops-home"
    home.mkdir()
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    return home


@pytest.fixture
def ledger_home(empty_home: Path) -> Path:
    """A BILLOPS_HOME of the test's own with its ledger created, as ``billops setup`` does: the
    ledger every flow of the test opens."""
    from ledger import upgrade_database
    from ledger.settings import BillopsSettings

    upgrade_database(BillopsSettings().ledger_database_url)
    return empty_home


def write_rows(path: Path, biller: ImportBiller, count: int, *, prefix: str = "R") -> Path:
    """A clean payment-request file of ``count`` rows, customers by name, pay-by in 30 days."""
    pay_by = (date.today() + timedelta(days=30)).strftime("%d/%m/%Y")
    with path.open("w", newline="", encoding="utf-8") as handle:
        writer = csv.writer(handle)
        writer.writerow(["Customer", "Amount", "Description", "Reference", "Pay by"])
        for n in range(count):
            _, name = biller.customers[n % len(biller.customers)]
            writer.writerow(
                [name, f"{10 + n}.{n % 100:02d}", f"Row {n}", f"{prefix}-{n:05d}", pay_by]
            )
    return path
