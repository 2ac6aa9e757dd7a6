"""What a reconciliation hands back to people (``docs/conventions.md`` §9 Reports):

- ``reconciliation.csv``: one row per payout of the period with every check, its state and the
  reasons, and one per bank credit from the service that no payout of the period explains;
- ``exceptions.csv``: only what needs a person — payouts not matched or in transit, items the
  service disagrees with, unexpected and suggested credits — each with what to do;
- ``journal.csv``: the clearing-account journal (``_journal``);
- ``rollup.csv``: the money per day, then per month: opening in transit, collected,
  deductions, paid out, closing in transit (``_balance``);
- ``reconciliation.png``: the picture (``_chart``);
- a markdown summary that ties out (opening in transit + collected − deductions − paid out =
  closing in transit) and a table of the payouts, on the flow run.

Every CSV goes through the shared writer (formula cells neutralised, atomic, UTF-8 with BOM).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from tasks.common.reports import write_csv_atomically
from tasks.payouts._balance import Balance
from tasks.payouts._items import as_date
from tasks.payouts._match import (
    IN_TRANSIT,
    ITEM_MISMATCH,
    MATCHED,
    MISSING,
    SUGGESTED,
    UNEXPECTED,
    WITH_DIFFERENCE,
)
from tasks.payouts._reconcile import Reconciliation, money
from tasks.payouts._records import records, records_at

RECONCILIATION_HEADER = (
    "state",
    "kind",
    "payout_id",
    "reference",
    "date",
    "payout_amount",
    "items",
    "payments",
    "deductions",
    "items_net",
    "check_items",
    "check_bank",
    "bank_credit_dates",
    "bank_credited",
    "bank_difference",
    "confidence",
    "check_service",
    "deductions_explained",
    "reasons",
)
# The payout columns ``reconciliation.csv`` reads (``_records``: only these are converted).
PAYOUT_ROW = (
    "state",
    "payout_id",
    "reference",
    "arrival_date",
    "amount",
    "items",
    "gross",
    "deductions",
    "items_net",
    "items_difference",
    "check_bank",
    "credit_days",
    "credit_keys",
    "bank_amount",
    "bank_difference",
    "confidence",
    "bad_items",
    "deduction_notes",
    "reasons",
)
# The item columns an exception line reads.
ITEM_ROW = ("payout_id", "reference", "arrival_date", "amount", "doc", "line", "note")
# The payout and credit columns an exception line reads, and those of a credit no payout of
# the period explains in ``reconciliation.csv`` (only these are converted).
EXCEPTION_PAYOUT = (
    "state",
    "payout_id",
    "reference",
    "arrival_date",
    "amount",
    "bank_difference",
    "items_difference",
    "reasons",
)
EXCEPTION_CREDIT = ("state", "payout_ids", "reference", "booked_on", "amount", "line", "how")
LONE_CREDIT = ("state", "reference", "booked_on", "amount", "line", "how", "payer", "text")
EXCEPTIONS_HEADER = (
    "state",
    "kind",
    "payout_id",
    "reference",
    "date",
    "amount",
    "difference",
    "document",
    "report_line",
    "reason",
    "what_to_do",
)
WHAT_TO_DO = {
    MISSING: "ask the service about this payout (quote its reference); check the bank statement "
    "covers the days after its arrival date",
    ITEM_MISMATCH: "look at the named invoices and payment requests at the service and in the "
    "payout report",
    WITH_DIFFERENCE: "ask the service why the bank credited a different amount",
    SUGGESTED: "confirm or reject the pair: only the amount and the date agree",
    UNEXPECTED: "find the payout this credit pays: load the payout report that shows it",
}


ROLLUP_HEADER = (
    "period",
    "from",
    "to",
    "opening_in_transit",
    "collected",
    "deductions",
    "paid_out",
    "closing_in_transit",
)


@dataclass(frozen=True)
class ReportFiles:
    """Where a run's files are."""

    reconciliation: Path
    exceptions: Path
    journal: Path
    picture: Path
    rollup: Path


def report_files(folder: Path, stem: str | None) -> ReportFiles:
    """``<stem>.reconciliation.csv`` etc. next to a report, or plain names in ``folder``."""
    prefix = f"{stem}." if stem else ""
    return ReportFiles(
        folder / f"{prefix}reconciliation.csv",
        folder / f"{prefix}exceptions.csv",
        folder / f"{prefix}journal.csv",
        folder / f"{prefix}reconciliation.png",
        folder / f"{prefix}rollup.csv",
    )


