"""Billers for a platform's night and the platform that runs it, shared by the nightly worker
tests, the chaos soak and ``bench/bench_nightly.py``.

- :func:`night_platform`: a ledger (SQLite in the folder, or a PostgreSQL URL), a Prefect server
  with the ``nightly-biller`` deployment (``tests/support/platform.py``) and N process workers,
  with this process's ``BILLOPS_HOME`` / ``BILLOPS_LEDGER_URL`` pointed where the workers' are;
- :func:`drop` puts a finished file in a biller's inbox folder (old enough to be complete);
- :func:`request_biller` a biller with a payment-request file waiting, :func:`dead_biller` a
  credential block the service never issued (its night fails, and is retried);
- :func:`night_runs` the server's ``nightly-biller`` runs, read over plain HTTP (from any thread).
"""

from __future__ import annotations

import os
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx

from tests.support.import_billers import ImportBiller, make_biller, write_rows
from tests.support.platform import Platform, platform
from tests.support.sandbox_admin import SandboxAdmin


def drop(home: Path, block: str, name: str, text: str, *, kind: str = "") -> Path:
    """Write ``text`` as a file waiting in the biller's inbox folder (``kind`` sub-folder when
    given), dated a minute ago so the inbox takes it as complete."""
    folder = home / "inbox" / block / kind if kind else home / "inbox" / block
    folder.mkdir(parents=True, exist_ok=True)
    path = folder / name
    path.write_text(text, encoding="utf-8")
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


def request_biller(admin: SandboxAdmin, home: Path, rows: int, *, tag: str = "R") -> ImportBiller:
    """A biller (block saved on the current Prefect API) with ``rows`` payment requests waiting
    in its inbox folder as ``requests.csv``."""
    biller = make_biller(admin)
    folder = home / "inbox" / biller.block
    folder.mkdir(parents=True, exist_ok=True)
    path = write_rows(folder / "requests.csv", biller, rows, prefix=tag)
    old = time.time() - 60
    os.utime(path, (old, old))
    return biller


def dead_biller(admin: SandboxAdmin) -> str:
    """A credential block whose refresh token the service never issued: every night of it
    fails at its first job."""
    from blocks import BillerCredentials

    app = admin.create_app()
    name = f"dead-{uuid.uuid4().hex[:8]}"
    BillerCredentials(
        environment="sandbox",
        base_url=f"{admin.root}/api",
        client_id=app.client_id,
        client_secret=app.client_secret,
        refresh_token="not-a-refresh-token",
    ).save(name)
    return name


def night_runs(url: str, biller: str | None = None) -> list[dict[str, Any]]:
    """The server's ``nightly-biller`` flow runs (of ``biller`` only when given), oldest first,
    as the API returns them (``state_type``, ``labels``, ``parameters``, ...)."""
    body: dict[str, Any] = {"limit": 200, "sort": "EXPECTED_START_TIME_ASC"}
    body["flows"] = {"name": {"any_": ["nightly-biller"]}}
    found: list[dict[str, Any]] = []
    offset = 0
    while True:
        page = httpx.post(f"{url}/flow_runs/filter", json={**body, "offset": offset}, timeout=30)
        page.raise_for_status()
        batch = page.json()
        found += [r for r in batch if biller is None or r["parameters"].get("biller") == biller]
        if len(batch) < 200:
            return found
        offset += len(batch)


@contextmanager
def night_platform(
    root: Path,
    *,
    workers: int = 2,
    worker_limit: int = 2,
    ledger_url: str | None = None,
    server_database_url: str | None = None,
    extra_env: dict[str, str] | None = None,
) -> Iterator[Platform]:
    """The platform's topology with ``workers`` process workers (``w1``, ``w2``, ...) online,
    sharing ``root/home`` and one ledger; this process's ``BILLOPS_*`` settings point at the
    same places while it runs."""
    from ledger import upgrade_database

    home = root / "home"
    home.mkdir(parents=True, exist_ok=True)
    url = ledger_url or f"sqlite:///{home / 'ledger.db'}"
    upgrade_database(url)
    saved = {key: os.environ.get(key) for key in ("BILLOPS_HOME", "BILLOPS_LEDGER_URL")}
    os.environ["BILLOPS_HOME"] = str(home)
    os.environ["BILLOPS_LEDGER_URL"] = url
    try:
        with platform(
            root / "platform",
            home=home,
            ledger_url=url,
            server_database_url=server_database_url,
            extra_env=extra_env,
        ) as running:
            for number in range(1, workers + 1):
                running.start_worker(f"w{number}", limit=worker_limit)
            running.wait_for_workers()
            yield running
    finally:
        for key, value in saved.items():
            if value is None:
                os.environ.pop(key, None)
            else:
                os.environ[key] = value


