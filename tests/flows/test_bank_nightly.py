"""The nightly's bank step: statements waiting in a biller's inbox folder are processed as the
inbox does, with nobody to approve: previewed only, unless the biller's bank settings let exact,
full matches be recorded on their own (never a part payment)."""

from __future__ import annotations

import os
import time
from datetime import date, timedelta
from decimal import Decimal
from pathlib import Path
from typing import cast

from flows.bank_inbox import import_waiting_bank_statements
from flows.nightly import BillerResult, nightly
from tests.support.bank_statements import BankBiller, make_bank_biller
from tests.support.sandbox_admin import SandboxAdmin

HEADER = "Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes\n"


def _drop(home: Path, biller: BankBiller) -> Path:
    """A Starling statement paying the first invoice in full and the second in part, dropped in
    the biller's inbox folder (named after its block) long enough ago to be complete."""
    first, second = biller.documents["INV-1"], biller.documents["INV-2"]
    day = (date.today() - timedelta(days=1)).strftime("%d/%m/%Y")
    part = (Decimal(str(second["dueAmount"])) / 3).quantize(Decimal("0.01"))
    payer = str(first["customer"]["name"]).upper()[:18]
    other = str(second["customer"]["name"]).upper()[:18]
    rows = [
        f"{day},{payer},{first['invoiceNo']},FASTER PAYMENT,{first['dueAmount']},100.00,INCOME,",
        f"{day},{other},{second['invoiceNo']},FASTER PAYMENT,{part},100.00,INCOME,",
    ]
    folder = home / "inbox" / biller.block
    folder.mkdir(parents=True)
    path = folder / "statement.csv"
    path.write_text(HEADER + "\n".join(rows) + "\n", encoding="utf-8")
    old = time.time() - 60
    os.utime(path, (old, old))
    return path


def test_without_the_billers_leave_a_waiting_statement_is_only_previewed(
    prefect: None, admin: SandboxAdmin, ledger_home: Path
) -> None:
    biller = make_bank_biller(admin, seed=41, invoices=2, requests=0, customers=2)
    path = _drop(ledger_home, biller)
    before = biller.paid()

    done = import_waiting_bank_statements(biller=biller.block)

    assert done == [("statement.csv", "dry run")]
    assert biller.paid() == before
    (kept,) = (ledger_home / "inbox" / biller.block / "processed").glob("*/statement.csv")
    assert kept.with_name("statement.review.csv").exists()
    assert not path.exists()


def test_with_the_billers_leave_exact_full_matches_are_recorded_in_the_nightly_run(
    prefect: None, admin: SandboxAdmin, ledger_home: Path
) -> None:
    biller = make_bank_biller(admin, seed=42, invoices=2, requests=0, customers=2)
    settings = ledger_home / "bank-settings" / f"{biller.block}.yaml"
    settings.parent.mkdir()
    settings.write_text("auto_apply_exact: true\n", encoding="utf-8")
    _drop(ledger_home, biller)
    before = biller.paid()

    results = nightly(billers=[biller.block])

    (line,) = cast(list[BillerResult], results)
    assert line.ok and line.bank == "statement.csv: completed", line
    paid = biller.paid()
    assert paid["INV-1"] - before["INV-1"] == Decimal(str(biller.documents["INV-1"]["dueAmount"]))
    assert paid["INV-2"] == before["INV-2"]  # a part payment waits for a person
