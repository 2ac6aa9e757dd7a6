"""What one run reconciles, gathered from the ledger (and the report in hand): the period, and
the payouts, items and credits of a window of working days around it.

The period is what the caller names, else the report's arrival dates (a report given), else
the last :data:`DEFAULT_DAYS` days up to the last day the ledger knows of (payouts or bank
statements), reaching back to the oldest payout not yet matched — never the machine's clock, so
a rerun on the same data says the same. The window
reaches ``window`` working days (and one more) before the period, for payouts whose credit falls
inside it, and as far after it, for credits of the period's last payouts.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import date, datetime, time, timedelta
from zoneinfo import ZoneInfo

import numpy as np
import pandas as pd

from billing_api import BillingClient
from ledger import Ledger
from ledger.payouts import PayoutCredit, PayoutRecord
from tasks.common.working_days import add_working_days
from tasks.payouts._credits import credits_frame
from tasks.payouts._items import as_date, empty_items, from_ledger, payouts_from_records
from tasks.payouts._match import MATCHED, WITH_DIFFERENCE
from tasks.payouts._profiles import DEDUCTION, PAYMENT
from tasks.payouts._reconcile import Scope
from tasks.payouts._records import values_at
from tasks.payouts._report import PayoutReport
from tasks.payouts._service import document_numbers, fetch_documents
from tasks.payouts._text import chosen as chosen_texts
from tasks.payouts._text import is_in, texts

DEFAULT_DAYS = 31
DOCUMENT_LOOKBACK_DAYS = 14  # a document is updated when paid (before its payout) and paid out
LONDON = ZoneInfo("Europe/London")


def choose_period(
    ledger: Ledger,
    biller: str,
    report: PayoutReport | None,
    start: date | None,
    end: date | None,
) -> tuple[date, date] | None:
    """The period to report (see the module docstring); None when nothing is known yet."""
    span = ledger.payout_span(biller)
    coverage = ledger.bank_coverage(biller)
    known = [d for pair in (span, coverage) if pair for d in pair]
    if report is not None and report.first_day is not None:
        first, last = as_date(report.first_day), as_date(report.last_day)
    elif known:
        last = max(known)
        first = max(min(known), last - timedelta(days=DEFAULT_DAYS - 1))
        open_days = [r.day for r in ledger.payout_results(biller, "payout") if r.state != MATCHED]
        first = min([first, *open_days])  # what is still open stays in the report
    else:
        return None
    first, last = start or first, end or last
    if first > last:
        raise ValueError(f"the period starts ({first}) after it ends ({last})")
    return first, last


Documents = Callable[[set[str], set[str], datetime], pd.DataFrame]


def from_the_service(client: BillingClient) -> Documents:
    """The named invoices and payment requests, fetched through ``client`` (read only)."""

    def fetch(invoices: set[str], requests: set[str], since: datetime) -> pd.DataFrame:
        return fetch_documents(client, invoices=invoices, requests=requests, since=since)

    return fetch


def gather(
    ledger: Ledger,
    documents: Documents,
    biller: str,
    period: tuple[date, date],
    *,
    report: PayoutReport | None,
    window: int,
) -> Scope:
    """The scope of one reconciliation (see the module docstring); ``documents`` answers which
    invoices and payment requests the service holds (:func:`from_the_service`)."""
    first, last = period
    since = add_working_days(first, -(window + 1))
    until = add_working_days(last, window + 1)
    records = ledger.payouts_between(biller, since, last)
    payouts = payouts_from_records(records)
    items = _items(ledger, biller, records, report)
    credits = credits_frame(_open_credits(ledger, biller, since, until, records))
    history, twice, repeated = _history(
        ledger, biller, items, records, *_repeated(report, records, items)
    )
    requests, numbers = document_numbers(history)  # the scope's items are among them
    moment = datetime.combine(since - timedelta(days=DOCUMENT_LOOKBACK_DAYS), time(0), LONDON)
    found = documents(_distinct(numbers, ~requests), _distinct(numbers, requests), moment)
    return Scope(
        first=first,
        last=last,
        payouts=payouts,
        items=items,
        credits=credits,
        coverage=ledger.bank_coverage(biller),
        documents=found,
        history=history,
        twice=twice,
        window=window,
        repeated=repeated,
    )


def _open_credits(
    ledger: Ledger, biller: str, since: date, until: date, records: list[PayoutRecord]
) -> list[PayoutCredit]:
    """The credits booked from ``since`` to ``until``, but those an earlier run found paying
    payouts outside this scope only: the days around the period hold the credits of the
    neighbouring periods' payouts (last month's last payout credited a day or two later), and
    without those payouts here they would be unexpected again, or suggested for a payout of the
    same amount, and the in-transit balance carried into the period would lose them."""
    in_scope = {r.payout_id for r in records}
    settled = {
        r.subject_id
        for r in ledger.payout_results(biller, "credit")
        if r.state in (MATCHED, WITH_DIFFERENCE) and r.linked and not in_scope & set(r.linked)
    }
    found = ledger.payout_credits_between(biller, since, until)
    return [c for c in found if c.line_key not in settled]


def _items(
    ledger: Ledger,
    biller: str,
    records: list[PayoutRecord],
    report: PayoutReport | None,
) -> pd.DataFrame:
    """The scope's items: the report's own (with their lines) and the ledger's for the rest."""
    in_report = set(report.payouts["payout_id"]) if report is not None else set()
    others = [r for r in records if r.payout_id not in in_report]
    parts = []
    if report is not None:
        wanted = {r.payout_id for r in records}
        if in_report <= wanted:  # every item of the report: no look-up of each one's payout
            parts.append(report.items)
        else:
            parts.append(report.items[report.items["payout_id"].isin(list(wanted))])
    if others:
        parts.append(
            from_ledger(ledger.payout_items(biller, [r.payout_id for r in others]), others)
        )
    if not parts:
        return empty_items()
    return (
        pd.concat(parts, ignore_index=True) if len(parts) > 1 else parts[0].reset_index(drop=True)
    )