# --- a whole biller for the soak and the benchmark ------------------------------------------
STATEMENT_HEADER = (
    "Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes\n"
)
POLICY = """\
name: owes
apply: {automatic: true, max_customers: 10, max_amount: "100000"}
states:
  - name: paused
    enter: [{unpaid_amount_at_least: "1.00"}]
    leave: [{unpaid_amount_below: "1.00"}]
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
"""


@dataclass
class WholeBiller:
    """A biller with every job's input waiting: a payment-request file of ``rows`` rows, a bank
    statement paying its invoice ``INV-1`` in full (recorded unattended: its bank settings allow
    exact matches), a delinquency policy applied unattended to a direct-debit customer who owes,
    and its payout export in ``payouts/``; ``paid_invoice`` and ``dd_invoice`` are the documents
    the night should pay and pause, ``payout_report`` the export as dropped and
    ``payout_period`` the ``from``/``to`` it was asked for (to ask again after the night)."""

    block: str
    biller_id: str
    api: httpx.Client
    rows: int
    paid_invoice: dict[str, Any]
    dd_invoice: dict[str, Any]
    payout_report: Path
    payout_period: dict[str, str]


def payout_export(admin: SandboxAdmin, biller_id: str, period: dict[str, str]) -> bytes:
    """The sandbox's admin payout export of ``period`` (``from``/``to``), as the finance team
    downloads it from the console (docs/service.md §6: there is no payouts API)."""
    answer = admin.http.get(
        "/_sandbox/exports/payouts.csv", params={"billerId": biller_id, **period}
    )
    answer.raise_for_status()
    return answer.content


def whole_biller(admin: SandboxAdmin, home: Path, seed: int, rows: int) -> WholeBiller:
    """A :class:`WholeBiller` on ``admin``'s sandbox (its block saved on the current Prefect
    API), its files and settings under ``home``."""
    from datetime import date, timedelta

    from tests.delinquency.scenario import Scenario
    from tests.support.bank_statements import make_bank_biller

    bank = make_bank_biller(admin, seed=seed, invoices=2, requests=0, customers=2)
    first = bank.documents["INV-1"]
    payer = str(first["customer"]["name"]).upper()[:18]
    day = (date.today() - timedelta(days=1)).strftime("%d/%m/%Y")
    line = f"{day},{payer},{first['invoiceNo']},FASTER PAYMENT,{first['dueAmount']},100.00,INCOME,"
    drop(home, bank.block, "statement.csv", STATEMENT_HEADER + line + "\n", kind="bank")
    settings = home / "bank-settings" / f"{bank.block}.yaml"
    settings.parent.mkdir(parents=True, exist_ok=True)
    settings.write_text("auto_apply_exact: true\n", encoding="utf-8")
    names = sorted({str(doc["customer"]["name"]) for doc in bank.documents.values()})
    pay_by = (date.today() + timedelta(days=30)).strftime("%d/%m/%Y")
    lines = ["Customer,Amount,Description,Reference,Pay by"]
    for n in range(rows):
        name = names[n % len(names)]
        lines.append(f"{name},{10 + n}.50,Row {n},S{seed}-{n:05d},{pay_by}")
    drop(home, bank.block, "requests.csv", "\n".join(lines) + "\n")
    scenario = Scenario(admin, bank.block, bank.biller_id, bank.api)
    scenario.customer("Ann", "pays")
    dd_invoice = scenario.invoice("Ann", "100.00", 20)
    policies = home / "policies"
    policies.mkdir(parents=True, exist_ok=True)
    (policies / f"{bank.block}.yaml").write_text(POLICY, encoding="utf-8")
    # Payouts come only from the sandbox's simulated working days (docs/service.md §6): moving
    # the clock shared by every biller of the world would collect the direct debit the policy
    # must pause, so the export is of the last ninety days as they are, usually its header
    # alone, which the payout job reports as nothing to reconcile.
    today = scenario.today()
    period = {"from": str(today - timedelta(days=90)), "to": str(today)}
    export = payout_export(admin, bank.biller_id, period)
    report = drop(home, bank.block, f"payouts-{today}.csv", export.decode("utf-8"), kind="payouts")
    return WholeBiller(
        bank.block, bank.biller_id, bank.api, rows, first, dd_invoice, report, period
    )
