"""The nightly run: a coordinator that gives every biller a night of its own.

Each biller's night is one run of ``nightly-biller`` (``flows/nightly_biller.py``: its waiting
bank statements, payout reports and other inbox files, the import jobs left open, the delinquency
policy, under the biller's limits). Where the per-biller deployment exists and its work pool has
a worker online, each night is a child run started through it (``run_deployment``, keyed by
biller and night), so the pool spreads the billers over every worker on every machine; without
one (the embedded default, a laptop) the same nights run here, a few at a time.

A biller whose night fails or crashes is tried once more — on another worker when there is one
— and never stops the others. The summary table (biller, jobs, rows, payments, pauses,
duration, outcome, attempts, worker) is written at the end; the run then ends ``Billers failed``
(a failed state) when any biller failed, else under a name that says the night's outcome.
Started again the same night, it finds the nights already started: those that finished are
reported, not run again.
"""

from __future__ import annotations

import time
from datetime import date, timedelta
from typing import Any, Literal

from prefect import flow, get_run_logger, task
from prefect.cache_policies import NO_CACHE
from prefect.client.schemas.objects import State
from prefect.task_runners import ThreadPoolTaskRunner

from flows.nightly_biller import BillerNightFailed, nightly_biller
from tasks.common.outcome import (
    COMPLETED,
    PENDING,
    WITH_REJECTIONS,
    Outcome,
    end_run,
    failed_run,
)
from tasks.common.reports import publish_table
from tasks.common.session import all_biller_blocks
from tasks.nightly.children import STUCK_STARTING, Child, Children
from tasks.nightly.night import (
    BillerResult,
    NightSummary,
    failed_result,
    night_of,
    summary_row,
)

__all__ = ["BillerResult", "NightlyFailed", "nightly"]

MAX_PARALLEL_BILLERS = 4  # in this process (no work pool): nights at once
PER_BILLER_DEPLOYMENT = "nightly-biller/nightly-biller"
WATCH_SECONDS = 2.0
FAILED = "Billers failed"
Where = Literal["auto", "workers", "here"]


class NightlyFailed(Exception):
    """At least one biller failed; the summary artifact says which and why."""


# --- in this process ------------------------------------------------------------------------
def _result_of(state: State[Any], block: str, attempt: int) -> BillerResult:
    data = state.result(raise_on_failure=False)
    if isinstance(data, BillerResult):
        return data.with_attempt(attempt, data.worker, data.run_id)
    if isinstance(data, BillerNightFailed) and data.result is not None:
        return data.result.with_attempt(attempt, data.result.worker, data.result.run_id)
    said = f"{state.name}: {state.message}" if state.message else str(state.name)
    return failed_result(block, said, attempts=attempt, worker="", run_id="")


@task(name="biller-night", cache_policy=NO_CACHE)
def night_here(block: str, night: date) -> BillerResult:
    """One biller's night as a subflow of this run; tried once more if it fails."""
    result = BillerResult(block, False)
    for attempt in (1, 2):
        try:
            state = nightly_biller(biller=block, night=night, return_state=True)
        except Exception as exc:  # a crash of the subflow itself: the night said nothing
            error = f"{type(exc).__name__}: {exc}"
            result = failed_result(block, error, attempts=attempt, worker="", run_id="")
        else:
            result = _result_of(state, block, attempt)
        if result.ok:
            return result
        get_run_logger().warning("%s: attempt %d failed: %s", block, attempt, result.error)
    return result


def _run_here(names: list[str], night: date) -> list[BillerResult]:
    futures = [night_here.submit(name, night) for name in names]
    return [future.result() for future in futures]


# --- on the workers -------------------------------------------------------------------------
def _run_on_workers(
    names: list[str], night: date, deployment: str, stuck_starting: timedelta
) -> list[BillerResult]:
    """Start (or find) each biller's child run, watch them all, retry each failure once."""
    children = Children(deployment, night, stuck_starting)
    watching: dict[str, Child] = {name: children.first(name) for name in names}
    results: dict[str, BillerResult] = {}
    while watching:
        children.refresh(list(watching.values()))
        for name, child in list(watching.items()):
            if not child.final and not children.crash_if_gone(child):
                continue
            if child.run.state.is_completed() or child.retried:
                results[name] = children.result(child)
                del watching[name]
            else:
                watching[name] = children.retry(child)
        if watching:
            time.sleep(WATCH_SECONDS)
    return [results[name] for name in names]


def _where(run_billers: Where, deployment: str) -> str:
    """``workers`` or ``here``, and why (for the log)."""
    if run_billers != "auto":
        return run_billers
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.objects import WorkerStatus
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        try:
            found = client.read_deployment_by_name(deployment)
        except ObjectNotFound:
            return "here"
        pool = found.work_pool_name
        if not pool:
            return "here"
        workers = client.read_workers_for_work_pool(pool)
    return "workers" if any(w.status == WorkerStatus.ONLINE for w in workers) else "here"


@flow(
    name="nightly",
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_PARALLEL_BILLERS),  # type: ignore[arg-type]
    log_prints=False,
)
def nightly(
    billers: list[str] | None = None,
    night: date | None = None,
    run_billers: Where = "auto",
    per_biller_deployment: str = PER_BILLER_DEPLOYMENT,
    stuck_starting_minutes: float = STUCK_STARTING.total_seconds() / 60,
) -> State[Any]:
    """The nightly run for every biller (or the named credential blocks): one night per biller,
    on the workers when there are some, a summary table at the end.

    Ends Failed ("Billers failed") when any biller failed after its retry (after writing the
    summary), so one "Failed" automation covers every biller; otherwise "Completed with
    rejections" when a biller's night went on past a refused file or policy (which billers, in
    the message), Pending when import jobs are still open, or Completed.

    Args:
        billers: Names of biller credential blocks to run; leave empty for every biller
            credential block on this Prefect server.
        night: The night to run (default today in Europe/London). Each biller's run is keyed by
            biller and night: run again the same night, finished billers are only reported.
        run_billers: auto: on the workers when the per-biller deployment exists and a worker of
            its pool is online, else in this run's process; workers or here to choose.
        per_biller_deployment: The per-biller deployment (flow/deployment) the children are
            started through.
        stuck_starting_minutes: On the workers: a biller's run still Pending, or Running
            without having announced its process, after this many minutes is taken as started
            by a worker that died meanwhile; it is marked Crashed and tried again.
    """
    logger = get_run_logger()
    names = billers or all_biller_blocks()
    which = night or night_of()
    where = _where(run_billers, per_biller_deployment)
    logger.info("night of %s: %d biller(s), run %s", which, len(names), where)
    if where == "workers":
        stuck = timedelta(minutes=stuck_starting_minutes)
        results = _run_on_workers(names, which, per_biller_deployment, stuck)
    else:
        results = _run_here(names, which)
    summary = NightSummary(tuple(results))
    publish_table(
        [summary_row(r) for r in results],
        key="nightly-summary",
        description=f"Night of {which}: {len(results)} biller(s), run {where}",
    )
    message = summary.message()
    if summary.failed:
        logger.error("nightly: %s", message)
        return failed_run(Outcome(FAILED, message), NightlyFailed(message))
    if summary.with_rejections:  # nothing failed, but something was refused: say which
        message = f"{', '.join(summary.with_rejections)} refused input. {message}"
        outcome = Outcome(WITH_REJECTIONS, message, attention=True)
    else:
        outcome = Outcome(
            PENDING if summary.still_open else COMPLETED,
            message,
            attention=bool(summary.still_open),
        )
    logger.info("nightly: %s", message)
    return end_run(outcome, data=results)
