"""Only ``billops setup`` / ``billops db upgrade`` create a ledger: a run refuses a missing or
damaged one before sending anything, and a run whose ledger disappears fails instead of reporting
success (then the next run refuses to start a fresh ledger)."""

from __future__ import annotations

import sqlite3
from pathlib import Path

import pytest
from typer.testing import CliRunner

from billops.cli import app
from flows.payment_requests import import_payment_requests
from ledger import LedgerReplaced, LedgerSchemaError
from tasks.common.progress import add_listener
from tests.support.import_billers import ImportBiller, write_rows

runner = CliRunner()


def test_an_import_refuses_a_missing_ledger_and_creates_none(
    import_biller: ImportBiller, empty_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "june.csv", import_biller, 3)

    with pytest.raises(LedgerSchemaError, match="there is no ledger at .*billops setup"):
        import_payment_requests(file=file, biller=import_biller.block, dry_run=False)

    assert import_biller.jobs_submitted() == 0
    assert not (empty_home / "ledger.db").exists()


def test_the_cli_refuses_a_missing_ledger_with_exit_1(
    import_biller: ImportBiller, empty_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "june.csv", import_biller, 3)
    block = import_biller.block

    ran = runner.invoke(app, ["run", "import-payment-requests", str(file), "--biller", block])
    undone = runner.invoke(app, ["undo-import", "some-run", "--biller", block])

    assert ran.exit_code == 1 and "there is no ledger at" in ran.output, ran.output
    assert undone.exit_code == 1 and "there is no ledger at" in undone.output, undone.output
    assert "Traceback" not in ran.output + undone.output
    assert not (empty_home / "ledger.db").exists()


def test_a_missing_table_is_found_before_anything_is_sent(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    with sqlite3.connect(ledger_home / "ledger.db") as connection:
        connection.execute("DROP TABLE ledger_items")
    file = write_rows(tmp_path / "june.csv", import_biller, 3)

    with pytest.raises(LedgerSchemaError, match="lacks its table.*ledger_items"):
        import_payment_requests(file=file, biller=import_biller.block, dry_run=False)

    assert import_biller.jobs_submitted() == 0


def test_a_ledger_deleted_mid_run_fails_the_run_and_the_next_run_refuses(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "june.csv", import_biller, 30)
    ledger_file = ledger_home / "ledger.db"

    def delete_the_ledger(label: str, done: int, total: int) -> None:
        if done == 1:  # the first job settled: the run is well under way
            for suffix in ("", "-wal", "-shm"):
                Path(f"{ledger_file}{suffix}").unlink(missing_ok=True)

    remove = add_listener(delete_the_ledger)
    try:
        with pytest.raises((LedgerReplaced, LedgerSchemaError)):
            import_payment_requests(
                file=file, biller=import_biller.block, dry_run=False, chunk_size=10
            )
    finally:
        remove()

    with pytest.raises(LedgerSchemaError, match="there is no ledger at"):
        import_payment_requests(file=file, biller=import_biller.block, dry_run=False)
    assert not ledger_file.exists()
