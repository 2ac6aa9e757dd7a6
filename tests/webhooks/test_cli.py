"""``billops webhooks setup|list|replay`` in process, and ``billops webhooks serve`` as the real
process systemd would run: subscribed, receiving a signed delivery, stopped by SIGTERM."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json
import signal
import subprocess
import sys
import time
import uuid
from datetime import UTC, datetime, timedelta
from pathlib import Path

import httpx
import pytest
from typer.testing import CliRunner

from billops.cli import app
from blocks import PlatformCredentials
from ledger import Ledger, upgrade_database
from ledger.settings import BillopsSettings
from ledger.webhooks import NewWebhookEvent
from tests.support.credentials import save_connected_block, subprocess_env, unique_name
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_secret
from tests.webhooks.conftest import Platform
from tests.webhooks.prefect_events import events_of

ROOT = Path(__file__).resolve().parents[2]
runner = CliRunner()


@pytest.fixture
def home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "home"
    folder.mkdir()
    monkeypatch.setenv("BILLOPS_HOME", str(folder))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    upgrade_database(BillopsSettings().ledger_database_url)
    return folder


@pytest.mark.parametrize("path", ["hooks", "/hooks?x=1", ""])
def test_serve_refuses_a_path_that_is_not_a_url_path(path: str) -> None:
    # "hooks" ended in Starlette's AssertionError traceback.
    command = ["webhooks", "serve", "--platform", "nobody", "--path", path]
    result = runner.invoke(app, command, env={"COLUMNS": "200"})
    assert result.exit_code == 2, result.output
    assert "start it with '/'" in result.output
    assert "Traceback" not in result.output


def test_setup_list_and_replay(platform: Platform, hooks_sandbox: SandboxAdmin, home: Path) -> None:
    block_name = unique_name("acme")
    # The platform's biller, as a biller credential block too (setup maps it to its biller).
    _block, tokens = save_connected_block(hooks_sandbox, block_name)
    url = "http://127.0.0.1:9/webhooks"
    answer = runner.invoke(
        app,
        [
            "webhooks",
            "setup",
            "--platform",
            platform.name,
            "--url",
            url,
            "--events",
            "customer,payout",
            "--biller",
            block_name,
            "--target-auth",
            "basic",
        ],
    )
    assert answer.exit_code == 0, answer.output
    assert "created" in answer.output and f"-> block {block_name}" in answer.output
    settings = PlatformCredentials.load_named(platform.name).webhooks
    assert settings is not None and settings.signing_secret is not None
    register_secret(settings.signing_secret.get_secret_value())
    assert settings.basic_username == "billops" and settings.api_key_header is None
    assert settings.signing_secret.get_secret_value() not in answer.output

    again = runner.invoke(
        app, ["webhooks", "setup", "--platform", platform.name, "--url", url, "--biller", "x"]
    )
    assert again.exit_code == 0 and "updated" in again.output, again.output

    with Ledger(BillopsSettings().ledger_database_url) as ledger:
        assert ledger.biller_blocks() == {tokens.biller_id: block_name}
        event_id = str(uuid.uuid4())
        ledger.store_webhook_event(
            NewWebhookEvent(
                f"event:{event_id}",
                event_id,
                tokens.biller_id,
                "customer",
                "CUSTOMER_CREATED",
                {"customerId": "c-1", "eventId": event_id},
            )
        )
    listed = runner.invoke(app, ["webhooks", "list", "--platform", platform.name])
    assert listed.exit_code == 0, listed.output
    assert url in listed.output and "enabled" in listed.output
    assert "1 event(s) stored, 1 waiting to be emitted" in listed.output

    since = (datetime.now(UTC) - timedelta(minutes=5)).strftime("%Y-%m-%dT%H:%M:%S")
    for _ in range(2):
        replayed = runner.invoke(app, ["webhooks", "replay", "--since", since])
        assert replayed.exit_code == 0 and "1 event(s) re-emitted" in replayed.output
    with Ledger(BillopsSettings().ledger_database_url) as ledger:
        [stored] = ledger.webhook_events()
    assert stored.emissions == 2
    resource = f"billops.biller.{tokens.biller_id}"
    deadline = datetime.now(UTC) + timedelta(seconds=30)
    while len(found := events_of(resource)) < 2 and datetime.now(UTC) < deadline:
        time.sleep(0.5)
    assert len({e["id"] for e in found}) == 2  # each replay under its own id
    assert {e["resource"]["billops.biller.block"] for e in found} == {block_name}


def test_setup_refuses_an_unknown_event_kind(platform: Platform, home: Path) -> None:
    answer = runner.invoke(
        app,
        [
            "webhooks",
            "setup",
            "--platform",
            platform.name,
            "--url",
            "http://127.0.0.1:9/x",
            "--events",
            "customer,refund",
        ],
    )
    assert answer.exit_code == 2
    assert "unknown kind(s) refund" in answer.output


def test_serve_receives_and_stops_on_sigterm(platform: Platform, home: Path) -> None:
    from pydantic import SecretStr

    from blocks.webhook_settings import WebhookReceiverSettings

    refused = subprocess.run(
        [sys.executable, "-m", "billops.cli", "webhooks", "serve", "--platform", platform.name],
        env=subprocess_env(BILLOPS_HOME=str(home)),
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
    )
    assert refused.returncode != 0 and "billops webhooks setup" in refused.stderr + refused.stdout

    secret = "whsec_" + uuid.uuid4().hex
    register_secret(secret)
    platform.block.save_webhook_settings(WebhookReceiverSettings(signing_secret=SecretStr(secret)))
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "billops.cli",
            "webhooks",
            "serve",
            "--platform",
            platform.name,
            "--port",
            "0",
        ],
        env=subprocess_env(BILLOPS_HOME=str(home)),
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        cwd=ROOT,
    )
    try:
        assert process.stdout is not None
        line = process.stdout.readline().strip()
        assert line.startswith("webhook receiver ready: http://127.0.0.1:"), line
        url = line.removeprefix("webhook receiver ready: ")
        body = json.dumps(
            {"type": "PAYOUT_PAID", "eventId": "p-1", "billerId": "b-9", "payoutId": "po-1"}
        ).encode()
        stamp = datetime.now(UTC).strftime("%Y-%m-%dT%H:%M:%SZ")
        mac = hmac.new(secret.encode(), body + stamp.encode(), hashlib.sha256).digest()
        headers = {
            "adfin-webhook-signature": base64.b64encode(mac).decode(),
            "adfin-webhook-signature-timestamp": stamp,
            "adfin-webhook-type": "payout",
        }
        answer = httpx.post(url, content=body, headers=headers, timeout=30)
        assert answer.status_code == 200 and answer.json() == {"stored": True, "duplicate": False}
        assert httpx.post(url, content=body + b" ", headers=headers).status_code == 401
    finally:
        process.send_signal(signal.SIGTERM)
        code = process.wait(60)
    assert code == 0
    with Ledger(BillopsSettings().ledger_database_url) as ledger:
        [stored] = ledger.webhook_events()
    assert (stored.type, stored.kind, stored.emissions) == ("PAYOUT_PAID", "payout", 1)
