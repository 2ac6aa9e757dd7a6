"""A platform biller's year as the benchmark generates it (``bench/payout_fixtures.py``: payouts of
card and direct-debit payments, late failures deducted from the next payout, a statement of
payout credits among customers' transfers), reconciled end to end on a fresh SQLite ledger.

What the checks decide is pinned against the files themselves, read independently with pandas:
every payout matched, every deduction explained by the payment it takes back, collected,
deductions and paid out equal to the files' own sums, nothing left in transit. The same period
reconciled again from the ledger alone (every item read back from its payout's block) writes the
same reconciliation, exceptions and journal, byte for byte. A short year by default; the
benchmark's size under ``make soak``.
"""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

import pandas as pd
import pytest

from bench.payout_fixtures import write_year
from ledger import Ledger
from tasks.bank_payments import classify, line_keys, read_statement
from tasks.payouts import MATCHED, read_payout_report
from tasks.payouts._journal import journal_lines
from tasks.payouts._reconcile import counts, reconcile
from tasks.payouts._scope import choose_period, gather
from tasks.payouts.report import ReportFiles, report_files, write_reports
from tasks.payouts.settings import PayoutSettings
from tasks.payouts.steps import keep_report, keep_results, remember_bank_credits

BILLER = "year"


def _pennies(values: pd.Series) -> pd.Series:
    return values.map(lambda text: int(Decimal(text) * 100))


def _reconciled(
    ledger: Ledger, documents: pd.DataFrame, report: object, period: tuple, files: ReportFiles
) -> tuple[dict[str, int], object, pd.DataFrame]:
    scope = gather(ledger, lambda i, r, s: documents, BILLER, period, report=report, window=3)
    found = reconcile(scope)
    money = keep_results(ledger, BILLER, found, run_id=files.reconciliation.parent.name)
    write_reports(found, list(journal_lines(found, PayoutSettings().journal)), files)
    return counts(found), money, found.items


def _year(folder: Path, *, payouts: int, items: int, bank_lines: int) -> None:
    year = write_year(folder, payouts=payouts, items=items, bank_lines=bank_lines)
    lines = pd.read_csv(year.report, dtype=str, keep_default_na=False)
    amounts = _pennies(lines["Item amount"])
    deductions = lines[lines["Item type"] == "DEDUCTION"]
    bank = pd.read_csv(year.statement, dtype=str, keep_default_na=False)
    credited = _pennies(bank.loc[bank["Counterparty"] == "ADFIN", "Amount"]).sum()
    assert len(deductions) > 0, "the generated year has late failures to deduct"

    with Ledger(f"sqlite:///{folder / 'ledger.db'}") as ledger:
        report = read_payout_report(year.report)
        statement = read_statement(year.statement)
        keys = line_keys(statement.lines)
        classes = classify(statement.lines)
        remember_bank_credits(ledger, BILLER, statement.lines, classes, keys, statement.sha256)
        assert keep_report(ledger, BILLER, report).new == payouts
        period = choose_period(ledger, BILLER, report, None, None)
        assert period is not None
        with_report = report_files(folder / "with-report", "year")
        found, money, checked = _reconciled(ledger, year.documents, report, period, with_report)
        again = report_files(folder / "from-ledger", "year")
        found_again, money_again, _ = _reconciled(ledger, year.documents, None, period, again)
        assert keep_report(ledger, BILLER, report).unchanged == payouts

    assert found == found_again == {MATCHED: payouts}
    assert money.collected == amounts[lines["Item type"] == "PAYMENT"].sum()
    assert money.deductions == -amounts[lines["Item type"] == "DEDUCTION"].sum()
    assert money.paid_out == credited
    assert (money.opening, money.closing) == (0, 0)
    assert (money_again.collected, money_again.paid_out) == (money.collected, money.paid_out)
    assert bool(checked["ok"].all())
    notes = {
        (row.payout_id, row.payment_id, row.kind): row.note
        for row in checked.itertuples(index=False)
        if row.note
    }
    for row in deductions.itertuples(index=False):
        note = notes[(row[0], row[7], "DEDUCTION")]  # Payout ID, Payment ID
        assert note.startswith(f"takes back payment {row[7]} of "), note
    taken_back = [n for (_, _, kind), n in notes.items() if kind == "PAYMENT"]
    assert len(taken_back) == len(deductions)
    assert all(n.startswith("its payment failed after it was paid out") for n in taken_back)
    for name in ("reconciliation", "exceptions", "journal"):
        first, second = getattr(with_report, name), getattr(again, name)
        assert first.read_bytes() == second.read_bytes(), name
    assert len(pd.read_csv(with_report.exceptions)) == 0


def test_a_short_year_is_matched_and_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path / "home"))
    _year(tmp_path, payouts=40, items=16_000, bank_lines=4_000)


@pytest.mark.slow
def test_the_benchmarks_year_is_matched_and_read_back_the_same(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path / "home"))
    _year(tmp_path, payouts=252, items=201_600, bank_lines=100_000)
