"""How a payout reconciliation ends (the shared named states, ``tasks/common/outcome.py``), what
its caller gets back, and the command line's exit code.

- ``Reconciled``: every payout of the period is matched or in transit, no unexpected credit;
- ``Exceptions found`` (needs attention): something needs a person — see the exceptions file;
- ``Rejected`` (needs attention): the payout report or the bank statement was refused; nothing
  of it was kept;
- ``Nothing to reconcile``: no payout report or statement has been seen for the biller yet.

Exit codes: 0 reconciled (or nothing to do), 3 exceptions found, 1 failed or refused.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from tasks.common.outcome import REJECTED, Outcome
from tasks.payouts._balance import Balance
from tasks.payouts._reconcile import money
from tasks.payouts.report import ReportFiles

RECONCILED = "Reconciled"
EXCEPTIONS = "Exceptions found"
NOTHING = "Nothing to reconcile"
EXIT_OK, EXIT_FAILED, EXIT_EXCEPTIONS = 0, 1, 3


@dataclass(frozen=True)
class PayoutRun:
    """What a reconciliation run did, for its caller (the CLI, the nightly run, tests)."""

    biller: str
    run_id: str
    state: str
    message: str
    first: str = ""
    last: str = ""
    counts: dict[str, int] = field(default_factory=dict)
    opening: int = 0
    collected: int = 0
    deductions: int = 0
    paid_out: int = 0
    closing: int = 0
    files: dict[str, str] = field(default_factory=dict)
    summary: list[str] = field(default_factory=list)

    @property
    def exit_code(self) -> int:
        if self.state in (RECONCILED, NOTHING):
            return EXIT_OK
        return EXIT_EXCEPTIONS if self.state == EXCEPTIONS else EXIT_FAILED


def reconciled(
    biller: str,
    run_id: str,
    money_: Balance,
    found: dict[str, int],
    files: ReportFiles,
    summary: list[str],
    *,
    needs_person: bool,
) -> tuple[Outcome, PayoutRun]:
    """The outcome of a run that reconciled its period."""
    listed = ", ".join(f"{count} {state}" for state, count in found.items()) or "no payouts"
    message = f"{money_.first} to {money_.last}: {listed}; in transit {money(money_.closing)}" + (
        "; see the exceptions file" if needs_person else ""
    )
    name = EXCEPTIONS if needs_person else RECONCILED
    run = PayoutRun(
        biller,
        run_id,
        name,
        message,
        str(money_.first),
        str(money_.last),
        found,
        money_.opening,
        money_.collected,
        money_.deductions,
        money_.paid_out,
        money_.closing,
        {
            "reconciliation": str(files.reconciliation),
            "exceptions": str(files.exceptions),
            "journal": str(files.journal),
            "picture": str(files.picture),
            "rollup": str(files.rollup),
        },
        summary,
    )
    return Outcome(name, message, attention=needs_person), run


def rejected(biller: str, run_id: str, reason: str) -> tuple[Outcome, PayoutRun]:
    """The outcome of a run whose input was refused."""
    message = f"{reason}"
    return Outcome(REJECTED, message, attention=True), PayoutRun(biller, run_id, REJECTED, message)


def nothing(biller: str, run_id: str) -> tuple[Outcome, PayoutRun]:
    """The outcome of a run with nothing to reconcile."""
    message = "no payout report or bank statement seen for this biller yet"
    return Outcome(NOTHING, message), PayoutRun(biller, run_id, NOTHING, message)
