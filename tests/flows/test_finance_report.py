"""What finance asks of an import's report: each payment request's number, status and payment
link; totals per outcome; the dry run's report kept beside the applied run's."""

from __future__ import annotations

import csv
import re
from decimal import Decimal
from pathlib import Path

from flows.payment_requests import import_payment_requests
from tests.support.import_billers import ImportBiller, write_rows


def _rows(path: Path) -> list[dict[str, str]]:
    with path.open(newline="", encoding="utf-8-sig") as handle:
        return list(csv.DictReader(handle))


def test_the_report_names_each_request_and_keeps_the_dry_runs(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "finance.csv", import_biller, 3)

    dry = import_payment_requests(file=file, biller=import_biller.block)
    applied = import_payment_requests(file=file, biller=import_biller.block, dry_run=False)

    assert dry.report.report_csv.name == "finance.dry-run.report.csv"
    assert applied.report.report_csv.name == "finance.report.csv"
    assert {r["outcome"] for r in _rows(dry.report.report_csv)} == {"WOULD_IMPORT"}
    held = {r["id"]: r for r in import_biller.payment_requests()}
    for row in _rows(applied.report.report_csv):
        request = held[row["payment_request_id"]]
        assert re.fullmatch(r"PR-\d+", row["payment_request_no"])
        assert row["payment_request_no"] == request["paymentRequestNo"]
        assert row["payment_request_status"] == request["status"]
        assert row["payment_link"] == request["paymentLink"]["url"]  # type: ignore[index]
    assert applied.report.amount_by_status == {"CREATED": Decimal("33.03")}
    assert dry.report.amount_by_status == {"WOULD_IMPORT": Decimal("33.03")}
