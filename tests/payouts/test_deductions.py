"""Which payment a deduction takes back (``docs/service.md`` §6 Payouts, late failures), on
hand-written payout reports (no Prefect, no sandbox): the history of payouts comes in the order
the job gathers it (the period's payouts first, then the ledger's), an invoice paid, deducted,
paid again and deducted again, a deduction naming a payment billops has not seen, and a payment
deducted twice."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path

import pandas as pd
import pytest

from tasks.payouts import ITEM_MISMATCH, Reconciliation, Scope, read_payout_report, reconcile
from tasks.payouts._credits import credits_frame
from tasks.payouts._profiles import SHIPPED, load_report_profile
from tasks.payouts._service import DOCUMENT_COLUMNS

HEADER = (
    "Payout ID,Bank reference,Arrival date,Payout amount,Item type,Invoice number,"
    "Payment request number,Payment ID,Customer name,Item amount"
)
COVERAGE = (date(2027, 2, 22), date(2027, 3, 23))  # po-4 is in transit


def _items(folder: Path, name: str, rows: Sequence[str]) -> pd.DataFrame:
    path = folder / name
    path.write_text("\r\n".join([HEADER, *rows]) + "\r\n", encoding="utf-8")
    sandbox = load_report_profile(SHIPPED / "sandbox.yaml", origin="shipped")
    return read_payout_report(path, profile=sandbox)


def _reconcile(folder: Path, period: Sequence[str], earlier: Sequence[str]) -> Reconciliation:
    """The period's report reconciled with ``earlier`` payouts as the ledger's history, as
    ``_scope.gather`` puts them: the period's items first."""
    report = _items(folder, "period.csv", period)
    before = _items(folder, "earlier.csv", earlier).items.assign(line=0)
    known = pd.DataFrame(
        [
            ("invoice", "INV-1", "id-1", "UNPAID", 5_000, 0, date(2027, 3, 20)),  # failed late
            ("invoice", "INV-8", "id-8", "SETTLED", 6_000, 6_000, date(2027, 3, 8)),
            ("invoice", "INV-9", "id-9", "SETTLED", 6_000, 6_000, date(2027, 3, 22)),
        ],
        columns=list(DOCUMENT_COLUMNS),
    )
    scope = Scope(
        first=date(2027, 3, 22),
        last=date(2027, 3, 31),
        payouts=report.payouts,
        items=report.items,
        credits=credits_frame([]),
        coverage=COVERAGE,
        documents=known,
        history=pd.concat([report.items, before], ignore_index=True),
        window=3,
    )
    return reconcile(scope)


def _notes(reconciliation: Reconciliation) -> dict[tuple[str, str], tuple[bool, str]]:
    return {
        (str(r["payout_id"]), str(r["kind"])): (bool(r["ok"]), str(r["note"]))
        for r in reconciliation.items.to_dict("records")
    }


@pytest.mark.parametrize("ids", [("", "", ""), ("pay-1", "pay-3", "")], ids=["none", "payments"])
def test_a_deduction_takes_back_the_latest_payment_paid_out_before_it(
    tmp_path: Path, ids: tuple[str, str, str]
) -> None:
    """INV-1 paid out on 1 March, deducted on 8 March, paid again on 15 March and deducted
    again on 22 March (deductions name only the invoice, as "Failed payment deduction for
    invoice [n]" does; the payments with or without their ids): the 22 March deduction takes
    back the 15 March payment, not the 1 March one the 8 March deduction already took back."""
    first, again, deduction = ids
    period = [
        "po-4,ADFIN-PO-000004,2027-03-22,10.00,PAYMENT,INV-9,,,Jane,60.00",
        f"po-4,ADFIN-PO-000004,2027-03-22,10.00,DEDUCTION,INV-1,,{deduction},Jane,-50.00",
    ]
    earlier = [
        f"po-1,ADFIN-PO-000001,2027-03-01,50.00,PAYMENT,INV-1,,{first},Jane,50.00",
        "po-2,ADFIN-PO-000002,2027-03-08,10.00,PAYMENT,INV-8,,,Jane,60.00",
        f"po-2,ADFIN-PO-000002,2027-03-08,10.00,DEDUCTION,INV-1,,{deduction},Jane,-50.00",
        f"po-3,ADFIN-PO-000003,2027-03-15,50.00,PAYMENT,INV-1,,{again},Jane,50.00",
    ]

    reconciliation = _reconcile(tmp_path, period, earlier)

    ok, note = _notes(reconciliation)[("po-4", "DEDUCTION")]
    assert ok, note
    assert "paid out in payout ADFIN-PO-000003 on 2027-03-15" in note


def test_a_deduction_naming_a_payment_is_not_paired_with_another_payment(tmp_path: Path) -> None:
    """The deduction takes back pay-2, whose payout billops has not seen; pay-1 of the same
    invoice and amount was paid out and is not what failed."""
    period = [
        "po-4,ADFIN-PO-000004,2027-03-22,10.00,PAYMENT,INV-9,,pay-9,Jane,60.00",
        "po-4,ADFIN-PO-000004,2027-03-22,10.00,DEDUCTION,INV-1,,pay-2,Jane,-50.00",
    ]
    earlier = ["po-1,ADFIN-PO-000001,2027-03-01,50.00,PAYMENT,INV-1,,pay-1,Jane,50.00"]

    reconciliation = _reconcile(tmp_path, period, earlier)

    ok, note = _notes(reconciliation)[("po-4", "DEDUCTION")]
    assert not ok
    assert "a payment billops has not seen paid out" in note
    assert "pay-1" not in note
    assert reconciliation.payouts.set_index("payout_id").at["po-4", "state"] == ITEM_MISMATCH


def test_a_payment_deducted_twice_is_wrong(tmp_path: Path) -> None:
    """pay-1 was paid out once and taken back on 8 March; a second deduction of pay-1 takes
    £50.00 the biller already gave back."""
    period = [
        "po-4,ADFIN-PO-000004,2027-03-22,10.00,PAYMENT,INV-9,,pay-9,Jane,60.00",
        "po-4,ADFIN-PO-000004,2027-03-22,10.00,DEDUCTION,INV-1,,pay-1,Jane,-50.00",
    ]
    earlier = [
        "po-1,ADFIN-PO-000001,2027-03-01,50.00,PAYMENT,INV-1,,pay-1,Jane,50.00",
        "po-2,ADFIN-PO-000002,2027-03-08,10.00,PAYMENT,INV-8,,pay-8,Jane,60.00",
        "po-2,ADFIN-PO-000002,2027-03-08,10.00,DEDUCTION,INV-1,,pay-1,Jane,-50.00",
    ]

    reconciliation = _reconcile(tmp_path, period, earlier)

    ok, note = _notes(reconciliation)[("po-4", "DEDUCTION")]
    assert not ok
    assert "already taken back in payout ADFIN-PO-000002 on 2027-03-08" in note
    assert reconciliation.payouts.set_index("payout_id").at["po-4", "state"] == ITEM_MISMATCH
