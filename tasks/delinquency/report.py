"""What a run hands back: ``delinquency-plan.csv`` (dry run) or ``delinquency-report.csv``
(applied), a summary and a table artifact on the flow run, keyed by the biller
(``docs/conventions.md`` §9 Reports).

One row per call, and one row for each customer in or leaving a state without a call, so the
file lists every customer the policy has an opinion on: its state before and after, the call (or
why none), its outcome, and the rule that caused it. Reports never claim what the service did
not do in this run: a dry run's rows say ``would send``; an applied run's say what happened.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from ledger.settings import BillopsSettings
from tasks.common.reports import (
    artifact_key,
    neutralise,
    publish_summary,
    publish_table,
    write_csv_atomically,
)
from tasks.delinquency.apply import CallOutcome, Outcome
from tasks.delinquency.plan import CallStatus, Plan, PlannedCall
from tasks.delinquency.snapshot import to_pounds

HEADER = (
    "customer_id",
    "customer",
    "state_before",
    "state_after",
    "move",
    "action",
    "payment_request",
    "payment_request_id",
    "invoice_id",
    "amount",
    "due_on",
    "method",
    "plan",
    "outcome",
    "detail",
    "rule",
)


@dataclass(frozen=True)
class Report:
    """Where the run's report went, and its counts."""

    path: Path
    rows: int
    by_outcome: dict[str, int]


def report_folder(biller: str, plan: Plan, run_id: str) -> Path:
    """``$BILLOPS_HOME/reports/delinquency/<biller>/<day>-<run>/``."""
    home = BillopsSettings().home
    return home / "reports" / "delinquency" / biller / f"{plan.as_of.isoformat()}-{run_id[:8]}"


def _call_row(
    call: PlannedCall, move: str, outcome: CallOutcome | None, dry_run: bool
) -> list[str]:
    if call.status is not CallStatus.SEND:
        result, detail = call.status.value, call.note
        if call.settles and outcome is not None:  # what its earlier attempt was settled as
            detail = f"{detail}; {outcome.detail}"
    elif dry_run:
        result, detail = "would send", call.note
    elif outcome is None:
        result, detail = Outcome.NOT_SENT.value, "not reached in this run"
    else:
        result, detail = outcome.outcome.value, outcome.detail
    return [
        call.customer_id,
        call.customer_name,
        call.before,
        call.after,
        move,
        call.action.value,
        call.target_number,
        call.target_id,
        call.invoice_id,
        f"{call.amount:.2f}",
        call.due_on.isoformat() if call.due_on else "",
        call.method,
        call.status.value,
        result,
        detail,
        call.rule,
    ]


def report_rows(
    plan: Plan, outcomes: Mapping[str, CallOutcome] | None, dry_run: bool
) -> list[list[str]]:
    """Every row of the report (see the module docstring)."""
    involved = plan.evaluation.involved
    moves = dict(zip(involved["customer_id"], involved["move"], strict=True))
    with_calls = {c.customer_id for c in plan.calls}
    rows = [
        _call_row(c, moves.get(c.customer_id, ""), (outcomes or {}).get(c.key), dry_run)
        for c in plan.calls
    ]
    for d in involved.to_dict("records"):
        if d["customer_id"] in with_calls:
            continue
        rows.append(
            [
                d["customer_id"],
                d["name"],
                d["before"],
                d["after"],
                d["move"],
                "none",
                "",
                "",
                "",
                f"{to_pounds(d['unpaid_pence']):.2f}",
                "",
                "",
                "",
                "",
                "no call: the state asks for none, or it is all done already",
                "; ".join(d["reasons"]),
            ]
        )
    return [[neutralise(cell) for cell in row] for row in rows]


def write_report(
    folder: Path, plan: Plan, outcomes: Mapping[str, CallOutcome] | None, dry_run: bool
) -> Report:
    """``delinquency-plan.csv`` for a dry run, ``delinquency-report.csv`` otherwise."""
    rows = report_rows(plan, outcomes, dry_run)
    name = "delinquency-plan.csv" if dry_run else "delinquency-report.csv"
    path = write_csv_atomically(folder / name, HEADER, rows)
    outcome, planned = HEADER.index("outcome"), HEADER.index("plan")
    counts = _count(row[outcome] or row[planned] or "none" for row in rows)
    return Report(path=path, rows=len(rows), by_outcome=counts)


def summary_lines(
    biller: str,
    plan: Plan,
    outcomes: Sequence[CallOutcome],
    *,
    dry_run: bool,
    state: str,
    message: str,
    report: Report,
) -> list[str]:
    """The run's markdown summary."""
    moves = plan.evaluation.involved["move"].value_counts().to_dict()
    in_states = plan.evaluation.decisions["after"].value_counts().to_dict()
    lines = [
        f"# Delinquency: {biller}, {plan.as_of.isoformat()} — {state}",
        "",
        message,
        "",
        f"- policy **{plan.evaluation.policy.name}** ({plan.evaluation.policy.digest})",
        "- customers by state: "
        + (", ".join(f"{k}: {v}" for k, v in sorted(in_states.items()) if k) or "none in a state"),
        "- moves: " + (", ".join(f"{k}: {v}" for k, v in sorted(moves.items())) or "none"),
        f"- calls {'planned' if dry_run else 'made'}: {len(plan.to_send)} for "
        f"{plan.customers_changed} customers, £{plan.amount_changed:,.2f}",
    ]
    made = (o.outcome.value for o in outcomes if o.call.status is CallStatus.SEND)
    for outcome, count in sorted(_count(made).items()):
        lines.append(f"  - {outcome}: {count}")
    deferred = sum(c.status is CallStatus.DEFERRED for c in plan.calls)
    skipped = sum(c.status is CallStatus.SKIPPED for c in plan.calls)
    lines += [
        f"- deferred to the next run: {deferred}; not made on purpose: {skipped}",
        f"- report: `{report.path}`",
    ]
    return lines


def _count(values: Iterable[str]) -> dict[str, int]:
    found: dict[str, int] = {}
    for value in values:
        found[value] = found.get(value, 0) + 1
    return found


def publish(
    biller: str,
    plan: Plan,
    outcomes: Sequence[CallOutcome],
    *,
    dry_run: bool,
    state: str,
    message: str,
    folder: Path,
) -> Report:
    """Write the CSV and hang the summary and the table on the flow run."""
    by_key = {o.call.key: o for o in outcomes}
    report = write_report(folder, plan, by_key, dry_run)
    key = artifact_key("delinquency", biller)
    publish_summary(
        summary_lines(
            biller, plan, outcomes, dry_run=dry_run, state=state, message=message, report=report
        ),
        key=f"{key}-summary",
    )
    rows = [dict(zip(HEADER, row, strict=True)) for row in report_rows(plan, by_key, dry_run)]
    publish_table(
        rows,
        key=f"{key}-plan" if dry_run else f"{key}-report",
        description=f"Delinquency {'plan' if dry_run else 'report'} for {biller}",
        where_all=str(report.path),
    )
    return report
