"""The job's steps as Prefect tasks, each batch-sized: one snapshot, one plan, one task per batch
of calls, one report. The flow (``flows/delinquency.py``) composes them.

Standings (each customer's state) are written twice when a run applies: before any call, so a
rerun after a crash computes the same keys (the same hold) and never makes a call twice; and
after the calls, to close the holds whose pauses were all resumed. A dry run writes none.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator, Sequence
from datetime import date
from pathlib import Path

from prefect import get_run_logger, task
from prefect.cache_policies import NO_CACHE

from billing_api import BillingClient
from ledger import Ledger
from ledger.delinquency import Standing
from ledger.settings import BillopsSettings
from tasks.common.session import BillerSession, load_biller_block
from tasks.common.working_days import london_today
from tasks.common.write_once import SendBudget
from tasks.delinquency.apply import Applier, CallOutcome, Outcome, apply_calls
from tasks.delinquency.evaluate import evaluate, standing_frame
from tasks.delinquency.plan import Action, CallStatus, Done, Plan, PlannedCall, build_plan
from tasks.delinquency.policy import Policy, load_policy
from tasks.delinquency.snapshot import Snapshot
from tasks.delinquency.take import take_snapshot

BATCH = 50  # calls per task run: a task costs milliseconds, a call tens
SETTLED_OUTCOMES = (Outcome.DONE, Outcome.FOUND, Outcome.ALREADY_DONE)


def choose_policy(biller: str, path: Path | None) -> Policy:
    """The policy file given; else ``$BILLOPS_HOME/policies/<biller>.yaml``; else the default."""
    if path is None:
        own = BillopsSettings().home / "policies" / f"{biller}.yaml"
        path = own if own.is_file() else None
    return load_policy(path)


class UnusableDay(ValueError):
    """An ``as_of`` a run cannot evaluate for (nothing is read or sent)."""


def check_day(block: str, as_of: date | None) -> None:
    """Refuse a day after today in Europe/London for a live service.

    Every run stores its snapshot, and a later run for an earlier day is refused (it would count
    days and failures backwards): one run dated next month, even a dry run to see what would
    happen, would hold back every nightly run until then. The sandbox's clock may run ahead of
    this machine's (simulated days), so a sandbox biller may be evaluated for a later day.
    """
    today = london_today()
    if as_of is None or as_of <= today:
        return
    if load_biller_block(block).environment == "sandbox":
        return
    raise UnusableDay(
        f"as_of {as_of.isoformat()} is after today ({today.isoformat()} in Europe/London): the "
        "service's debts are as of today, and a run stored for a later day would hold back "
        "every run until that day"
    )


@task(name="delinquency-snapshot", cache_policy=NO_CACHE, retries=2, retry_delay_seconds=5)
def snapshot_task(session: BillerSession, policy: Policy, *, run_id: str, as_of: date) -> Snapshot:
    """Read the biller's customers and open debts, observe failures, store the snapshot."""
    snapshot = take_snapshot(
        session.client,
        session.ledger,
        policy,
        biller=session.biller_id,
        run_id=run_id,
        as_of=as_of,
    )
    get_run_logger().info(
        "%s on %s: %d customers, %d open debts, %d failed collections counted",
        session.block,
        as_of.isoformat(),
        len(snapshot.customers),
        len(snapshot.items),
        len(snapshot.failures),
    )
    return snapshot


def customer_level_pauses(
    client: BillingClient, customers: Sequence[str], day: date
) -> frozenset[str]:
    """Customers whose AUTO_COLLECT a person paused at customer level (payment settings)."""
    paused = set()
    for customer in customers:
        settings = client.customers.retrieve_payment_settings(customer)
        until = settings.collection_paused_until
        if "AUTO_COLLECT" in settings.paused_collection_methods and (until is None or until >= day):
            paused.add(customer)
    return frozenset(paused)


def make_plan(
    ledger: Ledger,
    policy: Policy,
    snapshot: Snapshot,
    *,
    biller: str,
    client: BillingClient | None = None,
) -> Plan:
    """Evaluate the policy on the snapshot and turn the decisions into calls; with ``client``,
    customers being released are checked for a customer-level pause set in the console."""
    standings = ledger.delinquency_standings(biller)
    evaluation = evaluate(snapshot, policy, standing_frame(s.__dict__ for s in standings))
    involved = evaluation.involved
    done = Done.from_operations(
        biller, ledger.delinquency_operations(biller, involved["customer_id"])
    )
    releasing = list(involved.loc[involved["release"], "customer_id"])
    paused = (
        customer_level_pauses(client, releasing, snapshot.as_of)
        if client is not None and releasing
        else frozenset()
    )
    return build_plan(evaluation, snapshot.items, biller=biller, done=done, customer_paused=paused)


