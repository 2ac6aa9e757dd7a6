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
    from sandbox.config import SandboxSettings
    from sandbox.serve import serve_in_thread

    home = folder / "home"
    home.mkdir(parents=True, exist_ok=True)
    sandbox_db = home / "sandbox.db"
    sandbox_db.unlink(missing_ok=True)
    console.rule("billops demo")
    with serve_in_thread(SandboxSettings(port=0, database_url=f"sqlite:///{sandbox_db}")) as root:
        console.print(f"1. sandbox of the service running at {root}")
        seeded = _seed(root)
        blocks = [_login(root, seeded, biller, console) for biller in seeded["billers"]]
        return _import_and_report(folder, root, blocks, console)


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
    """Log in to one biller through the authorization-code flow into a credential block.

    The same steps as ``billops auth login`` (state + PKCE, a loopback listener for the redirect,
    one code exchange, the block saved), with the consent page approved over HTTP where a person
    would click "Approve" in a browser.
    """
    from billing_api.oauth import ClientCredentials, OAuthClient
    from blocks.admin import save_login
    from blocks.login import code_from_redirect, loopback_listener, prepare_login
    from sandbox.consent_robot import approve_consent

    block = "demo-" + "".join(c if c.isalnum() else "-" for c in biller["name"].lower()).strip("-")
    settings = {
        "environment": "sandbox",
        "base_url": f"{root}/api",
        "login_url": f"{root}/auth/login",
        "client_id": seeded["clientId"],
        "client_secret": seeded["clientSecret"],
    }
    with loopback_listener(None) as listener:
        request = prepare_login(
            settings["login_url"],
            client_id=settings["client_id"],
            redirect_uri=listener.redirect_uri,
        )
        approve_consent(request.authorize_url, biller["billerId"])
        code = code_from_redirect(listener.wait(30), request.state)
    oauth = OAuthClient(
        settings["base_url"], ClientCredentials(settings["client_id"], settings["client_secret"])
    )
    with oauth:
        tokens = oauth.exchange_code(
            code, redirect_uri=request.redirect_uri, code_verifier=request.code_verifier
        )
    save_login(block, settings, tokens.to_token_set(0))
    console.print(
        f"2. logged in to {biller['name']} (consent approved) → credential block {block!r}"
    )
    return block


def _import_and_report(folder: Path, root: str, blocks: list[str], console: Console) -> int:
    from blocks import BillerCredentials
    from flows.nightly import nightly
    from flows.payment_requests import import_payment_requests
    from tasks.payment_request_import import london_today

    client = BillerCredentials.load_named(blocks[0]).get_client()
    try:
        customers = [DemoCustomer(c.id, c.name) for c in client.customers.list()]
    finally:
        client.close()
    file = write_demo_file(
        folder / "inbox" / "payment-requests.csv", customers, today=london_today()
    )
    console.print(f"3. wrote {file} — with {len(BAD_ROWS)} kinds of mistakes:")
    for mistake in BAD_ROWS:
        console.print(f"     • {mistake}")
    console.print("4. importing it for real (--apply --on-bad-rows skip)…")
    summary = import_payment_requests(
        file=file, biller=blocks[0], dry_run=False, on_bad_rows="skip"
    )
    from billops.run_cli import print_import_summary

    print_import_summary(summary)
    console.print("5. running the nightly flow over both billers…")
    for result in nightly(billers=blocks):
        console.print(f"     {result.biller}: ok, open imports settled: {result.imports_settled}")
    _closing_words(folder, summary, console)
    return 0 if summary.status in ("imported", "partial") else 1


def _closing_words(folder: Path, summary: Any, console: Console) -> None:
    console.rule("done")
    report = summary.report
    console.print(
        f"created: {report.by_status.get('CREATED', 0)} payment requests; "
        f"rejected: {report.rejected} rows (see the failed-rows file)"
    )
    console.print(f"report:        {report.report_csv}")
    console.print(f"failed rows:   {report.failed_csv}")
    console.print(f"import run id: {summary.run_id}")
    console.print(
        f"See the runs in the Prefect UI:  billops ui --home {folder / 'prefect'}"
        "   (then open http://127.0.0.1:4200)"
    )
    console.print("The sandbox has stopped; nothing is left running.")
