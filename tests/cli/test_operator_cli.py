"""What a person at a terminal meets: one clear line for a mistake (the traceback only with
``--verbose``), an undo preview that names what it would void, four eyes on undo, ``ledger
status`` listing what is not settled, ``billops audit``, and a one-command sandbox login."""

from __future__ import annotations

import getpass
import json
import re
import subprocess
import sys
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from billops.cli import app
from ledger import FileState, Ledger
from tests.support.billops_server import ROOT
from tests.support.credentials import subprocess_env
from tests.support.import_billers import ImportBiller, write_rows

runner = CliRunner()


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def _billops(*args: str, **env: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "billops.cli", *args],
        env=subprocess_env(PYTHONPATH=str(ROOT), **env),
        capture_output=True,
        text=True,
        timeout=300,
    )


def _imported_run(biller: ImportBiller, file: Path) -> str:
    code, out = _invoke(
        "run", "import-payment-requests", str(file), "--biller", biller.block, "--apply"
    )
    assert code == 0, out
    return out.split("run: ")[1].split()[0]


def test_an_empty_or_binary_file_is_one_line_and_verbose_shows_the_traceback(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    empty = tmp_path / "empty.csv"
    empty.write_bytes(b"")
    binary = tmp_path / "binary.csv"
    binary.write_bytes(bytes(range(256)) * 8)

    for file in (empty, binary):
        done = _billops(
            "run", "import-payment-requests", str(file), "--biller", import_biller.block
        )
        output = done.stdout + done.stderr
        assert done.returncode in (1, 3), output
        assert "Traceback" not in output, output
        assert file.name in output, output

    verbose = _billops(
        "--verbose", "run", "import-payment-requests", str(empty), "--biller", import_biller.block
    )
    assert "Traceback" in verbose.stdout + verbose.stderr


def test_unknown_blocks_are_one_clear_line(prefect: None, ledger_home: Path) -> None:
    for args in (
        ("undo-import", "some-run", "--biller", "nosuch"),
        ("ledger", "resolve", "--biller", "nosuch"),
    ):
        code, out = _invoke(*args)
        assert code == 1, out
        assert "Traceback" not in out and len(out.strip().splitlines()) <= 3, out
        assert "nosuch" in out


def test_an_error_escaping_a_command_is_one_line_unless_verbose(
    prefect: None, tmp_path: Path
) -> None:
    demo = tmp_path / "sandbox-demo.json"
    demo.write_text(
        json.dumps(
            {"clientId": "c", "clientSecret": "s", "billers": [{"billerId": "b1", "name": "Acme"}]}
        )
    )
    args = [
        "sandbox",
        "login",
        "--biller",
        "Acme",
        "--url",
        "http://127.0.0.1:9",
        "--credentials",
        str(demo),
    ]

    code, out = _invoke(*args)
    assert code == 1 and "Traceback" not in out and out.startswith("error: "), out
    assert "--verbose" in out

    code, out = _invoke("--verbose", *args)
    assert code == 1 and "Traceback" in out


def test_the_undo_preview_names_what_it_would_void(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    run_id = _imported_run(import_biller, write_rows(tmp_path / "undo.csv", import_biller, 3))

    code, out = _invoke("undo-import", run_id, "--biller", import_biller.block)

    assert code == 0, out
    lines = [line for line in out.splitlines() if "WOULD_VOID" in line]
    assert len(lines) == 3, out
    for n, line in enumerate(sorted(lines, key=lambda text: text.split("R-")[1])):
        _, name = import_biller.customers[n % len(import_biller.customers)]
        assert re.search(r"\bPR-\d+\b", line), line
        assert name[:28] in line and f"R-{n:05d}" in line, line
    assert "£10.00" in out and "£11.01" in out


def test_four_eyes_refuses_an_undo_approved_by_the_person_running_it(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    run_id = _imported_run(import_biller, write_rows(tmp_path / "eyes.csv", import_biller, 2))
    monkeypatch.setenv("BILLOPS_UNDO_APPROVER_MUST_DIFFER", "true")
    me = getpass.getuser()

    code, out = _invoke(
        "undo-import",
        run_id,
        "--biller",
        import_biller.block,
        "--apply",
        "--approve-as",
        me,
        "--reason",
        "mine",
    )

    assert code == 1 and "someone else" in out, out
    assert {r["status"] for r in import_biller.payment_requests()} != {"VOID"}
    code, out = _invoke(
        "undo-import",
        run_id,
        "--biller",
        import_biller.block,
        "--apply",
        "--approve-as",
        f"{me} colleague",
        "--reason",
        "checked",
    )
    assert code == 0 and out.count("VOIDED") == 2, out


@pytest.fixture
def busy_ledger(ledger_url: str) -> Iterator[Ledger]:
    """A ledger with one biller's file still importing and writes of two runs not settled."""
    with Ledger(ledger_url) as ledger:
        ledger.set_biller_block("b-acme", "acme")
        ledger.set_biller_block("b-other", "other")
        ledger.record_file(
            sha256="a" * 64,
            biller="b-acme",
            kind="payment_requests",
            name="june.csv",
            size=10,
            folder="/in",
            run_id="run-1",
            state=FileState.IMPORTING,
            report_path="/in/june.report.csv",
        )
        ledger.record_file(
            sha256="b" * 64,
            biller="b-other",
            kind="payment_requests",
            name="other.csv",
            size=10,
            folder="/in",
            run_id="run-9",
            state=FileState.IMPORTING,
        )
        for key, run in (("k1", "run-1"), ("k2", "run-1"), ("k3", "run-2")):
            ledger.record_intent(
                key=key, kind="bulk_import", biller="b-acme", request_digest="d", run_id=run
            )
        ledger.record_intent(
            key="k9", kind="bulk_import", biller="b-other", request_digest="d", run_id="run-9"
        )
        yield ledger


def test_ledger_status_lists_the_files_and_runs_not_settled_of_a_block(busy_ledger: Ledger) -> None:
    code, out = _invoke("ledger", "status", "--url", busy_ledger.url, "--biller", "acme")

    assert code == 0, out
    assert "june.csv" in out and "run run-1" in out and "/in/june.report.csv" in out
    assert "run run-1: intended 2" in out and "run run-2: intended 1" in out
    assert "other.csv" not in out and "run-9" not in out


def test_audit_lists_approvals_refusals_and_undos_by_block_and_date(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        ledger.set_biller_block("b-acme", "acme")
        ledger.audit(
            actor="Dana",
            action="approve:delete-missing payment requests",
            subject="acme:june.csv",
            reason="June sync",
            approver="Dana",
            run_id="run-1",
            details={"channel": "ui-form"},
        )
        ledger.audit(
            actor="Sam",
            action="refuse:record bank payments",
            subject="acme:statement.csv",
            reason="not reconciled",
            run_id="run-2",
            details={"channel": "ui-form"},
        )
        ledger.audit(
            actor="Lee",
            action="approve:undo-import",
            subject="run:run-0",
            reason="wrong month",
            approver="Lee",
            run_id="run-0",
            details={"channel": "cli"},
        )
        ledger.record_intent(
            key="k0", kind="bulk_import", biller="b-acme", request_digest="d", run_id="run-0"
        )
        ledger.audit(
            actor="Kim", action="approve:x", subject="other:file.csv", reason="other biller"
        )

    code, out = _invoke("audit", "--url", ledger_url, "--biller", "acme")
    assert code == 0, out
    for text in (
        "approve:delete-missing",
        "Dana",
        "ui-form",
        "refuse:record bank payments",
        "not reconciled",
        "approve:undo-import",
        "cli",
        "wrong month",
    ):
        assert text in out, (text, out)
    assert "Kim" not in out and "3 entries." in out

    tomorrow = (datetime.now(UTC) + timedelta(days=1)).date().isoformat()
    code, out = _invoke("audit", "--url", ledger_url, "--since", tomorrow)
    assert code == 0 and "No audit entries" in out
    assert _invoke("audit", "--url", ledger_url, "--since", "last week")[0] == 2


def test_logging_in_to_the_sandbox_takes_one_command(
    prefect: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    home = tmp_path / "home"
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    serving = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "billops.cli",
            "sandbox",
            "serve",
            "--port",
            "0",
            "--seed-demo",
            "--db",
            f"sqlite:///{tmp_path / 'sbx.db'}",
        ],
        env=subprocess_env(BILLOPS_HOME=str(home), PYTHONPATH=str(ROOT)),
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert serving.stdout is not None
        ready = serving.stdout.readline()
        url = ready.split("sandbox ready: ")[1].strip()
        seeded = json.loads((home / "sandbox-demo.json").read_text())
        biller = seeded["billers"][0]

        code, out = _invoke("sandbox", "login", "--biller", biller["name"], "--url", url)

        assert code == 0, out
        block = out.split("credential block '")[1].split("'")[0]
        from blocks import BillerCredentials

        client = BillerCredentials.load_named(block).get_client()
        try:
            assert str(client.biller.retrieve().id) == biller["billerId"]
        finally:
            client.close()
        assert seeded["clientSecret"] not in out
    finally:
        serving.terminate()
        serving.wait(30)


def test_printed_paths_are_never_wrapped(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    folder = tmp_path / "a-folder-with-a-rather-long-name-as-finance-shares-have"
    folder.mkdir()
    file = write_rows(folder / "payment-requests-for-the-month-of-june.csv", import_biller, 2)

    code, out = _invoke(
        "run", "import-payment-requests", str(file), "--biller", import_biller.block
    )

    assert code == 0, out
    report = folder / "payment-requests-for-the-month-of-june.dry-run.report.csv"
    assert len(str(report)) > 80 and str(report) in out.splitlines()[-1], out