def _pounds(pennies: object) -> str:
    value = int(pennies)  # type: ignore[call-overload]
    sign = "-" if value < 0 else ""
    return f"{sign}{abs(value) // 100}.{abs(value) % 100:02d}"


def payout_rows(reconciliation: Reconciliation) -> Iterator[list[str]]:
    """``reconciliation.csv``'s rows: the period's payouts, then credits no payout explains."""
    for r in records(reconciliation.in_period(), PAYOUT_ROW):
        check_items = (
            "ok" if r["items_difference"] == 0 else f"differs by {money(r['items_difference'])}"
        )
        check_service = (
            "ok" if r["bad_items"] == 0 else f"{r['bad_items']} of {r['items']} items disagree"
        )
        yield [
            r["state"],
            "payout",
            r["payout_id"],
            r["reference"],
            str(as_date(r["arrival_date"])),
            _pounds(r["amount"]),
            str(r["items"]),
            _pounds(r["gross"]),
            _pounds(r["deductions"]),
            _pounds(r["items_net"]),
            check_items,
            r["check_bank"],
            r["credit_days"],
            _pounds(r["bank_amount"]) if r["credit_keys"] else "",
            _pounds(r["bank_difference"]) if r["credit_keys"] else "",
            f"{r['confidence']:.2f}" if r["check_bank"] == SUGGESTED else "",
            check_service,
            r["deduction_notes"],
            r["reasons"],
        ]
    credits = reconciliation.credits_in_period()
    for r in records_at(credits, _lone_credits(reconciliation, credits), LONE_CREDIT):
        yield [
            r["state"],
            "credit",
            "",
            r["reference"],
            str(as_date(r["booked_on"])),
            "",
            "",
            "",
            "",
            "",
            "",
            r["state"],
            str(as_date(r["booked_on"])),
            _pounds(r["amount"]),
            "",
            "",
            "",
            "",
            f"bank line {r['line']}: {r['how']} ({r['payer']} {r['text']})".strip(),
        ]


def _lone_credits(reconciliation: Reconciliation, credits: pd.DataFrame) -> list[int]:
    """The rows of the period's ``credits`` that pay none of its payouts."""
    period = set(reconciliation.in_period()["payout_id"].tolist())
    ids = credits["payout_ids"].tolist()
    return [n for n, i in enumerate(ids) if not any(p in period for p in str(i).split())]


def exception_rows(reconciliation: Reconciliation) -> Iterator[list[str]]:
    """``exceptions.csv``'s rows: only what needs a person."""
    period = reconciliation.in_period()
    attention = np.flatnonzero(period["needs_attention"].to_numpy(dtype=bool))
    for r in records_at(period, attention, EXCEPTION_PAYOUT):
        yield [
            r["state"],
            "payout",
            r["payout_id"],
            r["reference"],
            str(as_date(r["arrival_date"])),
            _pounds(r["amount"]),
            _pounds(r["bank_difference"] or r["items_difference"]),
            "",
            "",
            r["reasons"],
            WHAT_TO_DO.get(str(r["state"]), ""),
        ]
    items = reconciliation.items
    # The lines that disagree first (a few), then which of them are the period's, by their
    # payout ids in a set: a look-up of every item's payout id would cost more than writing the
    # file. Only the columns a line reads are taken at those rows (a year's items have twenty).
    wrong = np.flatnonzero(~items["ok"].astype(bool).to_numpy(dtype=bool))
    ids = set(period["payout_id"].tolist())
    named = items["payout_id"].iloc[wrong].tolist()
    bad = [int(i) for i, p in zip(wrong, named, strict=True) if p in ids]
    for r in records_at(items, bad, ITEM_ROW):
        yield [
            ITEM_MISMATCH,
            "item",
            r["payout_id"],
            r["reference"],
            str(as_date(r["arrival_date"])),
            _pounds(r["amount"]),
            "",
            r["doc"],
            str(r["line"] or ""),
            r["note"],
            WHAT_TO_DO[ITEM_MISMATCH],
        ]
    credits = reconciliation.credits_in_period()
    states = credits["state"].tolist()
    doubtful = [n for n, state in enumerate(states) if state in (UNEXPECTED, SUGGESTED)]
    for r in records_at(credits, doubtful, EXCEPTION_CREDIT):
        yield [
            r["state"],
            "credit",
            r["payout_ids"],
            r["reference"],
            str(as_date(r["booked_on"])),
            _pounds(r["amount"]),
            "",
            "",
            "",
            f"bank line {r['line']}: {r['how']}",
            WHAT_TO_DO[str(r["state"])],
        ]


