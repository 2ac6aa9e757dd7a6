"""``billops sandbox serve`` as a process: the ready line, a working server, a clean SIGTERM stop;
and state that survives a restart, on SQLite and PostgreSQL."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

import httpx

from tests.support.sandbox_admin import running_sandbox

BILLOPS = os.path.join(os.path.dirname(sys.executable), "billops")


def test_serve_prints_one_ready_line_and_stops_cleanly_on_sigterm(tmp_path) -> None:
    process = subprocess.Popen(
        [BILLOPS, "sandbox", "serve", "--port", "0", "--db", f"sqlite:///{tmp_path}/s.db"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BILLOPS_HOME": str(tmp_path / "home")},
    )
    try:
        line = process.stdout.readline().strip()
        assert line.startswith("sandbox ready: http://127.0.0.1:"), line
        root = line.removeprefix("sandbox ready: ")
        assert httpx.get(f"{root}/api/biller").status_code == 401
        assert httpx.get(f"{root}/api/openapi.json").status_code == 200

        process.send_signal(signal.SIGTERM)
        out, err = process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert process.returncode == 0, err
    assert out == "", "the ready line must be the only output"
    assert "Traceback" not in err


def test_serve_reports_a_port_in_use(tmp_path) -> None:
    with running_sandbox(f"sqlite:///{tmp_path}/a.db") as busy:
        port = busy.root.rsplit(":", 1)[1]
        result = subprocess.run(
            [BILLOPS, "sandbox", "serve", "--port", port, "--db", f"sqlite:///{tmp_path}/b.db"],
            capture_output=True,
            text=True,
            timeout=60,
        )
    assert result.returncode != 0
    assert "Address already in use" in result.stdout + result.stderr
    assert "sandbox ready" not in result.stdout


def test_cli_does_not_import_the_sandbox_until_asked() -> None:
    code = (
        "import sys, billops.cli; "
        "print(sorted(m for m in sys.modules if m.split('.')[0] == 'sandbox'))"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], capture_output=True, text=True, timeout=60
    )
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "[]"


def test_state_survives_a_restart(database_url) -> None:
    with running_sandbox(database_url) as first:
        tokens = first.connect_biller("Durable Ltd")
        first.advance_clock(seconds=3600)
        offset = first.http.get("/_sandbox/clock").json()["offsetSeconds"]
    time.sleep(0.1)
    with running_sandbox(database_url) as second:
        assert second.api.get("/biller", headers=tokens.headers).json()["name"] == "Durable Ltd"
        assert second.http.get("/_sandbox/clock").json()["offsetSeconds"] >= offset
        rotated = second.token(
            tokens.app, grant_type="refresh_token", refresh_token=tokens.refresh_token
        )
        assert rotated.status_code == 200
    with running_sandbox(database_url) as third:
        replay = third.token(
            tokens.app, grant_type="refresh_token", refresh_token=tokens.refresh_token
        )
        assert replay.json()["error"] == "invalid_grant"


def test_serve_clock_start_pins_the_clock_and_a_bad_date_is_refused(tmp_path) -> None:
    command = [BILLOPS, "sandbox", "serve", "--port", "0", "--db", f"sqlite:///{tmp_path}/s.db"]
    bad = subprocess.run(
        [*command, "--clock-start", "05/01/2026"], capture_output=True, text=True, timeout=60
    )
    assert bad.returncode == 2
    assert "--clock-start" in bad.stderr
    process = subprocess.Popen(
        [*command, "--clock-start", "2026-01-05"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env={**os.environ, "BILLOPS_HOME": str(tmp_path / "home")},
    )
    try:
        root = process.stdout.readline().strip().removeprefix("sandbox ready: ")
        clock = httpx.get(f"{root}/_sandbox/clock").json()
        process.send_signal(signal.SIGTERM)
        process.communicate(timeout=15)
    finally:
        if process.poll() is None:
            process.kill()
            process.communicate()
    assert clock["now"].startswith("2026-01-05T06:0")
