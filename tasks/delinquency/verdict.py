"""Who lets a run apply its plan, and the named state each run ends in.

Permission (``docs/conventions.md`` §10 Dry run and approval): a plan with calls needs a person —
the pause form of a deployment's run, or ``--approve-as`` at the terminal
(:mod:`tasks.delinquency.approval`) — except in the nightly schedule, which applies on its own
only where the biller's policy says ``apply.automatic: true`` and the plan is within the cap
(customers and pounds per run). Over the cap, the nightly run stops and asks.

States, each through ``tasks/common/outcome.py``: ``Dry run``, ``Nothing to do``, ``Applied``,
``Applied with problems`` (some call was refused, deferred, dropped or left unknown: the report
says which and what to do), ``Planned only`` (the nightly schedule may not apply for this biller),
``Needs approval``, ``Approval refused`` / ``Approval expired`` and ``Rejected`` (the policy file
is unusable: the reason names its line; nothing was read or sent), all completed; and ``Stopped``
(failed: the service refused the biller's token or throttled it; calls not made are listed, a
rerun makes them).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

from prefect.client.schemas.objects import State

from ledger import Ledger
from tasks.common.approval import ApprovalRefused, ApprovalRequired, require_approval
from tasks.common.outcome import (
    APPROVAL_EXPIRED,
    APPROVAL_REFUSED,
    REJECTED,
    end_run,
    failed_run,
    refused,
)
from tasks.common.outcome import Outcome as RunOutcome
from tasks.delinquency.apply import CallOutcome, Outcome
from tasks.delinquency.approval import is_unattended
from tasks.delinquency.plan import CallStatus, Plan
from tasks.delinquency.policy import Policy
from tasks.delinquency.report import publish

# The job's own state names, beside the shared ones (DRY_RUN, REJECTED, APPROVAL_*).
NOTHING_TO_DO = "Nothing to do"
APPLIED = "Applied"
WITH_PROBLEMS = "Applied with problems"
PLANNED_ONLY = "Planned only"
NEEDS_APPROVAL = "Needs approval"
STOPPED = "Stopped"

PROBLEMS = (Outcome.REFUSED, Outcome.DROPPED, Outcome.DEFERRED, Outcome.UNKNOWN)
PERSON_NEEDED = (WITH_PROBLEMS, NEEDS_APPROVAL, APPROVAL_REFUSED, APPROVAL_EXPIRED, REJECTED)


@dataclass(frozen=True)
class DelinquencyRun:
    """What one run did, as the CLI prints it and the UI shows it."""

    biller: str
    as_of: str
    state: str
    message: str
    report: Path | None
    calls: int
    customers: int
    by_outcome: dict[str, int] = field(default_factory=dict)
    rows: list[dict[str, str]] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        """0 ok, 1 failed or stopped, 3 finished with problems or without approval."""
        if self.state == STOPPED:
            return 1
        if self.state in PERSON_NEEDED:
            return 3
        return 0


class DelinquencyStopped(Exception):
    """The run stopped; ``run`` says what was made and what was not."""

    def __init__(self, run: DelinquencyRun) -> None:
        super().__init__(run.message)
        self.run = run


@dataclass(frozen=True)
class Permission:
    """Whether the plan may be applied, and in whose name."""

    granted: bool
    actor: str = ""
    approver: str | None = None
    state: str = ""
    message: str = ""


def permission(ledger: Ledger, policy: Policy, plan: Plan, *, block: str) -> Permission:
    """May this run apply ``plan`` (see the module docstring)?"""
    over = plan.over_cap(policy.apply.max_customers, policy.apply.max_amount)
    scope = (
        f"{len(plan.to_send)} calls for {plan.customers_changed} customers "
        f"(£{plan.amount_changed:,.2f})"
    )
    if is_unattended():
        # Not even a change of state is recorded: the nightly run is then a dry run.
        if not policy.apply.automatic:
            return Permission(
                False,
                state=PLANNED_ONLY,
                message=f"{scope} planned; the policy does not let the nightly run apply them "
                f"(apply.automatic: false): review the plan, then run `billops run "
                f"pause-delinquent --biller {block} --apply --approve-as NAME --reason TEXT`",
            )
        if over:
            return Permission(
                False,
                state=NEEDS_APPROVAL,
                message=f"{scope} is over the cap ({', '.join(over)}): nothing applied; a person "
                "must approve this plan (the run's form, or --approve-as)",
            )
        return Permission(True, actor="billops nightly (automatic, within the cap)")
    if not plan.to_send:
        return Permission(True, actor="billops")  # states only: nothing reaches the service
    facts = [
        ("calls", str(len(plan.to_send))),
        ("customers whose collection changes", str(plan.customers_changed)),
        ("debts paused or resumed", f"£{plan.amount_changed:,.2f}"),
        ("over the cap", ", ".join(over) or "no"),
    ]
    try:
        decision = require_approval(
            ledger,
            action="pause collection for delinquent customers",
            subject=f"{block}:delinquency:{plan.as_of.isoformat()}",
            consequence=f"pauses or resumes direct-debit collection: {scope}",
            facts=facts,
        )
    except ApprovalRequired as exc:
        return Permission(False, state=NEEDS_APPROVAL, message=str(exc))
    except ApprovalRefused as exc:
        ended = refused(exc)
        return Permission(False, state=ended.name, message=ended.message)
    return Permission(True, actor=decision.approver, approver=decision.approver)


def verdict(plan: Plan, outcomes: Sequence[CallOutcome]) -> tuple[str, str]:
    """The name and message of an applied run's final state."""
    counts: dict[str, int] = {}
    for o in outcomes:
        counts[o.outcome.value] = counts.get(o.outcome.value, 0) + 1
    moved = int(plan.evaluation.involved["changed"].sum())
    text = ", ".join(f"{n} {k}" for k, n in sorted(counts.items())) or "no calls"
    message = f"{moved} customers changed state; calls: {text}"
    stopped = [o for o in outcomes if o.outcome is Outcome.NOT_SENT]
    if stopped:
        return STOPPED, f"{message}. Stopped: {stopped[0].detail}"
    if any(o.outcome in PROBLEMS for o in outcomes) or any(
        c.status is CallStatus.DEFERRED for c in plan.calls
    ):
        return WITH_PROBLEMS, message + " (see the report for what to do)"
    if not outcomes and not moved:
        return NOTHING_TO_DO, "no customer changed state and no call was needed"
    return APPLIED, message


