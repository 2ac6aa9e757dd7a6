"""Import payments from a bank statement: read, plan, (approve), record once, report."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date
from pathlib import Path
from typing import Any, Literal

from prefect import flow, get_run_logger
from prefect.client.schemas.objects import State

from tasks.bank_payments import StatementRefused, find_profile
from tasks.bank_payments.outcome import (
    BankResult,
    BankRun,
    awaiting,
    bank_outcome,
    recording_facts,
)
from tasks.bank_payments.report import summary_markdown, write_profile_starter
from tasks.bank_payments.settings import load_settings
from tasks.bank_payments.steps import (
    Prepared,
    chunks,
    finish_lines,
    lines_to_record,
    payments_of,
    plan_file_task,
    publish_task,
    record_chunk_task,
    start_lines,
)
from tasks.common.approval import ApprovalRefused, ApprovalRequired, require_approval
from tasks.common.crash_points import crash_point
from tasks.common.outcome import REJECTED, Outcome, end_run, refused
from tasks.common.session import BillerSession, open_biller
from tasks.common.workers import current_run_id
from tasks.common.write_once import SendBudget
from tasks.payouts.steps import remember_bank_credits


@flow(name="import-bank-payments", log_prints=False)
def import_bank_payments(
    file: Path,
    biller: str,
    dry_run: bool = True,
    profile: str = "",
    on_bad_lines: Literal["reject_file", "skip"] = "reject_file",
    exact_only: bool = False,
    as_of: date | None = None,
) -> State[Any]:
    """Record the customer payments a bank statement shows, once each, and report the rest.

    Ends in a state named for its outcome (Dry run, Completed, Completed with failures, Pending,
    Rejected, Nothing to record, Approval refused, Awaiting approval); the summary and the
    preview are the run's artifacts, the report and review CSVs are written next to the file.
    Recording pauses for an approval form (a run started from a terminal takes the CLI's
    --approve-as; one with nobody to ask records nothing and ends Awaiting approval), unless the
    run records only exact, full matches and the biller's bank settings allow that unattended
    (auto_apply_exact).

    Args:
        file: Full path of the statement on the worker's disk (CSV, or Santander's TXT), e.g.
            /srv/billops/inbox/acme/statement-june.csv. The reports are written next to it.
        biller: Name of the biller's credential block (`billops auth login --block NAME`
            creates one).
        dry_run: On: read, match and report only, nothing is sent. Off: record the payments.
        profile: A bank profile's name or the path of a profile YAML file; empty means the
            layout is detected from the file's content.
        on_bad_lines: reject_file refuses a file with any unusable line; skip reads the rest
            and lists exactly which lines were skipped.
        exact_only: Record only exact, full matches (what the nightly run does on its own);
            partial payments, overpayments and suggestions wait for a person.
        as_of: The day the statement is read on: a line dated after it is refused as
            future-dated. Empty: today in London (a sandbox's simulated clock may run ahead).
    """
    run_id = current_run_id()
    chosen = find_profile(profile) if profile.strip() else None
    settings = load_settings(biller)
    with open_biller(biller) as session:
        try:
            prepared = plan_file_task(
                session,
                file,
                profile=chosen,
                on_bad_lines=on_bad_lines,
                run_id=run_id,
                settings=settings,
                today=as_of,
            )
        except StatementRefused as exc:
            return _rejected(exc, file, biller, run_id)
        plan = prepared.plan  # its payout credits, for the payout reconciliation's bank check
        remember_bank_credits(
            session.ledger,
            session.biller_id,
            plan.statement.lines,
            plan.classes,
            plan.keys,
            plan.statement.sha256,
        )
        lines = [] if dry_run else lines_to_record(prepared, exact_only=exact_only)
        if lines and not (exact_only and settings.auto_apply_exact):
            try:
                decision = require_approval(
                    session.ledger,
                    action="record bank payments",
                    subject=f"{biller}:{file.name}",
                    consequence="records payments at the service",
                    facts=recording_facts(lines),
                )
            except ApprovalRefused as exc:
                return _finish(prepared, [], file, biller, dry_run, refused(exc), run_id)
            except ApprovalRequired as exc:  # nobody to ask (a run started with no person)
                return _finish(prepared, [], file, biller, dry_run, awaiting(exc), run_id)
            get_run_logger().info("recording %s", decision.message)
        recorded = _record(session, prepared, lines, run_id)
    run = BankRun(file, dry_run, len(lines), recorded)
    outcome = bank_outcome(prepared.plan, run)
    return _finish(prepared, recorded, file, biller, dry_run, outcome, run_id)


def _record(
    session: BillerSession, prepared: Prepared, lines: Sequence[Any], run_id: str
) -> list[Any]:
    """Remember the lines, record their payments chunk by chunk, mark the settled ones done."""
    if not lines:
        return []
    start_lines(session.ledger, session.biller_id, prepared.plan, lines, run_id=run_id)
    budget = SendBudget()  # each payment sent at most 3 times in this run
    recorded = []
    for chunk in chunks(payments_of(lines)):
        # One after another: a payment's look-up after a lost answer relies on what was paid
        # before it on the same invoice (tasks/bank_payments/_record.py).
        recorded.extend(
            record_chunk_task(session, chunk, paid=prepared.paid, run_id=run_id, budget=budget)
        )
    crash_point("after_outcome")  # outcomes in the ledger, lines not marked done, no reports
    finish_lines(session.ledger, session.biller_id, recorded, run_id=run_id)
    return recorded


def _finish(
    prepared: Prepared,
    recorded: list[Any],
    file: Path,
    biller: str,
    dry_run: bool,
    outcome: Outcome,
    run_id: str,
) -> State[Any]:
    report, review = publish_task(prepared.plan, recorded, file, biller=biller, dry_run=dry_run)
    get_run_logger().info("%s: %s — %s", file.name, outcome.name, outcome.message)
    summary = summary_markdown(prepared.plan, recorded, biller=biller, dry_run=dry_run)
    result = BankResult(
        str(file),
        biller,
        run_id,
        outcome.name,
        outcome.message,
        summary,
        str(report),
        str(review),
        recorded,
    )
    return end_run(outcome, data=result)


def _rejected(exc: StatementRefused, file: Path, biller: str, run_id: str) -> State[Any]:
    get_run_logger().warning("%s", exc)
    message = f"{exc}: nothing was recorded"
    starter = write_profile_starter(file, exc)
    if starter is not None:  # a layout no profile knows: one to edit, then `profile` names it
        message += f"; a profile to edit is in {starter}"
    outcome = Outcome(REJECTED, message, attention=True)
    result = BankResult(str(file), biller, run_id, outcome.name, outcome.message, [], None, None)
    return end_run(outcome, data=result)
