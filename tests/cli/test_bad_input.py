"""Bad input at a terminal: each mistake is one line that names what is wrong and what to do, with
the documented exit code (``docs/conventions.md`` §5: 1 failed, 2 usage error) — never a
traceback, never exit 0, never a secret."""

from __future__ import annotations

import socket
import subprocess
import sys
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest
from pydantic import SecretStr
from typer.testing import CliRunner

from billops.cli import app
from tests.support.billops_server import ROOT
from tests.support.credentials import subprocess_env

runner = CliRunner()
UNREACHABLE_API = "http://127.0.0.1:9/api"


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


@pytest.fixture
def unreachable_prefect() -> Iterator[None]:
    """A Prefect API nothing listens on (port 9, discard: refused at once)."""
    from prefect.settings import PREFECT_API_URL, temporary_settings

    with temporary_settings(updates={PREFECT_API_URL: UNREACHABLE_API}):
        yield


@pytest.mark.parametrize(
    "args",
    [
        ("run", "poll-import-jobs", "--biller", "any"),
        ("auth", "status", "--block", "any"),
        ("setup", "--no-ledger"),
    ],
)
def test_an_unreachable_prefect_api_is_named_with_what_to_do(
    unreachable_prefect: None, billops_home: Path, args: tuple[str, ...]
) -> None:
    code, out = _invoke(*args)

    assert code == 1, out
    assert "Traceback" not in out, out
    assert f"cannot reach the Prefect API at {UNREACHABLE_API}" in out, out
    assert "PREFECT_API_URL" in out and "billops server start" in out, out


def test_an_unreachable_address_is_named_without_its_query(tmp_path: Path) -> None:
    """The sandbox login's first request is the consent page, whose query carries the PKCE
    challenge and state: the message names the server only."""
    demo = tmp_path / "sandbox-demo.json"
    demo.write_text(
        '{"clientId": "c", "clientSecret": "s3cret-app", "billers": '
        '[{"billerId": "b1", "name": "Acme"}]}'
    )

    code, out = _invoke(
        "sandbox", "login", "--biller", "Acme", "--url", "http://127.0.0.1:9",
        "--credentials", str(demo),
    )  # fmt: skip

    assert code == 1 and out.startswith("error: cannot reach http://127.0.0.1:9 ("), out
    assert "auth/login" not in out and "state=" not in out, out
    assert "s3cret-app" not in out


@pytest.mark.parametrize("port", ["-1", "70000"])
def test_a_sandbox_port_out_of_range_is_a_usage_error(billops_home: Path, port: str) -> None:
    code, out = _invoke("sandbox", "serve", "--port", port)

    assert code == 2, out
    assert "--port" in out and "Traceback" not in out, out


@pytest.mark.parametrize("url", ["garbage://x", "not a url", "postgresql+nodriver://u:secret@h/db"])
def test_a_sandbox_database_url_sqlalchemy_cannot_open_is_a_usage_error(
    billops_home: Path, url: str
) -> None:
    """It used to start and die on SQLAlchemy's NoSuchModuleError; the URL is not echoed (it
    may hold a password)."""
    code, out = _invoke("sandbox", "serve", "--db", url, "--port", "0")

    words = " ".join(out.replace("│", " ").split())
    assert code == 2, out
    assert "--db" in words and "not a database URL" in words and "Traceback" not in out, out
    assert "secret" not in out and "ready" not in out, out


def test_a_demo_folder_that_is_a_file_is_a_usage_error(billops_home: Path, tmp_path: Path) -> None:
    """It used to start the demo and fail on FileExistsError."""
    not_a_folder = tmp_path / "demo.txt"
    not_a_folder.write_text("")

    code, out = _invoke("demo", "--folder", str(not_a_folder))

    words = " ".join(out.replace("│", " ").split())
    assert code == 2, out
    assert "--folder" in words and "demo.txt is a file" in words, out


@pytest.mark.parametrize("wait", ["0", "-5"])
def test_a_login_wait_that_cannot_be_waited_is_a_usage_error(
    unreachable_prefect: None, billops_home: Path, wait: str
) -> None:
    """Refused before the login page is printed: nothing to open, nothing to wait for."""
    code, out = _invoke(
        "auth", "login", "--block", "any", "--environment", "sandbox",
        "--base-url", "http://127.0.0.1:9/api", "--client-id", "c", "--no-browser",
        "--wait", wait,
    )  # fmt: skip

    assert code == 2, out
    assert "--wait" in out and "Open this address" not in out, out


