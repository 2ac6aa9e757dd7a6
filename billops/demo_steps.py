"""The demo's steps (see ``billops/demo.py``); run inside the demo's own environment."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import httpx
from rich.console import Console

from billops.demo_data import BAD_ROWS, DemoCustomer, write_demo_file

DEMO_CUSTOMERS = 6


def run_demo(folder: Path, console: Console) -> int:
    """Every step of the demo, printing as it goes; returns the exit code."""
    from billops.demo_bank import send_invoices_paid_by_transfer
    from ledger import upgrade_database
    from ledger.settings import BillopsSettings
    from sandbox.config import SandboxSettings
    from sandbox.serve import serve_in_thread

    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    upgrade_database(BillopsSettings().ledger_database_url)  # what `billops setup` does
    sandbox_db = home / "sandbox.db"
    sandbox_db.unlink(missing_ok=True)
    console.rule("billops demo")
    with serve_in_thread(SandboxSettings(port=0, database_url=f"sqlite:///{sandbox_db}")) as root:
        console.print(f"1. sandbox of the service running at {root}")
        seeded = _seed(root)
        blocks = [_login(root, seeded, biller, console) for biller in seeded["billers"]]
        send_invoices_paid_by_transfer(blocks[0], console)
        return _import_and_report(folder, root, seeded, blocks, console)


def _seed(root: str) -> dict[str, Any]:
    answer = httpx.post(
        f"{root}/_sandbox/seed",
        json={"billers": 2, "customers": DEMO_CUSTOMERS, "seed": 42},
        timeout=60,
    )
    answer.raise_for_status()
    seeded: dict[str, Any] = answer.json()
    return seeded


def _login(root: str, seeded: dict[str, Any], biller: dict[str, Any], console: Console) -> str:
    """Log in to one biller through the authorization-code flow into a credential block (the
    consent page approved over HTTP where a person would click, as ``billops sandbox login``)."""
    from billops.sandbox_login import SandboxApp, block_name_for, login_to_sandbox

    block = "demo-" + block_name_for(biller["name"])
    app = SandboxApp(seeded["clientId"], seeded["clientSecret"], seeded["billers"])
    login_to_sandbox(root, app, biller["billerId"], block)
    console.print(
        f"2. logged in to {biller['name']} (consent approved) → credential block {block!r}"
    )
    return block


def _import_and_report(
    folder: Path, root: str, seeded: dict[str, Any], blocks: list[str], console: Console
) -> int:
    from billops.demo_bank import import_the_bank_statement
    from billops.demo_delinquency import pause_the_failing_payer
    from billops.demo_inbox import import_through_inbox, show_webhook_run, webhook_receiver
    from billops.demo_payouts import reconcile_the_month
    from blocks import BillerCredentials
    from flows.nightly import nightly
    from tasks.common.working_days import london_today

    client = BillerCredentials.load_named(blocks[0]).get_client()
    try:
        customers = [DemoCustomer(c.id, c.name) for c in client.customers.list()]
    finally:
        client.close()
    console.print(
        f"3. a payment-request file for {blocks[0]}, with {len(BAD_ROWS)} kinds of mistakes:"
    )
    for mistake in BAD_ROWS:
        console.print(f"     • {mistake}")
    with webhook_receiver(root, seeded, blocks, console) as hooks:
        done = import_through_inbox(
            folder / "inbox",
            blocks[0],
            lambda path: write_demo_file(path, customers, today=london_today()),
            console,
        )
        show_webhook_run(hooks, console)
    console.print("6. running the nightly flow over both billers…")
    results: Any = nightly(billers=blocks)
    for result in results:
        console.print(f"     {result.biller}: ok, open imports settled: {result.imports_settled}")
    pause_the_failing_payer(root, blocks[1], folder, console)
    import_the_bank_statement(root, seeded["billers"][0]["billerId"], blocks[0], folder, console)
    reconcile_the_month(root, seeded["billers"][1]["billerId"], blocks[1], folder, console)
    return _closing_words(folder, done, console)


def _closing_words(folder: Path, done: Path, console: Console) -> int:
    """What the import made of the file (from its report), where the reports are; exit code."""
    import csv

    report, failed = done / "payment-requests.report.csv", done / "payment-requests.failed.csv"
    with report.open(newline="", encoding="utf-8-sig") as handle:
        outcomes = [row["outcome"] for row in csv.DictReader(handle)]
    inbox_report = (done / "payment-requests.csv.inbox.txt").read_text(encoding="utf-8")
    run = next(
        (ln.split(":", 1)[1].strip() for ln in inbox_report.splitlines() if ln.startswith("run:")),
        "-",
    )
    console.rule("done")
    created, rejected = outcomes.count("CREATED"), outcomes.count("REJECTED")
    console.print(
        f"created: {created} payment requests; rejected: {rejected} rows (see the failed-rows file)"
    )
    console.print(f"report:        {report}")
    console.print(f"failed rows:   {failed}")
    console.print(f"inbox report:  {done / 'payment-requests.csv.inbox.txt'}")
    console.print(f"inbox run id:  {run}")
    console.print(
        f"See the runs in the Prefect UI:  billops ui --home {folder / 'prefect'}"
        "   (then open http://127.0.0.1:4200)"
    )
    console.print("The sandbox has stopped; nothing is left running.")
    return 0 if created else 1
