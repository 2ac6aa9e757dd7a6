"""The bank job's steps: read and plan a statement, remember the lines to record, record their
payments in chunks, mark them done, report.

Pure composition of the package's functions; the ``@task`` wrappers are batch-sized (one task to
read and plan a whole file, one per chunk of payments, one for the reports): never one per line.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from decimal import Decimal
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow.compute as pc
from prefect import task
from prefect.cache_policies import NO_CACHE

from ledger import Ledger, OperationState
from ledger.bank import BankLine, OpenItemSnapshot, PlannedPayment
from tasks.bank_payments._keys import line_keys
from tasks.bank_payments._match import FULL, Allocation
from tasks.bank_payments._owed import (
    OpenItem,
    fetch_open_items,
    items_frame,
    refresh_open_items,
)
from tasks.bank_payments._plan import Plan, PlannedLine, Resumed, plan_statement
from tasks.bank_payments._profiles import Profile
from tasks.bank_payments._read import OnBadLines, read_statement
from tasks.bank_payments._record import (
    PaidSoFar,
    Payment,
    Recorded,
    confirmed,
    operation_key,
    record_payments,
)
from tasks.bank_payments._references import alias_table
from tasks.bank_payments._statement import Statement, pounds
from tasks.bank_payments.report import summary_markdown, write_reports
from tasks.bank_payments.settings import BankSettings
from tasks.common.reports import artifact_key, publish_summary, publish_table
from tasks.common.session import BillerSession
from tasks.common.workers import CLAIMS, worker_name
from tasks.common.write_once import SendBudget

CHUNK = 200
# A snapshot older than this is not refreshed but fetched whole again, so a change the refresh
# could miss (the service's clock far off ours) cannot outlive a day.
FULL_REFRESH_AFTER = timedelta(days=1)
CLOCK_MARGIN = timedelta(minutes=15)


@dataclass
class Prepared:
    """A statement planned for one biller: the plan, what is paid on each invoice already
    (pennies, for the look-up after a lost answer), and the lines resumed from earlier runs."""

    plan: Plan
    paid: dict[str, int]
    resumed: set[str]


def _dates(statement: Statement) -> tuple[date, date]:
    days = statement.lines.column("date")
    found = pc.min_max(days).as_py()
    return found["min"], found["max"]


def _owed(session: BillerSession, run_id: str, keep_snapshot: bool) -> list[OpenItem]:
    """What is open: refreshed from the biller's latest snapshot by what changed since (less a
    margin for clocks that disagree) when that snapshot is recent, else fetched whole."""
    started = datetime.now(UTC)
    latest = session.ledger.latest_open_items(session.biller_id) if keep_snapshot else None
    if latest is not None and started - latest.taken_at < FULL_REFRESH_AFTER:
        previous = [_item(s) for s in latest.items]
        items = refresh_open_items(session.client, previous, latest.taken_at - CLOCK_MARGIN)
    else:
        items = fetch_open_items(session.client)
    if keep_snapshot:
        snapshots = [_snapshot(i) for i in items]
        session.ledger.record_open_items(session.biller_id, run_id, snapshots, taken_at=started)
    return items


def keep_open_items(session: BillerSession, run_id: str) -> list[OpenItem]:
    """What is open for the biller, refreshed as a statement's plan would refresh it and kept as
    the ledger's latest snapshot: a payment or invoice event at the service asks for this, so the
    next statement plans against what is owed now."""
    return _owed(session, run_id, keep_snapshot=True)


def plan_file(
    session: BillerSession,
    path: Path,
    *,
    profile: Profile | None,
    on_bad_lines: OnBadLines,
    run_id: str,
    settings: BankSettings | None = None,
    keep_snapshot: bool = True,
    today: date | None = None,
    statement: Statement | None = None,
) -> Prepared:
    """Read the file, fetch what is owed (kept in the ledger per run), and plan every line:
    lines done before are duplicates, lines an earlier run began are resumed as planned then.

    ``keep_snapshot=False`` writes nothing to the ledger (the preview); ``statement``: the file
    read already (the preview reads it first, to report a refused file before asking anyone).
    """
    settings = settings or BankSettings()
    if statement is None:
        statement = read_statement(path, profile=profile, on_bad_lines=on_bad_lines, today=today)
    items = _owed(session, run_id, keep_snapshot)
    first, last = _dates(statement)
    seen = session.ledger.bank_lines_between(session.biller_id, first, last)
    done = {line.line_key for line in seen if line.done}
    resumed = {
        line.line_key: Resumed(line.outcome, [_allocation(p) for p in line.payments], line.run_id)
        for line in seen
        if not line.done
    }
    frame = items_frame(items)
    frame = _less_in_doubt(session.ledger, session.biller_id, frame, seen)
    aliases = alias_table(frame["key"].tolist() or ["INV", "PR"], settings.reference_aliases)
    keys = line_keys(statement.lines)
    plan = plan_statement(
        statement,
        frame,
        done_keys=done,
        resumed=resumed,
        keys=keys,
        rules=settings.classify,
        aliases=aliases,
    )
    paid = {i.id: i.paid for i in items if i.kind == "invoice"}
    return Prepared(plan, paid, set(resumed))


def _allocation(payment: PlannedPayment) -> Allocation:
    return Allocation(payment.kind, payment.item_id, payment.number, payment.pennies)


def _less_in_doubt(
    ledger: Ledger, biller_id: str, items: pd.DataFrame, seen: Sequence[BankLine]
) -> pd.DataFrame:
    """Open items less the payments earlier runs began and did not see confirmed: that money may
    have reached the service already, so no other line is given it."""
    pending: dict[str, int] = {}
    for line in seen:
        if line.done:
            continue
        for payment in line.payments:
            op = ledger.get(operation_key(biller_id, line.line_key, payment.item_id))
            if op is None or op.state is not OperationState.CONFIRMED:
                pending[payment.item_id] = pending.get(payment.item_id, 0) + payment.pennies
    if not pending:
        return items
    due = items["due"] - items["id"].map(pending).fillna(0).astype("int64")
    return items.assign(due=due.clip(lower=0))[due > 0].reset_index(drop=True)


def _snapshot(item: OpenItem) -> OpenItemSnapshot:
    return OpenItemSnapshot(
        item.kind,
        item.id,
        item.number,
        item.reference,
        item.customer,
        pounds(item.due),
        item.due_date,
        item.status,
        pounds(item.paid),
    )


def _item(snapshot: OpenItemSnapshot) -> OpenItem:
    return OpenItem(
        snapshot.kind,
        snapshot.item_id,
        snapshot.number,
        snapshot.reference,
        snapshot.customer,
        int(snapshot.due * 100),
        snapshot.due_date,
        snapshot.status,
        int(snapshot.paid * 100),
    )


def lines_to_record(prepared: Prepared, *, exact_only: bool = False) -> list[PlannedLine]:
    """The lines whose payments a run records: lines resumed from an earlier run first (their
    items wait on them), then the rest in file order; with ``exact_only`` (the unattended
    nightly run) only exact, full matches besides the resumed ones."""
    chosen = prepared.plan.recordable()
    if exact_only:
        chosen = [ln for ln in chosen if ln.outcome == FULL or ln.key in prepared.resumed]
    return sorted(chosen, key=lambda ln: (ln.key not in prepared.resumed, ln.index))


def payments_of(lines: Sequence[PlannedLine]) -> list[Payment]:
    """Every payment of ``lines``, in order."""
    return [
        Payment(ln.line, ln.key, a.kind, a.id, a.number, a.pennies)
        for ln in lines
        for a in ln.allocations
    ]


def chunks(payments: Sequence[Payment], size: int = CHUNK) -> list[list[Payment]]:
    """Payments in chunks of ``size`` (one task each)."""
    return [list(payments[i : i + size]) for i in range(0, len(payments), size)]


def start_lines(
    ledger: Ledger, biller_id: str, plan: Plan, lines: Sequence[PlannedLine], *, run_id: str
) -> None:
    """Remember the lines about to be recorded, with their payments, before anything is sent."""
    ledger.start_bank_lines(
        biller_id,
        [
            BankLine(
                ln.key,
                plan.statement.sha256,
                ln.line,
                ln.date,
                ln.amount,
                ln.klass,
                ln.outcome,
                False,
                tuple(PlannedPayment(a.kind, a.id, a.number, a.pennies) for a in ln.allocations),
                run_id,
            )
            for ln in lines
        ],
        run_id=run_id,
    )


def record_chunk(
    session: BillerSession,
    payments: list[Payment],
    *,
    paid: dict[str, int],
    run_id: str,
    budget: SendBudget | None = None,
) -> list[Recorded]:
    """Record one chunk's payments through the write-once protocol. ``paid`` (what each invoice
    has paid so far in pennies) is shared by the run's chunks, which run one after another."""
    return record_payments(
        session.client,
        session.ledger,
        payments,
        biller_id=session.biller_id,
        run_id=run_id,
        worker=worker_name(),
        paid=PaidSoFar(paid),
        claims=CLAIMS,
        budget=budget,
    )


