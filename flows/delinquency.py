"""Pause collection for delinquent customers: look, plan, (approve), call once each, report."""

from __future__ import annotations

from datetime import date
from pathlib import Path

from prefect import flow
from prefect.client.schemas.objects import State
from prefect.task_runners import ThreadPoolTaskRunner

from tasks.common.crash_points import crash_point
from tasks.common.outcome import DRY_RUN
from tasks.common.session import biller_session, open_ledger
from tasks.common.workers import current_run_id, worker_name
from tasks.common.working_days import london_today
from tasks.delinquency.policy import PolicyError
from tasks.delinquency.report import report_folder
from tasks.delinquency.steps import (
    UnusableDay,
    batches,
    calls_task,
    check_day,
    choose_policy,
    new_applier,
    plan_task,
    record_moves,
    settle_task,
    snapshot_task,
    standings,
)
from tasks.delinquency.verdict import dry_run_message, finish, permission, rejected, verdict

# Calls of different customers go out in parallel, bounded (each batch keeps a customer's calls
# in order).
MAX_PARALLEL_BATCHES = 4


@flow(
    name="pause-delinquent-customers",
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_PARALLEL_BATCHES),  # type: ignore[arg-type]
    log_prints=False,
)
def pause_delinquent_customers(
    biller: str, policy: Path | None = None, dry_run: bool = True, as_of: date | None = None
) -> State:
    """Pause direct-debit collection for customers the biller's delinquency policy says are
    delinquent, and resume it when they are back in good standing. Needs an approval to apply.

    Args:
        biller: The name of the biller's credential block.
        policy: A policy file (YAML) on the worker's disk; default
            $BILLOPS_HOME/policies/<biller>.yaml, else the policy billops ships.
        dry_run: Plan and report only: every call it would make, nothing sent, nothing recorded.
        as_of: The day the policy is evaluated for (default today in Europe/London); never
            earlier than the day of the biller's previous run, nor later than today (but for a
            sandbox biller, whose clock may run ahead).
    """
    run_id = current_run_id()
    try:
        rules = choose_policy(biller, policy)
        check_day(biller, as_of)
    except (PolicyError, UnusableDay) as exc:
        return rejected(biller, exc)
    ledger = open_ledger()
    try:
        with biller_session(biller, ledger) as session:
            snapshot = snapshot_task(session, rules, run_id=run_id, as_of=as_of or london_today())
            plan = plan_task(session, rules, snapshot)
            folder = report_folder(biller, plan, run_id)
            if dry_run:
                message = dry_run_message(plan)
                return finish(
                    biller, plan, [], dry_run=True, state=DRY_RUN, message=message, folder=folder
                )
            allowed = permission(ledger, rules, plan, block=biller)
            if not allowed.granted:
                return finish(
                    biller,
                    plan,
                    [],
                    dry_run=True,
                    state=allowed.state,
                    message=allowed.message,
                    folder=folder,
                )
            record_moves(
                ledger, plan, rules, run_id=run_id, actor=allowed.actor, approver=allowed.approver
            )
            applier = new_applier(
                session,
                rules,
                run_id=run_id,
                worker=worker_name(),
                actor=allowed.actor,
                approver=allowed.approver,
            )
            futures = [calls_task.submit(applier, batch) for batch in batches(plan.to_send)]
            outcomes = [outcome for future in futures for outcome in future.result()]
            # Not calls: earlier attempts left open, settled by asking the service.
            settled = settle_task(applier, plan.to_settle) if plan.to_settle else []
            ledger.save_delinquency_standings(plan.biller, standings(plan, rules, run_id, outcomes))
            crash_point("after_outcome")
            state, message = verdict(plan, outcomes)
            return finish(
                biller,
                plan,
                [*outcomes, *settled],
                dry_run=False,
                state=state,
                message=message,
                folder=folder,
            )
    finally:
        ledger.close()
