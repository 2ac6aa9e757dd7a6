"""``BILLOPS_*`` settings: where state lives, and the bulk-import column mapping."""

from __future__ import annotations

from pathlib import Path

import pytest

from ledger.settings import BillopsSettings
from tasks.payment_requests import write_service_csv


def test_home_moves_every_default_path(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path))
    monkeypatch.delenv("BILLOPS_LEDGER_URL", raising=False)
    settings = BillopsSettings()
    assert settings.ledger_database_url == f"sqlite:///{tmp_path / 'ledger.db'}"
    assert settings.recovery_dir == tmp_path / "recovery"


def test_the_bulk_import_columns_come_from_json(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(
        "BILLOPS_BULK_IMPORT_COLUMNS",
        '{"external_id": "ref_key", "customer_id": "customer", "description": "text", '
        '"amount": "amount_gbp"}',
    )
    mapping = BillopsSettings().bulk_import_columns
    assert mapping is not None
    header = write_service_csv([], mapping=mapping).decode("utf-8").splitlines()[0]
    assert header.split(",") == ["ref_key", "customer", "text", "amount_gbp"]


def test_a_bad_column_mapping_is_refused_naming_the_field() -> None:
    with pytest.raises(ValueError, match="unknown field"):
        write_service_csv([], mapping={"amount_in_pence": "x"})
