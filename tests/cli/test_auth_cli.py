"""``billops auth`` against the sandbox and the Prefect harness: login (loopback listener and
pasted redirect, following the consent page over HTTP), status, recover, revoke; and ``setup``."""

from __future__ import annotations

import stat
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from prefect.client.orchestration import get_client
from typer.testing import CliRunner

from billing_api import OAuthError, RecoveryDirectory
from billops.cli import app
from blocks import BillerCredentials
from flows.payment_requests import import_payment_requests
from tests.support.cli import ROOT, billops_command, cli_env
from tests.support.consent import approve
from tests.support.credentials import register_block_secrets, save_connected_block, unique_name
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_log, register_secret


def _start_login(home: Path, secret: str, *args: str) -> tuple[subprocess.Popen[str], str]:
    """Run ``billops auth login ARGS`` and read up to the printed login address."""
    process = subprocess.Popen(
        billops_command("auth", "login", "--no-browser", *args),
        cwd=ROOT,
        env=cli_env(home, BILLOPS_CLIENT_SECRET=secret),
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
    )
    assert process.stdout is not None
    seen = []
    for line in process.stdout:
        seen.append(line)
        if line.startswith("  http"):
            return process, line.strip()
    process.wait(10)
    register_log("".join(seen), label="billops auth login output")
    pytest.fail(f"login printed no address: {''.join(seen)[-2000:]}")


def _finish(process: subprocess.Popen[str], stdin: str | None = None) -> str:
    output, _ = process.communicate(stdin, timeout=60)
    register_log(output, label="billops auth login output")
    return output


def test_login_with_the_loopback_listener(
    prefect_api: str, admin: SandboxAdmin, billops_home: Path
) -> None:
    app_credentials = admin.create_app(name="billops CLI")
    biller_id = admin.create_biller("Loopback Login Ltd")
    name = unique_name("login")
    form = import_payment_requests.to_deployment(name=unique_name("form"))
    deployment_id = form.apply()
    process, url = _start_login(
        billops_home,
        app_credentials.client_secret,
        *("--block", name, "--environment", "sandbox", "--base-url", f"{admin.root}/api"),
        *("--client-id", app_credentials.client_id),
    )
    assert "state=" in url and "code_challenge=" in url

    landed = approve(url, biller_id, follow=True)

    output = _finish(process)
    assert landed.status_code == 200 and "close this window" in landed.text
    assert process.returncode == 0, output
    assert f"Logged in: block '{name}' saved (sandbox" in output
    block = BillerCredentials.load(name)
    register_block_secrets(block)
    tokens = block.read()
    assert app_credentials.client_secret not in output and tokens.refresh_token not in output
    assert (tokens.rotation, block.client_id, block.redirect_uri) == (
        0,
        app_credentials.client_id,
        None,
    )
    me = httpx.get(
        f"{admin.root}/api/biller", headers={"Authorization": f"Bearer {tokens.access_token}"}
    )
    assert me.json()["id"] == biller_id
    # The run forms list the new block at once, not only after the next `billops deploy`.
    with get_client(sync_client=True) as client:
        schema = client.read_deployment(deployment_id).parameter_openapi_schema
    assert name in schema["properties"]["biller"]["enum"]


def test_login_with_a_pasted_redirect_checks_the_state(
    prefect_api: str, admin: SandboxAdmin, billops_home: Path
) -> None:
    registered = "https://app.example/callback"
    app_credentials = admin.create_app(redirect_uri=registered)
    biller_id = admin.create_biller("Paste Login Ltd")
    name = unique_name("paste")
    args = (
        *("--block", name, "--environment", "sandbox", "--base-url", f"{admin.root}/api"),
        *("--client-id", app_credentials.client_id, "--redirect-uri", registered, "--paste"),
    )

    process, url = _start_login(billops_home, app_credentials.client_secret, *args)
    redirect = approve(url, biller_id, follow=False).headers["location"]
    register_secret(httpx.URL(redirect).params["code"])
    forged = str(httpx.URL(redirect).copy_merge_params({"state": "forged"}))
    output = _finish(process, forged + "\n")
    assert process.returncode == 1
    assert "state does not match" in output

    process, url = _start_login(billops_home, app_credentials.client_secret, *args)
    redirect = approve(url, biller_id, follow=False).headers["location"]
    output = _finish(process, redirect + "\n")
    assert process.returncode == 0, output
    block = BillerCredentials.load(name)
    register_block_secrets(block)
    assert block.redirect_uri == registered


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["--environment", "sandbox", "--client-id", "c"], "base_url is required"),
        (["--environment", "production", "--client-id", "c"], "--login-url is required"),
        (["--environment", "staging"], "--client-id is required"),
    ],
)
def test_login_options_are_checked_before_anything_is_sent(
    prefect_api: str, runner: CliRunner, args: list[str], message: str
) -> None:
    result = runner.invoke(
        app,
        ["auth", "login", "--block", unique_name(), "--no-browser", *args],
        env={"BILLOPS_CLIENT_SECRET": "secret-from-env-1"},
    )
    assert result.exit_code == 2
    assert message in result.output


