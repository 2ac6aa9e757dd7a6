"""The payout job's steps: read and keep a report, keep a statement's payout credits, gather the
scope, reconcile, keep the results, report.

Pure composition of the package's functions; the ``@task`` wrappers are batch-sized (one task per
step of the whole run, never one per payout or item). Reading and reconciling are deterministic,
so no task retries; the client already retries what the service may answer differently a moment
later (429, 5xx).
"""

from __future__ import annotations

from datetime import date
from pathlib import Path

import pyarrow as pa
from prefect import task
from prefect.cache_policies import NO_CACHE

from ledger import Ledger
from ledger.payouts import BankCoverage, PayoutCredit, PayoutStored
from ledger.settings import BillopsSettings
from tasks.common.reports import artifact_key, publish_summary, publish_table
from tasks.common.session import BillerSession
from tasks.payouts._balance import Balance, balance
from tasks.payouts._chart import draw_balance
from tasks.payouts._credits import payout_credits, payout_line_credits
from tasks.payouts._items import ledger_items, records
from tasks.payouts._journal import journal_lines
from tasks.payouts._reconcile import Reconciliation, counts, reconcile
from tasks.payouts._report import PayoutReport, read_payout_report
from tasks.payouts._scope import choose_period, from_the_service, gather
from tasks.payouts.report import (
    ReportFiles,
    report_files,
    summary_markdown,
    table_rows,
    write_reports,
    write_rollup,
)
from tasks.payouts.settings import PayoutSettings


def keep_report(ledger: Ledger, biller_id: str, report: PayoutReport) -> PayoutStored:
    """Keep the report's payouts and items (a payout seen before with the same items: kept)."""
    payouts = records(report.payouts, report.sha256)
    items = report.ledger_items if report.ledger_items is not None else ledger_items(report.items)
    return ledger.record_payout_report(biller_id, payouts, items)


BankCredits = tuple[list[PayoutCredit], BankCoverage | None]


def bank_credits(lines: pa.Table, coverage: BankCoverage) -> BankCredits:
    """A statement's payout credits and the days it covers (its payout lines as the
    bank-payments job finds them for this job, handed over by the flow), not kept yet: a run
    reads every input before it keeps any."""
    return payout_line_credits(lines, coverage)


def keep_bank_credits(ledger: Ledger, biller_id: str, credits: BankCredits) -> int:
    """Keep what :func:`bank_credits` found; returns how many credits were new."""
    return ledger.record_payout_credits(biller_id, *credits)


def remember_bank_credits(
    ledger: Ledger, biller_id: str, lines: pa.Table, classes: pa.Array, keys: pa.Array, sha256: str
) -> int:
    """Keep a statement's payout credits and the days it covers at once (the bank import's
    use: its normalised lines, classes and line keys); returns how many credits were new."""
    return keep_bank_credits(ledger, biller_id, payout_credits(lines, classes, keys, sha256))


def reconcile_scope(
    session: BillerSession,
    report: PayoutReport | None,
    period: tuple[date, date],
    settings: PayoutSettings,
) -> Reconciliation:
    """Gather the scope (ledger, report, the service's records) and run the three checks."""
    scope = gather(
        session.ledger,
        from_the_service(session.client),
        session.biller_id,
        period,
        report=report,
        window=settings.window_working_days,
    )
    return reconcile(scope)


def keep_results(
    ledger: Ledger, biller_id: str, reconciliation: Reconciliation, *, run_id: str
) -> Balance:
    """Keep every result (a rerun updates, never adds) and roll the period's money up."""
    ledger.record_payout_results(biller_id, reconciliation.results(), run_id=run_id)
    first = reconciliation.first
    opening = ledger.payout_net_before(biller_id, first) - ledger.paid_out_before(biller_id, first)
    return balance(reconciliation, opening)


def reports_folder(biller: str, last: date, run_id: str) -> Path:
    """``$BILLOPS_HOME/reports/payouts/<biller>/<last day>-<run>/`` (no report file given)."""
    home = BillopsSettings().home
    return home / "reports" / "payouts" / biller / f"{last.isoformat()}-{run_id[:8]}"


def publish(
    reconciliation: Reconciliation,
    money: Balance,
    settings: PayoutSettings,
    *,
    biller: str,
    report_path: Path | None,
    run_id: str,
) -> tuple[ReportFiles, list[str]]:
    """The files (next to the report, or under the biller's reports folder), the picture, and
    the artifacts on the run (keyed by biller and file); returns the files and the summary."""
    if report_path is not None:
        files = report_files(report_path.parent, report_path.stem)
    else:
        files = report_files(reports_folder(biller, reconciliation.last, run_id), None)
    journal = list(journal_lines(reconciliation, settings.journal))
    write_reports(reconciliation, journal, files)
    write_rollup(money, files)
    title = f"{biller}: payouts and bank credits, {money.first} to {money.last}"
    draw_balance(money, files.picture, title=title)
    found = counts(reconciliation)
    summary = summary_markdown(reconciliation, money, found, files, biller=biller)
    key = artifact_key("payouts", biller, report_path.stem if report_path else "ledger")
    publish_summary(summary, key=f"{key}-summary", description="Payout reconciliation")
    publish_table(
        table_rows(reconciliation),
        key=f"{key}-payouts",
        description="Every payout of the period, with its checks",
        where_all=str(files.reconciliation),
    )
    return files, summary


read_report_task = task(name="read-payout-report", cache_policy=NO_CACHE)(read_payout_report)
keep_report_task = task(name="keep-payout-report", cache_policy=NO_CACHE)(keep_report)
keep_credits_task = task(name="keep-bank-credits", cache_policy=NO_CACHE)(keep_bank_credits)
period_task = task(name="choose-period", cache_policy=NO_CACHE)(choose_period)
reconcile_task = task(name="reconcile-payouts", cache_policy=NO_CACHE)(reconcile_scope)
keep_results_task = task(name="keep-payout-results", cache_policy=NO_CACHE)(keep_results)
publish_task = task(name="payout-reports", cache_policy=NO_CACHE)(publish)