def _repeated(
    report: PayoutReport | None, records: list[PayoutRecord], items: pd.DataFrame
) -> tuple[frozenset[str] | None, np.ndarray | None]:
    """The payment ids on more than one of the scope's items, when its items are all the
    report's (:func:`_items`): an id on two of them is on two of the report's lines; and those
    lines, when the items are every line of the report, in its order (else None: not known)."""
    if report is None or report.repeated_payments is None:
        return None, None
    in_report = set(report.payouts["payout_id"].tolist())
    if not all(r.payout_id in in_report for r in records):
        return None, None
    repeated = report.repeated_payments
    return repeated.ids, (repeated.lines if len(items) == len(report.items) else None)


def _history(
    ledger: Ledger,
    biller: str,
    items: pd.DataFrame,
    records: list[PayoutRecord],
    repeated: frozenset[str] | None = None,
    repeated_lines: np.ndarray | None = None,
) -> tuple[pd.DataFrame, dict[str, list[str]], np.ndarray | None]:
    """Items of any payout that pair deductions with payments: the scope's, every deduction the
    ledger knows, and the payments those deductions name (by payment id, or by document where a
    deduction names no payment); and the payments more than one payout paid out. The ledger
    keeps a payout's items as one block, so both look at every payout's items at once: the
    scope's as given, the others' read from the ledger (``records``: the scope's payouts, whose
    items ``items`` holds; ``repeated``: the payment ids on more than one of ``items``' lines,
    and ``repeated_lines`` those lines, when known); and those lines of the history, when
    it is the scope's items (else None)."""
    table, known_records = ledger.all_payout_items(biller, besides={r.payout_id for r in records})
    known = from_ledger(table, known_records)
    if not len(known):  # the scope's items are all there is: all of them are the history
        history = items.reset_index(drop=True)
        twice = paid_out_twice(history, among=repeated, lines=repeated_lines)
        return history, twice, repeated_lines
    every = pd.concat([items, known], ignore_index=True)
    deduction = (every["kind"] == DEDUCTION).to_numpy(dtype=bool)  # no Python string per item
    named = set(every["payment_id"][deduction]) - {""}
    unnamed = deduction & (every["payment_id"] == "").to_numpy(dtype=bool)
    numbers = (
        set(every["invoice_number"][unnamed]) | set(every["payment_request_number"][unnamed])
    ) - {""}
    chosen = np.zeros(len(every), dtype=bool)
    chosen[: len(items)] = True
    chosen |= deduction
    if named:
        chosen |= every["payment_id"].isin(list(named)).to_numpy(dtype=bool)
    if numbers:
        wanted = list(numbers)
        chosen |= every["invoice_number"].isin(wanted).to_numpy(dtype=bool)
        chosen |= every["payment_request_number"].isin(wanted).to_numpy(dtype=bool)
    history = every[chosen].reset_index(drop=True)
    return history, paid_out_twice(every), None


def paid_out_twice(
    items: pd.DataFrame,
    *,
    among: frozenset[str] | None = None,
    lines: np.ndarray | None = None,
) -> dict[str, list[str]]:
    """Payments (by id) that more than one payout paid out, with those payouts' ids (sorted);
    ``among``: the payment ids on more than one of ``items``' lines, and ``lines``: those lines
    (positions, in order), when known (the others are not looked at)."""
    if among is not None and not among:
        return {}
    if lines is not None:  # those lines only, by position: no look-up of every item's id
        # Their kinds and ids as lists (a few hundred): not a take of every column of them.
        kinds, named_ids = values_at(items["kind"], lines), values_at(items["payment_id"], lines)
        named = [k == PAYMENT and p != "" for k, p in zip(kinds, named_ids, strict=True)]
        chosen = lines[np.array(named, dtype=bool)] if len(lines) else lines
    else:
        mask = ((items["kind"] == PAYMENT) & (items["payment_id"] != "")).to_numpy(dtype=bool)
        if among is not None:
            mask = mask & is_in(items["payment_id"], among)
        chosen = np.flatnonzero(mask)
    ids = items["payment_id"].iloc[chosen]
    again = ids.duplicated(keep=False).to_numpy(dtype=bool)
    if not again.any():
        return {}
    pairs = pd.DataFrame(
        {
            "payment_id": ids[again].astype(str),
            "payout_id": items["payout_id"].iloc[chosen][again],
        }
    )
    spread = pairs.groupby("payment_id")["payout_id"].nunique()
    pairs = pairs[pairs["payment_id"].isin(list(spread[spread > 1].index))]
    found: dict[str, list[str]] = {}
    for payment_id, payout_id in sorted(pairs.astype(str).itertuples(index=False, name=None)):
        found.setdefault(payment_id, []).append(payout_id)
    return found


def _distinct(numbers: pd.Series, chosen: np.ndarray) -> set[str]:
    """The distinct non-empty numbers of the ``chosen`` rows: filtered by Arrow (not copied when
    all are chosen) and turned into Python strings in one go (``to_numpy``), the set dropping
    repeats. A pandas ``unique`` first hashes every text once more, ``tolist`` of Arrow text
    builds a scalar per value, and ``set - {""}`` a second set of a year's numbers."""
    values = chosen_texts(texts(numbers), chosen, int(np.count_nonzero(chosen)))
    found: set[str] = set(values.to_numpy(zero_copy_only=False))
    found.discard("")
    return found