def test_commands_on_a_missing_block_say_how_to_create_it(
    prefect_api: str, runner: CliRunner
) -> None:
    name = unique_name()
    for command in ("status", "recover", "revoke"):
        result = runner.invoke(app, ["auth", command, "--block", name])
        assert result.exit_code == 1
        assert f"no credential block named '{name}'" in result.output
        assert f"billops auth login --block {name}" in result.output


def test_recover_saves_the_journal_record_into_the_block_then_removes_it(
    prefect_api: str, admin: SandboxAdmin, runner: CliRunner, billops_home: Path
) -> None:
    name = unique_name("rec")
    block, _ = save_connected_block(admin, name)
    # A worker rotated the token and was killed before its save: only the journal has it.
    with block.get_oauth_client() as oauth:
        rotated = oauth.refresh(block.read().refresh_token).to_token_set(1)
    register_secret(rotated.refresh_token)
    register_secret(rotated.access_token)
    journal = RecoveryDirectory(billops_home / "recovery")
    journal.record(name, rotated)
    path = journal.path(name)
    assert stat.S_IMODE(path.stat().st_mode) == 0o600

    result = runner.invoke(app, ["auth", "recover", "--block", name])

    assert result.exit_code == 0, result.output
    assert f"Restored rotation 1 from the recovery journal into block '{name}'" in result.output
    assert BillerCredentials.load(name).read() == rotated
    assert journal.state(name).empty and path.stat().st_size == 0  # the record is gone
    assert rotated.refresh_token not in result.output

    again = runner.invoke(app, ["auth", "recover", "--block", name])
    assert again.exit_code == 1 and "no recovery record for block" in again.output

    journal.record(name, rotated)  # a record the block already holds
    refused = runner.invoke(app, ["auth", "recover", "--block", name])
    assert refused.exit_code == 1 and "Restore anyway with --force" in refused.output
    assert journal.state(name).tokens == rotated


def test_recover_from_a_folder_says_it_is_a_folder(
    prefect_api: str, admin: SandboxAdmin, runner: CliRunner, billops_home: Path, tmp_path: Path
) -> None:
    """It said "no recovery file at DIR", as if the path did not exist."""
    name = unique_name("dir")
    block, _ = save_connected_block(admin, name)
    register_block_secrets(block)

    result = runner.invoke(app, ["auth", "recover", "--block", name, "--file", str(tmp_path)])

    assert result.exit_code == 1, result.output
    assert "is a folder: give the recovery file in it" in " ".join(result.output.split())
    assert BillerCredentials.load(name).read() == block.read()  # nothing restored


def test_recover_names_a_refresh_that_died_in_flight(
    prefect_api: str, admin: SandboxAdmin, runner: CliRunner, billops_home: Path
) -> None:
    name = unique_name("flight")
    block, _ = save_connected_block(admin, name)
    register_block_secrets(block)
    RecoveryDirectory(billops_home / "recovery").record_intent(name, from_rotation=0)

    result = runner.invoke(app, ["auth", "recover", "--block", name])

    assert result.exit_code == 1
    assert "the refresh from rotation 0 started by pid" in result.output
    assert "no token set was received" in result.output


def test_revoke_kills_the_refresh_token(
    prefect_api: str, admin: SandboxAdmin, runner: CliRunner
) -> None:
    name = unique_name("rev")
    block, _ = save_connected_block(admin, name)
    register_block_secrets(block)
    before = block.read()

    result = runner.invoke(app, ["auth", "revoke", "--block", name])

    assert result.exit_code == 0, result.output
    after = BillerCredentials.load(name).read()
    assert (after.access_token, after.rotation) == (None, before.rotation + 1)
    with block.get_oauth_client() as oauth, pytest.raises(OAuthError) as refused:
        oauth.refresh(after.refresh_token)
    assert refused.value.is_invalid_grant


