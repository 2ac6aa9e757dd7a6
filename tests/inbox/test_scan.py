"""``inbox-scan`` in process: what each biller's settings let a dropped file do, and the files
that go to ``failed/`` (unreadable settings, a payout report its job refuses)."""

from __future__ import annotations

from datetime import date
from pathlib import Path
from typing import Any

from flows.inbox import inbox_scan
from tests.inbox.files import BANK_HEADER, bank_statement, payment_requests
from tests.support.billing import WIDGET
from tests.support.import_billers import ImportBiller, make_biller
from tests.support.sandbox_admin import SandboxAdmin


def _report(folder: Path, name: str) -> str:
    [found] = list(folder.rglob(f"{name}.inbox.txt"))
    return found.read_text()


def _owed_invoice(biller: ImportBiller) -> dict[str, Any]:
    """An invoice the biller sent one of its customers (unpaid)."""
    customer_id, _name = biller.customers[0]
    body = {"customer": {"id": customer_id}, "items": [WIDGET]}
    created = biller.api.post("/invoices", json=body)
    assert created.status_code == 201, created.text
    path = f"/invoices/{created.json()['id']}:activate"
    activated = biller.api.put(path, json={"collectionMethod": "ONE_TIME_PAYMENT"})
    assert activated.status_code == 200, activated.text
    return dict(activated.json())


def _paying(path: Path, invoice: dict[str, Any], payer: str) -> Path:
    """A statement whose one credit pays ``invoice`` exactly, quoting its number."""
    path.parent.mkdir(parents=True, exist_ok=True)
    line = (
        f"{date.today().isoformat()},CREDIT,{payer},{invoice['invoiceNo']},"
        f"{invoice['dueAmount']},1000.00"
    )
    path.write_bytes((BANK_HEADER + line + "\r\n").encode())
    return path


def test_a_bank_statement_waits_for_an_approval_unless_exact_matches_may_go_alone(
    biller: ImportBiller, admin: SandboxAdmin, home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "inbox"
    other = make_biller(admin)  # its bank settings let exact, full matches be recorded alone
    (home / "bank-settings").mkdir()
    (home / "bank-settings" / f"{other.block}.yaml").write_text("auto_apply_exact: true\n")
    waits, alone = _owed_invoice(biller), _owed_invoice(other)
    _paying(root / biller.block / "bank" / "waits.csv", waits, biller.customers[0][1])
    _paying(root / other.block / "bank" / "alone.csv", alone, other.customers[0][1])

    inbox_scan(root=root, settle_seconds=0, return_state=True)

    waiting = _report(root / biller.block / "processed", "waits.csv")
    assert "outcome:  previewed, awaiting approval" in waiting, waiting
    assert "--approve-as" in waiting and "nothing was recorded" in waiting
    recorded = _report(root / other.block / "processed", "alone.csv")
    assert "awaiting approval" not in recorded and "failed" not in recorded, recorded
    assert biller.api.get(f"/invoices/{waits['id']}").json()["status"] != "PAID"
    assert other.api.get(f"/invoices/{alone['id']}").json()["status"] == "PAID"
    other.api.close()


def test_settings_decide_what_a_dropped_file_may_do(
    biller: ImportBiller, home: Path, tmp_path: Path
) -> None:
    root = tmp_path / "inbox"
    auto = root / "auto-apply"
    auto.mkdir(parents=True)
    (auto / "inbox.yaml").write_text(f"block: {biller.block}\nbank_apply_exact: true\n")
    bank_statement(auto / "bank" / "statement.csv", 1)
    broken = root / "broken"
    broken.mkdir()
    (broken / "inbox.yaml").write_text("block: [oops\n")
    payment_requests(broken / "payment-requests" / "list.csv", biller, "X")
    payout = root / biller.block / "payouts" / "payouts.csv"
    payout.parent.mkdir(parents=True)
    payout.write_text("Payout,Amount\np-1,10.00\n")

    state = inbox_scan(root=root, settle_seconds=0, return_state=True)

    assert state.name == "Scanned" and "3 file(s) taken" in str(state.message)
    applied = _report(auto / "processed", "statement.csv")
    assert "previewed" not in applied and "outcome:  nothing to record" in applied, applied
    refused = _report(broken / "failed", "list.csv")
    assert "outcome:  settings unreadable" in refused and "inbox.yaml line" in refused
    unusable = _report(root / biller.block / "failed", "payouts.csv")  # not a payout report
    assert "kind:     payouts" in unusable and "outcome:  rejected" in unusable, unusable
    assert biller.payment_requests() == []  # the broken folder's file was not imported