def write_reports(
    reconciliation: Reconciliation, journal: list[list[str]], files: ReportFiles
) -> ReportFiles:
    """The three CSV files (the picture is drawn separately)."""
    from tasks.payouts._journal import JOURNAL_HEADER

    write_csv_atomically(files.reconciliation, RECONCILIATION_HEADER, payout_rows(reconciliation))
    write_csv_atomically(files.exceptions, EXCEPTIONS_HEADER, exception_rows(reconciliation))
    write_csv_atomically(files.journal, JOURNAL_HEADER, journal)
    return files


def rollup_rows(balance: Balance) -> Iterator[list[str]]:
    """``rollup.csv``'s rows: each day of the period, then each month (the part of it in the
    period); every row ties out (opening + collected − deductions − paid out = closing)."""
    for d in records(balance.daily):
        moved = d["collected"] - d["deductions"] - d["paid_out"]
        day = str(d["day"])
        yield [
            "day",
            day,
            day,
            _pounds(d["in_transit"] - moved),
            _pounds(d["collected"]),
            _pounds(d["deductions"]),
            _pounds(d["paid_out"]),
            _pounds(d["in_transit"]),
        ]
    days = [str(d) for d in balance.daily["day"].tolist()]
    for m in records(balance.monthly()):
        inside = [d for d in days if d.startswith(str(m["month"]))]
        yield [
            "month",
            inside[0],
            inside[-1],
            _pounds(m["opening"]),
            _pounds(m["collected"]),
            _pounds(m["deductions"]),
            _pounds(m["paid_out"]),
            _pounds(m["in_transit"]),
        ]


def write_rollup(balance: Balance, files: ReportFiles) -> Path:
    """``rollup.csv`` (:func:`rollup_rows`)."""
    write_csv_atomically(files.rollup, ROLLUP_HEADER, rollup_rows(balance))
    return files.rollup


def summary_markdown(
    reconciliation: Reconciliation,
    balance: Balance,
    counts: dict[str, int],
    files: ReportFiles,
    *,
    biller: str,
) -> list[str]:
    """The run's summary for people: the tie-out, the states, the files (with the picture)."""
    lines = [
        f"# Payout reconciliation: {biller}, {balance.first} to {balance.last}",
        "",
        "| | |",
        "|---|---:|",
        f"| In transit on {balance.first} (opening) | {money(balance.opening)} |",
        f"| + collected (payments in payouts) | {money(balance.collected)} |",
        f"| − deductions (late failures) | {money(balance.deductions)} |",
        f"| − paid out (bank credits for payouts) | {money(balance.paid_out)} |",
        f"| **= in transit on {balance.last} (closing)** | **{money(balance.closing)}** |",
        "",
        f"The closing balance is: payouts of the period not yet credited {money(balance.awaiting)}"
        f"; differences on payouts credited {money(balance.differences)}; from before the period"
        f" {money(balance.earlier)}.",
        "",
        "| state | count |",
        "|---|---:|",
        *[f"| {state} | {count} |" for state, count in counts.items()],
        "",
    ]
    shown = [
        s for s in (MISSING, ITEM_MISMATCH, WITH_DIFFERENCE, SUGGESTED, UNEXPECTED) if counts.get(s)
    ]
    needs = ", ".join(f"{counts[s]} {s}" for s in shown)
    lines.append(
        f"**Needs a person:** {needs}; see the exceptions file."
        if shown
        else f"Nothing needs a person: every payout is {MATCHED} or {IN_TRANSIT}."
    )
    lines += [
        "",
        f"![payouts and bank credits by day]({files.picture.as_uri()})",
        "",
        f"- picture: [{files.picture.name}]({files.picture.as_uri()}) (`{files.picture}`)",
        f"- every payout: `{files.reconciliation}`",
        f"- what needs a person: `{files.exceptions}`",
        f"- journal (clearing-account method): `{files.journal}`",
        f"- per day and per month: `{files.rollup}`",
        "",
        "| month | opening | collected | deductions | paid out | closing |",
        "|---|---:|---:|---:|---:|---:|",
    ]
    for m in records(balance.monthly()):
        lines.append(
            f"| {m['month']} | {money(m['opening'])} | {money(m['collected'])} | "
            f"{money(m['deductions'])} | {money(m['paid_out'])} | {money(m['in_transit'])} |"
        )
    return lines


def table_rows(reconciliation: Reconciliation) -> list[dict[str, object]]:
    """The table artifact: one row per payout of the period (and lone credits)."""
    return [
        dict(zip(RECONCILIATION_HEADER, row, strict=True)) for row in payout_rows(reconciliation)
    ]