@task(name="delinquency-plan", cache_policy=NO_CACHE)
def plan_task(session: BillerSession, policy: Policy, snapshot: Snapshot) -> Plan:
    """The plan for one biller (pure, but for reading the ledger and customer-level pauses)."""
    plan = make_plan(
        session.ledger, policy, snapshot, biller=session.biller_id, client=session.client
    )
    get_run_logger().info(
        "%s: %d calls to make for %d customers (£%s); %d deferred, %d not made on purpose",
        session.block,
        len(plan.to_send),
        plan.customers_changed,
        f"{plan.amount_changed:,.2f}",
        sum(c.status is CallStatus.DEFERRED for c in plan.calls),
        sum(c.status is CallStatus.SKIPPED for c in plan.calls),
    )
    return plan


def standings(
    plan: Plan, policy: Policy, run_id: str, outcomes: Sequence[CallOutcome] | None
) -> list[Standing]:
    """Every involved customer's standing after this run (``outcomes`` None: before the calls,
    when a hold being released stays open until its resumes are done)."""
    unfinished = set(plan.holds_kept_open)
    if outcomes is None:
        unfinished |= {c.customer_id for c in plan.to_send if c.action is Action.RESUME}
    else:
        unfinished |= {
            o.call.customer_id
            for o in outcomes
            if o.call.action is Action.RESUME and o.outcome not in SETTLED_OUTCOMES
        }
    found = []
    for d in plan.evaluation.involved.to_dict("records"):
        customer = str(d["customer_id"])
        hold = d["hold_period"] or (d["old_hold_period"] if customer in unfinished else "")
        since = d["since"]
        found.append(
            Standing(
                biller=plan.biller,
                customer_id=customer,
                name=str(d["name"]),
                state=str(d["after"]),
                since=since if isinstance(since, date) else None,
                hold_period=str(hold),
                hold_count=int(d["hold_count"]),
                mandate_at_entry=str(d["mandate_at_entry"]),
                left_on=dict(d["left_on"]),
                reasons=list(d["reasons"]),
                policy_name=policy.name,
                policy_digest=policy.digest,
                run_id=run_id,
            )
        )
    return found


def record_moves(
    ledger: Ledger, plan: Plan, policy: Policy, *, run_id: str, actor: str, approver: str | None
) -> int:
    """Write the new standings (before any call) and audit each change of state."""
    ledger.save_delinquency_standings(plan.biller, standings(plan, policy, run_id, None))
    moved = plan.evaluation.involved
    moved = moved[moved["changed"]]
    for d in moved.to_dict("records"):
        ledger.audit(
            actor=actor,
            action=f"delinquency:{d['move']}",
            subject=f"customer:{d['customer_id']}",
            reason="; ".join(d["reasons"]),
            approver=approver,
            run_id=run_id,
            details={
                "biller": plan.biller,
                "name": d["name"],
                "from": d["before"],
                "to": d["after"],
                "policy": policy.name,
                "policy_digest": policy.digest,
            },
        )
    return len(moved)


def batches(calls: Sequence[PlannedCall], size: int = BATCH) -> Iterator[list[PlannedCall]]:
    """``calls`` in batches, one customer's calls never split (so they run in order)."""
    batch: list[PlannedCall] = []
    for call in calls:
        if len(batch) >= size and batch[-1].customer_id != call.customer_id:
            yield batch
            batch = []
        batch.append(call)
    if batch:
        yield batch


@task(name="delinquency-calls", cache_policy=NO_CACHE)
def calls_task(applier: Applier, calls: list[PlannedCall]) -> list[CallOutcome]:
    """Make one batch of calls (no task retries: the ledger decides what may be sent again)."""
    return apply_calls(applier, calls)


@task(name="delinquency-settle", cache_policy=NO_CACHE)
def settle_task(applier: Applier, calls: list[PlannedCall]) -> list[CallOutcome]:
    """Settle the open earlier attempts of calls the plan does not make (a person resumed the
    debt since); nothing is sent."""
    return [applier.settle(call) for call in calls]


def new_applier(
    session: BillerSession,
    policy: Policy,
    *,
    run_id: str,
    worker: str,
    actor: str,
    approver: str | None,
) -> Applier:
    """The shared state of a run's calls."""
    return Applier(
        client=session.client,
        ledger=session.ledger,
        run_id=run_id,
        worker=worker,
        actor=actor,
        approver=approver,
        policy_digest=policy.digest,
        budget=SendBudget(),
        stop=threading.Event(),
    )