def dry_run_message(plan: Plan) -> str:
    """The message of a dry run's final state (:data:`DRY_RUN`)."""
    return f"{len(plan.to_send)} calls would be made; nothing was sent"


def finish(
    block: str,
    plan: Plan,
    outcomes: Sequence[CallOutcome],
    *,
    dry_run: bool,
    state: str,
    message: str,
    folder: Path,
) -> State:
    """Publish the report and end the run in its named state."""
    report = publish(
        block, plan, outcomes, dry_run=dry_run, state=state, message=message, folder=folder
    )
    run = DelinquencyRun(
        biller=block,
        as_of=plan.as_of.isoformat(),
        state=state,
        message=message,
        report=report.path,
        calls=len(plan.to_send),
        customers=plan.customers_changed,
        by_outcome=report.by_outcome,
    )
    if state == STOPPED:  # it could not do its work: a failed state, for the failure alerts
        return failed_run(RunOutcome(state, message), DelinquencyStopped(run))
    # A person should look: problems to act on, an approval to give, calls only planned.
    attention = state in PERSON_NEEDED or (state == PLANNED_ONLY and bool(plan.to_send))
    return end_run(RunOutcome(state, message, attention=attention), data=run)


def rejected(block: str, exc: ValueError) -> State:
    """The end of a run whose policy file or day is unusable: nothing was read or sent."""
    message = f"{exc}: nothing was sent"
    run = DelinquencyRun(
        biller=block, as_of="", state=REJECTED, message=message, report=None, calls=0, customers=0
    )
    return end_run(RunOutcome(REJECTED, message, attention=True), data=run)
