"""What a run of the bank job hands back: ``<stem>.report.csv`` (every line), ``<stem>.review.csv``
(what needs a person) and a markdown summary whose money ties out to the penny:

    credits in the file = recorded in this run + recorded before + left for review
                          + payouts + other credits

("recorded before": lines an earlier file or run already recorded, and payments an earlier run
sent that this run found at the service; a line repeating another's transaction id with the same
amount and date counts there too, being that line again). A line repeating a transaction id with
another amount or date is recorded by nobody: it is left for review, for a person to check with
the bank. A dry run sends nothing, so its summary says what would be recorded instead of what
was. Every cell written goes through the shared report writer, which neutralises spreadsheet
formulas (``tasks/common/reports.py``).
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

import numpy as np

from tasks.bank_payments._classify import CLASSES, OTHER_CREDIT, PROVIDER_PAYOUT
from tasks.bank_payments._errors import StatementRefused, UnknownLayout
from tasks.bank_payments._match import CODE, DUPLICATE, OVERPAYMENT, PARTIAL
from tasks.bank_payments._plan import Plan, PlannedLine, is_customer_credit
from tasks.bank_payments._record import Recorded, confirmed
from tasks.bank_payments._statement import pounds
from tasks.common.reports import sibling_path, write_csv_atomically

REPORT_HEADER = (
    "line",
    "date",
    "amount",
    "class",
    "payer",
    "reference",
    "text",
    "references",
    "matches",
    "outcome",
    "recorded",
    "payment_ids",
    "suggestions",
    "reason",
)
REVIEW_HEADER = (
    "line",
    "date",
    "amount",
    "payer",
    "reference",
    "text",
    "outcome",
    "left_for_review",
    "suggestions",
    "reason",
)
ZERO = Decimal("0.00")
SKIPPED = "skipped"  # the report's outcome of a line skipped as unusable


@dataclass(frozen=True)
class Totals:
    """The money of a statement, split so it ties out (see the module docstring)."""

    credits: Decimal
    recorded: Decimal
    before: Decimal
    review: Decimal
    payouts: Decimal
    other: Decimal
    debits: Decimal
    planned: Decimal

    @property
    def ties_out(self) -> bool:
        """credits = recorded + recorded before + review + payouts + other credits."""
        return self.credits == self.recorded + self.before + self.review + self.payouts + self.other


@dataclass
class Outcomes:
    """What this run did, per statement line (physical number): money recorded by sends of this
    run, money found recorded before it, payment ids, and why anything was not recorded."""

    now: dict[int, Decimal]
    before: dict[int, Decimal]
    ids: dict[int, list[str]]
    reasons: dict[int, list[str]]

    @classmethod
    def of(cls, recorded: Sequence[Recorded]) -> Outcomes:
        now: dict[int, Decimal] = {}
        before: dict[int, Decimal] = {}
        ids: dict[int, list[str]] = {}
        reasons: dict[int, list[str]] = {}
        for r in recorded:
            if confirmed(r.state):
                into = now if r.sent_now else before
                into[r.line] = into.get(r.line, ZERO) + r.amount
            else:
                reasons.setdefault(r.line, []).append(f"{r.number}: {r.state} {r.note}".strip())
            ids.setdefault(r.line, []).extend(r.payment_ids)
        return cls(now, before, ids, reasons)

    def done(self, line: int) -> Decimal:
        return self.now.get(line, ZERO) + self.before.get(line, ZERO)


def _pounds_sum(pennies: np.ndarray) -> Decimal:
    return pounds(int(pennies.sum()))


def totals(plan: Plan, recorded: Sequence[Recorded]) -> Totals:
    """Sum each kind of money (see :class:`Totals`), by whole columns."""
    outcomes = Outcomes.of(recorded)
    amounts, codes = plan.amounts, plan.codes
    credit = amounts > 0
    customer = plan.customer_credit()
    # A repeat that differs was not recorded before: its money waits for review.
    duplicate = (plan.outcomes == CODE[DUPLICATE]) & ~plan.conflicting()
    now = sum(outcomes.now.values(), ZERO)
    before = sum(outcomes.before.values(), ZERO) + _pounds_sum(amounts[customer & duplicate])
    customer_money = _pounds_sum(amounts[customer & ~duplicate])
    planned = pounds(int(plan.matches.allocations["pennies"].sum()))
    return Totals(
        credits=_pounds_sum(amounts[credit]),
        recorded=now,
        before=before,
        review=customer_money - now - sum(outcomes.before.values(), ZERO),
        payouts=_pounds_sum(amounts[credit & (codes == CLASSES.index(PROVIDER_PAYOUT))]),
        other=_pounds_sum(amounts[credit & (codes == CLASSES.index(OTHER_CREDIT))]),
        debits=_pounds_sum(amounts[amounts < 0]),
        planned=planned,
    )


def _matches(line: PlannedLine) -> str:
    return "; ".join(f"{a.number} {pounds(a.pennies)}" for a in line.allocations)


def _suggestions(line: PlannedLine) -> str:
    return "; ".join(f"{n} ({c:.2f})" for n, c in line.suggestions)


def _reason(line: PlannedLine, outcomes: Outcomes, dry_run: bool) -> str:
    parts = [*([line.note] if line.note else []), *outcomes.reasons.get(line.line, [])]
    if not parts and dry_run and line.recordable:
        parts.append("dry run: nothing sent")
    if line.unallocated:
        parts.append(f"{line.unallocated} more than is due: left for a person")
    return "; ".join(parts)


def needs_review(line: PlannedLine, done: Decimal) -> bool:
    """A customer credit not wholly recorded, or a partial or over-payment. A duplicate is not,
    unless it repeats a transaction id with another amount or date (nothing records it)."""
    if not is_customer_credit(line) or (line.outcome == DUPLICATE and not line.conflicting_repeat):
        return False
    return done != line.amount or line.outcome in (PARTIAL, OVERPAYMENT)


def _report_rows(plan: Plan, outcomes: Outcomes, dry_run: bool) -> Iterator[list[object]]:
    for batch in plan.batches():
        for ln in batch:
            yield [
                ln.line,
                ln.date.isoformat(),
                f"{ln.amount:.2f}",
                ln.klass,
                ln.payer,
                ln.reference,
                ln.text,
                " ".join(ln.references),
                _matches(ln),
                ln.outcome,
                f"{outcomes.done(ln.line):.2f}",
                " ".join(outcomes.ids.get(ln.line, [])),
                _suggestions(ln),
                _reason(ln, outcomes, dry_run),
            ]
    # Lines skipped as unusable (on_bad_lines=skip): every one, with its text and reason.
    for bad in plan.statement.bad_lines:
        yield [bad.line, "", "", "", "", "", bad.text, "", "", SKIPPED, "0.00", "", "", bad.reason]


def review_lines(plan: Plan, recorded: Sequence[Recorded]) -> list[PlannedLine]:
    """The lines a person must look at (see :func:`needs_review`)."""
    outcomes = Outcomes.of(recorded)
    candidates = np.flatnonzero(
        plan.customer_credit() & ((plan.outcomes != CODE[DUPLICATE]) | plan.conflicting())
    )
    return [ln for ln in plan.take(candidates) if needs_review(ln, outcomes.done(ln.line))]


def write_reports(
    plan: Plan, recorded: Sequence[Recorded], input_path: Path, *, dry_run: bool
) -> tuple[Path, Path]:
    """The report and review CSVs next to the input."""
    outcomes = Outcomes.of(recorded)
    report = write_csv_atomically(
        sibling_path(input_path, "report"),
        REPORT_HEADER,
        ([str(cell) for cell in row] for row in _report_rows(plan, outcomes, dry_run)),
    )
    review_rows = (
        [
            str(ln.line),
            ln.date.isoformat(),
            f"{ln.amount:.2f}",
            ln.payer,
            ln.reference,
            ln.text,
            ln.outcome,
            f"{ln.amount - outcomes.done(ln.line):.2f}",
            _suggestions(ln),
            _reason(ln, outcomes, dry_run),
        ]
        for ln in review_lines(plan, recorded)
    )
    review = write_csv_atomically(sibling_path(input_path, "review"), REVIEW_HEADER, review_rows)
    return report, review


def summary_markdown(
    plan: Plan, recorded: Sequence[Recorded], *, biller: str, dry_run: bool
) -> list[str]:
    """The run's summary (the markdown artifact and the CLI's closing lines)."""
    t = totals(plan, recorded)
    statement = plan.statement
    mode = "dry run: nothing was sent" if dry_run else "applied"
    done_row = (
        f"| would be recorded (dry run: nothing sent) | {t.planned:.2f} |"
        if dry_run
        else f"| recorded at the service in this run | {t.recorded:.2f} |"
    )
    lines = [
        f"# Bank payments: {Path(statement.file).name} ({biller}, {mode})",
        "",
        f"Layout **{statement.profile.name}** ({statement.profile.bank}): {statement.detection}.",
        f"{statement.count} lines read, {len(statement.bad_lines)} skipped as bad, "
        f"{len(statement.skipped)} not transactions; {plan.open_items} open items.",
        "",
        "| money | £ |",
        "|---|---:|",
        f"| credits in the file | {t.credits:.2f} |",
        done_row,
        f"| recorded before (earlier files or runs) | {t.before:.2f} |",
        f"| left for review{' (incl. what would be recorded)' if dry_run else ''} | "
        f"{t.review:.2f} |",
        f"| payment-service payouts (never settle invoices) | {t.payouts:.2f} |",
        f"| other credits | {t.other:.2f} |",
        f"| debits | {t.debits:.2f} |",
        "",
        ("Ties out to the penny." if t.ties_out else "**Does not tie out: report this as a bug.**"),
        "",
        "Outcomes: " + ", ".join(f"{k} {v}" for k, v in sorted(plan.outcome_counts().items())),
    ]
    if statement.bad_lines:
        more = len(statement.bad_lines) - 20
        lines.append(
            "Skipped lines: "
            + ", ".join(f"{b.line} ({b.reason})" for b in statement.bad_lines[:20])
            + (f", and {more} more" if more > 0 else "")
            + " (every one is in the report, outcome skipped)"
        )
    if statement.balance_issues:
        lines.append(
            "Running balance: "
            + "; ".join(f"line {b.line}: {b.reason}" for b in statement.balance_issues[:20])
        )
    return lines


def write_profile_starter(input_path: Path, refused: StatementRefused) -> Path | None:
    """For a file no profile matches: a ready-to-edit profile next to it, ``<stem>.profile.yaml``
    (its header cells guessed into columns), to be fixed and named with ``--profile``. None when
    there is nothing to write or the folder cannot be written to (the error says the rest)."""
    if not isinstance(refused, UnknownLayout) or not refused.template:
        return None
    starter = input_path.with_name(f"{input_path.stem}.profile.yaml")
    try:
        starter.write_text(refused.template, encoding="utf-8")
    except OSError:
        return None
    return starter
