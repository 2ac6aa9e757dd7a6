"""``billops template payment-requests``: a starter file that billops itself reads cleanly."""

from __future__ import annotations

from pathlib import Path

import pytest
from typer.testing import CliRunner

from billops.cli import app
from tasks.payment_requests import CustomerDirectory, parse_payment_request_file
from tests.support.finance_files import BILLER, TODAY

runner = CliRunner()


def test_the_starter_file_imports_cleanly_for_its_example_customers(tmp_path: Path) -> None:
    target = tmp_path / "drop" / "requests.csv"

    result = runner.invoke(app, ["template", "payment-requests", str(target)])

    assert result.exit_code == 0, result.output
    assert f"wrote {target}" in result.output
    customers = CustomerDirectory.from_records(
        [("cus_a", None, "Acme Trading Ltd"), ("cus_b", "CUST-0042", "Someone")]
    )
    parsed = parse_payment_request_file(target, customers=customers, today=TODAY, biller=BILLER)
    assert parsed.problems == []
    assert [row.customer_id for row in parsed.rows] == ["cus_a", "cus_b"]
    assert parsed.encoding == "utf-8-sig"


def test_an_existing_file_is_not_overwritten_without_force(tmp_path: Path) -> None:
    target = tmp_path / "mine.csv"
    target.write_text("my own work\n", encoding="utf-8")

    refused = runner.invoke(app, ["template", "payment-requests", str(target)])

    assert refused.exit_code == 1
    assert "already exists" in refused.output and "--force" in refused.output
    assert target.read_text(encoding="utf-8") == "my own work\n"

    forced = runner.invoke(app, ["template", "payment-requests", str(target), "--force"])

    assert forced.exit_code == 0
    assert target.read_text(encoding="utf-8-sig").startswith("Customer,Amount,Description")


def test_the_default_name_is_written_in_the_current_folder(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.chdir(tmp_path)

    result = runner.invoke(app, ["template", "payment-requests"])

    assert result.exit_code == 0, result.output
    assert (tmp_path / "payment-requests.csv").is_file()
