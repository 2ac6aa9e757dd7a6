"""Reconcile payouts: keep the report and the statement, check every payout three ways, report.

Read-only toward the service (it only reads invoices and payment requests), so no approval.
"""

from __future__ import annotations

from datetime import date, datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State

from ledger.payouts import BankCoverage
from tasks.bank_payments import (
    ClassifyRules,
    StatementCredits,
    StatementRefused,
    UnknownLayout,
    payout_lines,
    read_statement_credits,
)
from tasks.bank_payments.settings import load_settings as load_bank_settings
from tasks.common.outcome import end_run
from tasks.common.session import open_biller
from tasks.common.workers import current_run_id
from tasks.payouts import PayoutReportRefused, as_date, attention, counts
from tasks.payouts.outcome import nothing, reconciled, rejected
from tasks.payouts.settings import load_payout_settings
from tasks.payouts.steps import (
    BankCredits,
    bank_credits,
    keep_credits_task,
    keep_report_task,
    keep_results_task,
    period_task,
    publish_task,
    read_report_task,
    reconcile_task,
)

LONDON = ZoneInfo("Europe/London")


@task(name="read-bank-credits", cache_policy=NO_CACHE)
def read_bank_credits(block: str, path: Path, latest: date | None) -> BankCredits:
    """The statement read and classified by the bank-payments job (the biller's bank settings
    say what a payout credit looks like): its payout credits and the days it covers, not kept
    yet.

    A line dated after today is refused as future-dated, as the bank import does; "today" is the
    payout report's last day or the period's end when later (a sandbox's clock may run ahead)."""
    today = datetime.now(LONDON).date()
    statement = read_statement_credits(path, today=max(today, latest) if latest else today)
    return statement_credits(statement, load_bank_settings(block).classify)


def statement_credits(statement: StatementCredits, rules: ClassifyRules | None) -> BankCredits:
    """A statement read for its credits by the bank-payments job (every line checked as the
    bank import checks it, only the credits classified, only the payout credits keyed:
    ``tasks/bank_payments/_payouts.py``) as the payout job keeps it."""
    coverage = BankCoverage(statement.sha256, statement.first, statement.last, statement.count)
    return bank_credits(payout_lines(statement, rules), coverage)


@flow(name="reconcile-payouts", log_prints=False)
def reconcile_payouts(
    biller: str,
    payout_report: Path | None = None,
    bank_file: Path | None = None,
    period_start: date | None = None,
    period_end: date | None = None,
) -> State[Any]:
    """Tie every payout to its payments, its bank credit and the service's records; say what is
    in transit and why anything differs.

    Ends Reconciled (every payout matched or in transit), Exceptions found (the exceptions file
    says what needs a person), Rejected (a file refused; both files are read before either is
    kept, so nothing of either is kept) or Nothing to reconcile. The files (reconciliation,
    exceptions, journal, picture) go next to the payout report, or under
    $BILLOPS_HOME/reports/payouts/<biller>/; the summary and the payouts table are the run's
    artifacts. Reads the service, never writes to it.

    Args:
        biller: Name of the biller's credential block (`billops auth login --block NAME`
            creates one).
        payout_report: Full path of the payout report (the console's payout export, one row
            per payout item) on the worker's disk; empty to reconcile what the ledger holds.
        bank_file: Full path of a bank statement on the worker's disk (any layout the bank
            import reads); empty to use the statements the ledger holds.
        period_start: First arrival date to report; empty for the report's first day (or the
            last 31 days of what the ledger holds).
        period_end: Last arrival date to report; empty for the report's last day (or the last
            day the ledger knows of).
    """
    run_id = current_run_id()
    settings = load_payout_settings(biller)
    logger = get_run_logger()
    with open_biller(biller) as session:
        report, credits = None, None
        try:  # both files read (and refused) before either is kept: nothing half-kept
            if payout_report is not None:
                report = read_report_task(payout_report)
            if bank_file is not None:
                last_payout = as_date(report.last_day) if report and report.last_day else None
                latest = max((d for d in (last_payout, period_end) if d), default=None)
                credits = read_bank_credits(biller, bank_file, latest)
        except (PayoutReportRefused, StatementRefused, UnknownLayout) as exc:
            logger.warning("%s", exc)
            said = str(exc) if "nothing was kept" in str(exc) else f"{exc}; nothing was kept"
            outcome, run = rejected(biller, run_id, said)
            return end_run(outcome, data=run)
        if report is not None and payout_report is not None:
            stored = keep_report_task(session.ledger, session.biller_id, report)
            logger.info(
                "%s: %s payout(s) new, %s changed", payout_report.name, stored.new, stored.changed
            )
        if credits is not None and bank_file is not None:
            new = keep_credits_task(session.ledger, session.biller_id, credits)
            logger.info("%s: %s payout credit(s) new", bank_file.name, new)
        period = period_task(session.ledger, session.biller_id, report, period_start, period_end)
        if period is None:
            outcome, run = nothing(biller, run_id)
            return end_run(outcome, data=run)
        reconciliation = reconcile_task(session, report, period, settings)
        money = keep_results_task(session.ledger, session.biller_id, reconciliation, run_id=run_id)
    files, summary = publish_task(
        reconciliation, money, settings, biller=biller, report_path=payout_report, run_id=run_id
    )
    found = counts(reconciliation)
    outcome, run = reconciled(
        biller, run_id, money, found, files, summary, needs_person=attention(reconciliation)
    )
    logger.info("%s — %s", outcome.name, outcome.message)
    return end_run(outcome, data=run)
