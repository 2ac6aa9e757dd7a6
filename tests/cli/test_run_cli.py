"""``billops run ...``, ``billops undo-import`` and ``billops ledger`` from the command line, in
process (typer's runner) against the session's Prefect API and a real sandbox."""

from __future__ import annotations

import csv
from pathlib import Path

from typer.testing import CliRunner

from billops.cli import app
from ledger import Operation
from tests.support.import_billers import ImportBiller, write_rows

runner = CliRunner()


def _operations(biller: ImportBiller) -> list[Operation]:
    from tasks.common.session import open_ledger

    ledger = open_ledger()
    try:
        return ledger.operations(biller=biller.biller_id)
    finally:
        ledger.close()


def _invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def test_dry_run_then_apply_then_undo(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "cli.csv", import_biller, 5)

    code, out = _invoke(
        "run", "import-payment-requests", str(file), "--biller", import_biller.block
    )
    assert code == 0, out
    assert "dry_run" in out and "WOULD_IMPORT" in out
    assert import_biller.jobs_submitted() == 0

    code, out = _invoke(
        "run", "import-payment-requests", str(file), "--biller", import_biller.block, "--apply"
    )
    assert code == 0, out
    assert "CREATED        5" in out
    with (tmp_path / "cli.report.csv").open(newline="", encoding="utf-8-sig") as handle:
        run_ids = {row["outcome"] for row in csv.DictReader(handle)}
    assert run_ids == {"CREATED"}
    run_id = out.split("run: ")[1].split()[0]
    (op,) = _operations(import_biller)
    assert op.run_id == run_id

    code, out = _invoke("undo-import", run_id, "--biller", import_biller.block, "--apply")
    assert code == 1 and "needs an approval" in out
    code, out = _invoke(
        "undo-import",
        run_id,
        "--biller",
        import_biller.block,
        "--apply",
        "--approve-as",
        "Dana Finance",
        "--reason",
        "wrong month",
    )
    assert code == 0, out
    assert out.count("VOIDED") == 5
    statuses = {r["status"] for r in import_biller.payment_requests()}
    assert statuses == {"VOID"}


def test_bad_rows_exit_3_and_a_missing_file_is_a_usage_error(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "bad.csv", import_biller, 2)
    with file.open("a", newline="", encoding="utf-8") as handle:
        csv.writer(handle).writerow(["Nobody Ltd", "5.00", "x", "BAD-9", ""])

    code, out = _invoke(
        "run", "import-payment-requests", str(file), "--biller", import_biller.block, "--apply"
    )
    assert code == 3, out
    assert "rejected" in out and "failed rows" in out

    code, out = _invoke(
        "run", "import-payment-requests", str(tmp_path / "absent.csv"), "--biller", "x"
    )
    assert code == 2


def test_an_unknown_block_fails_with_a_reason_and_no_traceback(
    prefect: None, ledger_home: Path, tmp_path: Path
) -> None:
    file = tmp_path / "any.csv"
    file.write_text("Customer,Amount,Description,Reference\n", encoding="utf-8")

    code, out = _invoke("run", "import-payment-requests", str(file), "--biller", "no-such-block")

    assert code == 1
    assert "failed:" in out and "no-such-block" in out
    assert "billops auth login --block no-such-block" in out
    assert "Traceback" not in out


def test_ledger_status_lists_nothing_unsettled_after_a_clean_import(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "status.csv", import_biller, 3)
    assert (
        _invoke(
            "run", "import-payment-requests", str(file), "--biller", import_biller.block, "--apply"
        )[0]
        == 0
    )

    code, out = _invoke("ledger", "status")

    assert code == 0, out
    assert "intended 0, sent 0, confirmed 1, failed 0, unknown 0" in out
    assert "Nothing unsettled." in out