def test_setup_registers_types_and_removes_legacy_lock_limits(
    prefect_api: str, admin: SandboxAdmin, runner: CliRunner, billops_home: Path
) -> None:
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from prefect.exceptions import ObjectNotFound

    name = unique_name("setup")
    block, _ = save_connected_block(admin, name)
    register_block_secrets(block)
    legacy = f"billops-token-refresh-{name}"
    with get_client(sync_client=True) as client:  # what an earlier version created
        client.create_global_concurrency_limit(GlobalConcurrencyLimitCreate(name=legacy, limit=1))

    first = runner.invoke(app, ["setup", "--no-ledger"])
    second = runner.invoke(app, ["setup", "--no-ledger"])

    assert first.exit_code == 0, first.output
    assert second.exit_code == 0, second.output
    assert f"legacy refresh lock {legacy} (a Prefect concurrency limit): removed" in first.output
    assert legacy not in second.output
    assert "block type billops-biller-credentials: registered" in second.output
    with get_client(sync_client=True) as client, pytest.raises(ObjectNotFound):
        client.read_global_concurrency_limit_by_name(legacy)


def test_status_names_the_biller_and_fails_once_the_credential_is_dead(
    prefect_api: str, short_admin: SandboxAdmin, runner: CliRunner
) -> None:
    name = unique_name("stat")
    block, tokens = save_connected_block(short_admin, name, with_access_token=False)

    alive = runner.invoke(app, ["auth", "status", "--block", name])

    register_block_secrets(block)
    assert alive.exit_code == 0, alive.output
    assert f"biller:         {tokens.biller_id} (Biller {name})" in alive.output
    assert "rotation:       1" in alive.output and "status:         ok" in alive.output
    assert block.read().refresh_token not in alive.output

    assert runner.invoke(app, ["auth", "revoke", "--block", name]).exit_code == 0
    dead = runner.invoke(app, ["auth", "status", "--block", name])
    assert dead.exit_code == 1
    assert "DEAD" in dead.output and f"billops auth login --block {name}" in dead.output


def test_setup_also_migrates_the_ledger(
    prefect_api: str, runner: CliRunner, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"

    result = runner.invoke(app, ["setup", "--ledger-url", url])

    assert result.exit_code == 0, result.output
    assert "ledger: schema up to date" in result.output
    assert (tmp_path / "ledger.db").stat().st_size > 0


HOLD_LOCK = """
import sys, time
from blocks._lock import refresh_lock_for
lock = refresh_lock_for(sys.argv[1])
assert lock.try_acquire(10)
print("held", flush=True)
time.sleep(120)
"""


def test_unlock_refuses_a_live_holder_and_finds_the_lock_free_once_it_is_killed(
    prefect_api: str, admin: SandboxAdmin, runner: CliRunner, billops_home: Path
) -> None:
    name = unique_name("unlock")
    block, _ = save_connected_block(admin, name)
    register_block_secrets(block)
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD_LOCK, f"billops-token-refresh-{name}"],
        cwd=ROOT,
        env=cli_env(billops_home),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"

        refused = runner.invoke(app, ["auth", "unlock", "--block", name])
        status = runner.invoke(app, ["auth", "status", "--block", name])

        assert refused.exit_code == 1, refused.output
        assert f"pid {holder.pid} on host" in refused.output and "is running" in refused.output
        assert status.exit_code == 0, status.output  # a usable token needs no lock
        assert f"refresh lock:   held by pid {holder.pid} on host" in status.output
    finally:
        holder.kill()
        holder.wait(10)

    freed = runner.invoke(app, ["auth", "unlock", "--block", name])
    assert freed.exit_code == 0, freed.output
    assert "nobody holds it" in freed.output and freed.output.rstrip().endswith("free")
    status = runner.invoke(app, ["auth", "status", "--block", name])
    assert "refresh lock:   free" in status.output
    assert "recovery:       nothing pending" in status.output


@pytest.mark.parametrize("args", [[], ["--block", "a", "--platform-block", "b"]])
def test_unlock_needs_exactly_one_block(runner: CliRunner, args: list[str]) -> None:
    result = runner.invoke(app, ["auth", "unlock", *args])
    assert result.exit_code == 2
    assert "give exactly one of --block NAME or --platform-block NAME" in result.output