def finish_lines(
    ledger: Ledger, biller_id: str, recorded: Sequence[Recorded], *, run_id: str
) -> list[str]:
    """Mark done the lines whose payments are all settled (recorded, or refused for good); the
    others stay open for the next run, which resumes them. Returns the keys marked done."""
    settled: dict[str, bool] = {}
    for r in recorded:
        settled[r.line_key] = settled.get(r.line_key, True) and r.settled
    done = [key for key, ok in settled.items() if ok]
    ledger.finish_bank_lines(biller_id, done, run_id=run_id)
    return done


def publish(
    plan: Plan, recorded: Sequence[Recorded], path: Path, *, biller: str, dry_run: bool
) -> tuple[Path, Path]:
    """Reports next to the file, and the artifacts on the run (keyed by biller and file)."""
    report, review = write_reports(plan, recorded, path, dry_run=dry_run)
    key = artifact_key("bank", biller, path.stem)
    publish_summary(
        summary_markdown(plan, recorded, biller=biller, dry_run=dry_run), key=f"{key}-summary"
    )
    shown = plan.take(np.arange(min(plan.count, 500)))
    rows = [
        {
            "line": ln.line,
            "date": ln.date.isoformat(),
            "amount": str(ln.amount),
            "class": ln.klass,
            "payer": ln.payer,
            "reference": ln.reference,
            "matches": " ".join(a.number for a in ln.allocations),
            "outcome": ln.outcome,
            "suggestions": " ".join(n for n, _c in ln.suggestions),
        }
        for ln in shown
    ]
    description = "Every statement line"
    if plan.count > len(shown):
        description += f" (the first {len(shown)}; all {plan.count} are in {report})"
    publish_table(rows, key=f"{key}-preview", description=description)
    return report, review


# No task retries: reading is deterministic (a refused file stays refused), and the client
# already retries what the service may answer differently a moment later (429, 5xx).
plan_file_task = task(name="read-and-plan-statement", cache_policy=NO_CACHE)(plan_file)
record_chunk_task = task(name="record-bank-payments", cache_policy=NO_CACHE)(record_chunk)
publish_task = task(name="bank-reports", cache_policy=NO_CACHE)(publish)
keep_open_items_task = task(name="refresh-open-items-snapshot", cache_policy=NO_CACHE)(
    keep_open_items
)


def money_recorded(recorded: Sequence[Recorded]) -> Decimal:
    """Money recorded at the service by this run."""
    return sum((r.amount for r in recorded if confirmed(r.state) and r.sent_now), Decimal("0.00"))
