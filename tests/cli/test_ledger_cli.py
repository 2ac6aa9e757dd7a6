"""``billops db upgrade`` and ``billops ledger status|resolve`` through typer's CliRunner."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest
from typer.testing import CliRunner

from billops import ledger_cli
from billops.cli import app
from ledger import (
    Ledger,
    Operation,
    OperationState,
    Resolution,
    Resolver,
    current_revision,
    head_revision,
)

runner = CliRunner()


def test_db_upgrade_creates_then_reports_up_to_date(ledger_url: str) -> None:
    first = runner.invoke(app, ["db", "upgrade", "--url", ledger_url])
    assert first.exit_code == 0, first.output
    head = head_revision()
    assert f"from schema none to {head}" in first.output
    assert current_revision(ledger_url) == head
    again = runner.invoke(app, ["db", "upgrade", "--url", ledger_url])
    assert again.exit_code == 0 and f"is up to date (schema {head})" in again.output


def test_db_upgrade_uses_billops_home_by_default(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path / "home"))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    result = runner.invoke(app, ["db", "upgrade"])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "home" / "ledger.db").is_file()


def test_db_upgrade_with_a_bad_url_names_it_without_the_password() -> None:
    result = runner.invoke(
        app, ["db", "upgrade", "--url", "postgresql://ops:hunter2@127.0.0.1:1/x"]
    )
    assert result.exit_code == 1
    assert "cannot connect to the ledger at postgresql+psycopg://ops:***@127.0.0.1:1/x" in (
        result.output
    )
    assert "hunter2" not in result.output


def test_status_refuses_a_ledger_never_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none.db'}"
    result = runner.invoke(app, ["ledger", "status", "--url", url])
    assert result.exit_code == 1, result.output
    assert "there is no ledger at" in result.output and "billops setup" in result.output
    assert not (tmp_path / "none.db").exists()


def test_resolve_refuses_a_ledger_never_created(tmp_path: Path) -> None:
    url = f"sqlite:///{tmp_path / 'none.db'}"
    result = runner.invoke(app, ["ledger", "resolve", "--biller", "acme", "--url", url])
    assert result.exit_code == 1, result.output
    assert "there is no ledger at" in result.output
    assert not (tmp_path / "none.db").exists()


def test_status_of_an_empty_ledger(ledger: Ledger) -> None:
    result = runner.invoke(app, ["ledger", "status", "--url", ledger.url])
    assert result.exit_code == 0, result.output
    assert "intended 0, sent 0, confirmed 0, failed 0, unknown 0" in result.output
    assert "Nothing unsettled." in result.output


def test_status_lists_unsettled_operations(ledger_url: str) -> None:
    with Ledger(ledger_url) as ledger:
        for key in ("bulk_import:b1:aaa", "bulk_import:b1:bbb", "bulk_import:b2:ccc", "done"):
            ledger.record_intent(
                key=key,
                kind="bulk_import",
                biller=key.split(":")[1] if ":" in key else "b1",
                request_digest="d",
            )
        ledger.claim("bulk_import:b1:aaa", worker="w")
        ledger.mark_unknown("bulk_import:b1:aaa", error="ReadTimeout: no answer in 30 s\nretry")
        ledger.mark_confirmed("done")
        ledger.set_biller_block("b1", "acme")  # what every run of block "acme" records
    result = runner.invoke(app, ["ledger", "status", "--url", ledger_url, "--biller", "acme"])
    assert result.exit_code == 0, result.output
    lines = result.output.splitlines()
    assert "intended 1, sent 0, confirmed 1, failed 0, unknown 1" in result.output
    assert "2 unsettled" in result.output
    header = next(line for line in lines if line.startswith("STATE"))
    assert header.split() == [
        "STATE",
        "KIND",
        "BILLER",
        "TRIES",
        "UPDATED",
        "(UTC)",
        "REMOTE",
        "ID",
        "KEY",
        "ERROR",
    ]
    unknown = next(line for line in lines if "bulk_import:b1:aaa" in line)
    assert unknown.startswith("unknown") and "ReadTimeout: no answer in 30 s retry" in unknown
    assert not any("b2:ccc" in line or " done" in line for line in lines)


@pytest.fixture
def no_resolver() -> Iterator[None]:
    """The CLI registers the service's resolver at import; tests swap it and put it back."""
    registered = ledger_cli._resolver_factory
    ledger_cli.set_resolver_factory(None)
    yield
    ledger_cli.set_resolver_factory(registered)


def test_resolve_with_an_unknown_block_names_it(ledger: Ledger, prefect: None) -> None:
    result = runner.invoke(
        app, ["ledger", "resolve", "--biller", "no-such-block", "--url", ledger.url]
    )
    assert result.exit_code == 1
    assert "no-such-block" in result.output and "Traceback" not in result.output


def test_resolve_without_a_service_resolver_says_so(ledger: Ledger, no_resolver: None) -> None:
    result = runner.invoke(app, ["ledger", "resolve", "--biller", "acme", "--url", ledger.url])
    assert result.exit_code == 1
    assert "not connected to the service" in result.output
    assert "billops run poll-import-jobs --biller acme" in result.output


def test_resolve_records_what_the_resolver_says(ledger: Ledger, no_resolver: None) -> None:
    ledger.record_intent(key="k1", kind="bulk_import", biller="biller-id-1", request_digest="d")
    ledger.claim("k1", worker="crashed")

    @contextmanager
    def factory(block: str, open_ledger: Ledger) -> Iterator[tuple[str, Resolver]]:
        assert block == "acme-block" and open_ledger.url == ledger.url

        def resolve(op: Operation) -> Resolution:
            return Resolution(OperationState.CONFIRMED, remote_id="job-9", note="job COMPLETED")

        yield "biller-id-1", resolve

    ledger_cli.set_resolver_factory(factory)
    result = runner.invoke(
        app, ["ledger", "resolve", "--biller", "acme-block", "--url", ledger.url]
    )
    assert result.exit_code == 0, result.output
    assert "sent -> confirmed" in result.output and "k1" in result.output
    assert "1 of 1 settled, 0 errors." in result.output
    op = ledger.get("k1")
    assert op is not None and op.state == OperationState.CONFIRMED and op.remote_id == "job-9"
