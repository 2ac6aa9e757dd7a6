"""The journal a bookkeeper imports: the clearing-account method (``docs/conventions.md`` §16
The payout journal export).

The service's collections sit in a clearing account until a payout moves them to the bank (with
Xero connected the service books invoices into such an account itself, ``docs/service.md`` §6
Payouts). So, for the period:

- each **deduction** (a payment that failed after it was paid out) is owed again on its
  invoice: debit receivables, credit clearing, on the payout's arrival date;
- each **payout the bank credited** is a transfer: debit the bank with each credit, credit the
  clearing account with each payout, and any difference to the differences (suspense) account,
  on the credit's booking date. A payout still in transit, missing or only suggested has no
  transfer yet.

Every journal balances (debits = credits); amounts are pounds with two decimals.
"""

from __future__ import annotations

from collections.abc import Iterator

import numpy as np
import pandas as pd

from tasks.payouts._balance import PAID_OUT
from tasks.payouts._items import as_date
from tasks.payouts._profiles import DEDUCTION
from tasks.payouts._reconcile import Reconciliation
from tasks.payouts._records import records, records_at
from tasks.payouts.settings import JournalAccounts

JOURNAL_HEADER = (
    "date",
    "journal",
    "entry",
    "account",
    "debit",
    "credit",
    "reference",
    "description",
    "payout_id",
    "document",
    "payment_id",
)


def _pounds(pennies: int) -> str:
    return f"{int(pennies) // 100}.{int(pennies) % 100:02d}" if pennies >= 0 else ""


def _line(
    day: object, journal: str, entry: str, account: str, debit: int, credit: int, **rest: str
) -> list[str]:
    return [
        str(day),
        journal,
        entry,
        account,
        _pounds(debit) if debit else "",
        _pounds(credit) if credit else "",
        rest.get("reference", ""),
        rest.get("description", ""),
        rest.get("payout_id", ""),
        rest.get("document", ""),
        rest.get("payment_id", ""),
    ]


def journal_lines(reconciliation: Reconciliation, accounts: JournalAccounts) -> Iterator[list[str]]:
    """The journal's lines (see the module docstring), in date order."""
    entries = list(_deductions(reconciliation, accounts)) + list(
        _transfers(reconciliation, accounts)
    )
    entries.sort(key=lambda lines: (lines[0][0], lines[0][1]))
    for lines in entries:
        yield from lines


def _deductions(
    reconciliation: Reconciliation, accounts: JournalAccounts
) -> Iterator[list[list[str]]]:
    period = set(reconciliation.in_period()["payout_id"].tolist())
    items = reconciliation.items
    # The deductions first (a few hundred), then which of them are the period's, by their
    # payout ids in a set: a look-up of every item's payout id would cost more than the
    # journal. Only the columns a line reads are taken at those rows (``records_at``), not every
    # column of the items.
    used = ["amount", "arrival_date", "reference", "position", "payout_id", "doc", "payment_id"]
    rows = np.flatnonzero((items["kind"] == DEDUCTION).to_numpy(dtype=bool))
    ids = items["payout_id"].iloc[rows].tolist()
    chosen = rows[np.array([p in period for p in ids], dtype=bool)] if len(rows) else rows
    for row in records_at(items, chosen, used):
        amount = -int(row["amount"])
        day = as_date(row["arrival_date"])
        journal = f"{row['reference']}-D{int(row['position'])}"
        about = {
            "reference": str(row["reference"]),
            "payout_id": str(row["payout_id"]),
            "document": str(row["doc"]),
            "payment_id": str(row["payment_id"]),
            "description": (
                f"failed payment deducted from payout {row['reference']}: {row['doc']} owed again"
            ),
        }
        yield [
            _line(day, journal, "deduction", accounts.receivables_account, amount, 0, **about),
            _line(day, journal, "deduction", accounts.clearing_account, 0, amount, **about),
        ]


def _transfers(
    reconciliation: Reconciliation, accounts: JournalAccounts
) -> Iterator[list[list[str]]]:
    # Plain dicts, not .loc: a year is hundreds of links, each looked up several times. Built
    # from the columns they hold only, by whole columns (``_records``).
    payouts = {
        str(r["payout_id"]): (str(r["reference"]), int(r["amount"]))
        for r in records(reconciliation.payouts, ["payout_id", "reference", "amount"])
    }
    credits = {
        str(r["key"]): (as_date(r["booked_on"]), int(r["amount"]), str(r["reference"]))
        for r in records(reconciliation.credits, ["key", "booked_on", "amount", "reference"])
    }
    period = set(reconciliation.in_period()["payout_id"].tolist())
    for link in reconciliation.matches.links:
        if link.state not in PAID_OUT or not any(p in period for p in link.payouts):
            continue
        days = [credits[c][0] for c in link.credits]
        if max(days) > reconciliation.last:
            continue  # credited after the period: in transit at its end
        refs = [payouts[p][0] for p in link.payouts]
        journal = "+".join(refs)
        day = max(days)
        lines = [
            _line(
                d,
                journal,
                "transfer",
                accounts.bank_account,
                credits[c][1],
                0,
                reference=journal,
                description=f"payout credited: {credits[c][2]}",
            )
            for c, d in zip(link.credits, days, strict=True)
        ]
        lines += [
            _line(
                day,
                journal,
                "transfer",
                accounts.clearing_account,
                0,
                payouts[p][1],
                reference=payouts[p][0],
                payout_id=p,
                description="payout moved from the clearing account to the bank",
            )
            for p in link.payouts
        ]
        if link.difference:
            debit, credit = (0, link.difference) if link.difference > 0 else (-link.difference, 0)
            lines.append(
                _line(
                    day,
                    journal,
                    "difference",
                    accounts.differences_account,
                    debit,
                    credit,
                    reference=journal,
                    description="the bank credited a different amount",
                )
            )
        yield lines


def journal_frame(lines: list[list[str]]) -> pd.DataFrame:
    """Journal lines as a frame (tests and checks: debits equal credits per journal)."""
    return pd.DataFrame(lines, columns=list(JOURNAL_HEADER))
