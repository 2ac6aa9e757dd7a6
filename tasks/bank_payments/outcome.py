"""How a run of the bank job ends: the named state (``tasks/common/outcome.py``) and the facts a
person approves before payments are recorded."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

from tasks.bank_payments._plan import Plan, PlannedLine
from tasks.bank_payments._record import WAITING, Recorded, confirmed
from tasks.bank_payments._statement import pounds
from tasks.bank_payments.report import totals
from tasks.common.outcome import COMPLETED, DRY_RUN, PENDING, WITH_FAILURES, Outcome

NOTHING_TO_RECORD = "Nothing to record"
AWAITING_APPROVAL = "Awaiting approval"


@dataclass(frozen=True)
class BankRun:
    """What one run set out to do and what came of it."""

    file: Path
    dry_run: bool
    lines: int
    recorded: Sequence[Recorded]


@dataclass(frozen=True)
class BankResult:
    """What a run hands back to its caller (the CLI prints it): its outcome, the money, where
    the reports are, and what happened to each payment."""

    file: str
    biller: str
    run_id: str
    outcome: str
    message: str
    summary: list[str]
    report: str | None
    review: str | None
    recorded: list[Recorded] = field(default_factory=list)


def recording_facts(lines: Sequence[PlannedLine]) -> list[tuple[str, str]]:
    """What a person approves: how many payments, to how many items, and how much."""
    payments = [a for ln in lines for a in ln.allocations]
    total = pounds(sum(a.pennies for a in payments))
    partial = sum(1 for ln in lines if ln.outcome != "full")
    return [
        ("statement lines", str(len(lines))),
        ("payments to record", str(len(payments))),
        ("total", f"£{total:,.2f}"),
        ("part payments and overpayments among them", str(partial)),
    ]


def awaiting(exc: Exception) -> Outcome:
    """A run that would record payments but had nobody to approve them: nothing was sent."""
    return Outcome(AWAITING_APPROVAL, f"{exc}; nothing was recorded", attention=True)


def bank_outcome(plan: Plan, run: BankRun) -> Outcome:
    """The run's named end (see ``tasks/common/outcome.py`` for the names)."""
    t = totals(plan, run.recorded)
    review = f"£{t.review:,.2f} left for review (see {run.file.stem}.review.csv)"
    if run.dry_run:
        recordable = len(plan.recordable_indices())
        return Outcome(
            DRY_RUN,
            f"{plan.count} lines: {recordable} would record £{t.planned:,.2f}; {review}",
        )
    if run.lines == 0:
        return Outcome(NOTHING_TO_RECORD, f"{plan.count} lines, nothing to record; {review}")
    done = [r for r in run.recorded if confirmed(r.state)]
    failed = [r for r in run.recorded if r.state == "failed"]
    open_ = [r for r in run.recorded if r.state in ("unknown", "sent", "intended", WAITING)]
    recorded = sum((r.amount for r in done if r.sent_now), Decimal("0.00"))
    message = (
        f"{len(done)} of {len(run.recorded)} payments recorded (£{recorded:,.2f} now); {review}"
    )
    if failed:
        return Outcome(WITH_FAILURES, f"{message}; {len(failed)} refused by the service", True)
    if open_:
        return Outcome(
            PENDING, f"{message}; {len(open_)} in doubt: the next run resumes them", True
        )
    return Outcome(COMPLETED, message)