@pytest.mark.parametrize("command", ["status", "watch"])
def test_an_inbox_root_that_is_a_file_is_a_usage_error(
    billops_home: Path, tmp_path: Path, command: str
) -> None:
    """A file given as --root used to read as an empty inbox (exit 0), or as a watcher 'ready'
    that then died on FileExistsError."""
    not_a_folder = tmp_path / "inbox.csv"
    not_a_folder.write_text("Customer,Amount\n")

    code, out = _invoke("inbox", command, "--root", str(not_a_folder))

    words = " ".join(out.replace("│", " ").split())  # typer's error box wraps long paths
    assert code == 2, out
    assert "--root" in words and "inbox.csv is a file" in words and "ready" not in words, out


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def test_ui_home_that_is_a_file_is_a_usage_error(tmp_path: Path) -> None:
    """In a subprocess: a home that passes would have `billops ui` become Prefect's server."""
    not_a_folder = tmp_path / "prefect-home.txt"
    not_a_folder.write_text("")

    done = subprocess.run(
        [sys.executable, "-m", "billops.cli", "ui", "--home", str(not_a_folder),
         "--port", str(_free_port())],
        env=subprocess_env(PYTHONPATH=str(ROOT)),
        capture_output=True,
        text=True,
        timeout=120,
    )  # fmt: skip

    output = done.stdout + done.stderr
    assert done.returncode == 2, output
    assert "--home" in output and "Traceback" not in output, output


@pytest.fixture
def offline_block(prefect: None) -> str:
    """A biller credential block whose service is never reached (nothing here calls it)."""
    from blocks import BillerCredentials

    name = f"offline-{uuid.uuid4().hex[:8]}"
    BillerCredentials(
        environment="sandbox",
        base_url="http://127.0.0.1:9/api",
        client_id="c",
        client_secret=SecretStr("s3cret-client"),
        refresh_token=SecretStr("r3fresh-token"),
    ).save(name)
    return name


@pytest.mark.parametrize("apply", [False, True])
def test_undo_of_a_run_the_ledger_never_recorded_fails_and_names_the_run(
    offline_block: str, ledger_home: Path, apply: bool
) -> None:
    """A mistyped run id used to read as 'nothing to undo' with exit 0 (and, with --apply, left
    an approval on record for a run that never was)."""
    approval = ["--apply", "--approve-as", "Someone Else", "--reason", "typo test"] if apply else []

    code, out = _invoke("undo-import", "no-such-run", "--biller", offline_block, *approval)

    assert code == 1, out
    assert "no-such-run" in out and "nothing to undo" not in out, out
    assert "s3cret-client" not in out and "r3fresh-token" not in out


def test_a_nightly_run_of_a_block_that_does_not_exist_fails_before_the_night(
    prefect: None, ledger_home: Path
) -> None:
    """It used to start the night and fail after the biller's retry."""
    code, out = _invoke("run", "nightly", "--biller", "no-such-biller")

    assert code == 1, out
    assert "no biller credential block named 'no-such-biller'" in out, out
    assert "billops auth login --block no-such-biller" in out, out


@pytest.mark.parametrize("command", ["list", "serve"])
def test_a_platform_block_that_does_not_exist_says_how_to_create_it(
    prefect: None, ledger_home: Path, command: str
) -> None:
    """Prefect's 'ValueError: Unable to find block document named ...' named no option."""
    result = runner.invoke(
        app, ["webhooks", command, "--platform", "no-such-platform"], env={"COLUMNS": "200"}
    )

    assert result.exit_code == 2, result.output
    assert "no platform credential block named 'no-such-platform'" in result.output
    assert "Billops Platform Credentials" in result.output
    assert "Traceback" not in result.output


def test_setup_refuses_a_ledger_url_it_would_not_use(billops_home: Path) -> None:
    """--no-ledger --ledger-url URL ignored the URL and said 'setup complete'."""
    result = runner.invoke(
        app,
        ["setup", "--no-ledger", "--ledger-url", "sqlite:////tmp/x.db"],
        env={"COLUMNS": "200"},
    )

    assert result.exit_code == 2, result.output
    assert "--no-ledger skips the ledger" in result.output
