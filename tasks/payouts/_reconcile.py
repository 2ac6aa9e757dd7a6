"""The three checks put together: one result per payout and per bank credit.

Check 1, **payout = its items**: the payments less the deductions equal the payout's amount, to
the penny. Check 2, **payout ↔ bank credit** (``_match``). Check 3, **items ↔ the service**
(``_check_items``). A payout's state is the first that applies of: ``missing_in_bank``,
``item_mismatch`` (check 1 or 3 failed), ``matched_with_difference``, ``suggested``,
``in_transit``, ``matched``; its ``reasons`` say every check's finding. A credit's state is its
link's (``matched``, ``matched_with_difference``, ``suggested``) or ``unexpected_credit``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from ledger.payouts import PayoutResult
from tasks.payouts._check_items import check_items, pair_deductions
from tasks.payouts._credits import credits_frame
from tasks.payouts._items import as_date
from tasks.payouts._match import (
    IN_TRANSIT,
    ITEM_MISMATCH,
    MATCHED,
    MISSING,
    SUGGESTED,
    UNEXPECTED,
    WITH_DIFFERENCE,
    BankMatches,
    Link,
    match_credits,
    sides,
)
from tasks.payouts._profiles import DEDUCTION
from tasks.payouts._records import between, column_values, records, records_at, values_at

FINE = (MATCHED, IN_TRANSIT)  # states that need no person
PRECEDENCE = (MISSING, ITEM_MISMATCH, WITH_DIFFERENCE, SUGGESTED, IN_TRANSIT, MATCHED)
MAX_NOTES = 3
# The columns a result is made of: rows are read with only these (``_records``).
PAYOUT_RESULT = (
    "payout_id",
    "state",
    "arrival_date",
    "items_net",
    "bank_difference",
    "credit_keys",
    "reasons",
)
CREDIT_RESULT = ("key", "state", "booked_on", "amount", "payout_ids", "how")


def money(pennies: int) -> str:
    """Pennies as pounds for people: ``£1,234.50``, ``-£3.00``."""
    sign = "-" if pennies < 0 else ""
    return f"{sign}£{abs(int(pennies)) // 100:,}.{abs(int(pennies)) % 100:02d}"


@dataclass
class Scope:
    """What one reconciliation looks at: the period reported, and the payouts, items and credits
    of a window of working days around it (so a payout just before the period can meet its
    credit inside it)."""

    first: date
    last: date
    payouts: pd.DataFrame
    items: pd.DataFrame
    credits: pd.DataFrame
    coverage: tuple[date, date] | None
    documents: pd.DataFrame
    history: pd.DataFrame
    twice: Mapping[str, Sequence[str]] = field(default_factory=dict)
    window: int = 3
    # The lines of ``history`` naming a payment id another of its lines names too, in order,
    # when known (its items are every line of a report, which found them): None, not known.
    repeated: np.ndarray | None = None


@dataclass
class Reconciliation:
    """Every payout and credit of the scope with its checks, state and reasons."""

    first: date
    last: date
    payouts: pd.DataFrame
    credits: pd.DataFrame
    items: pd.DataFrame
    matches: BankMatches
    _chosen: dict[str, tuple[object, date, date, pd.DataFrame]] = field(
        default_factory=dict, init=False, repr=False, compare=False
    )

    def in_period(self) -> pd.DataFrame:
        """The payouts arriving in the period reported."""
        return self._of_period("payouts", "arrival_date")

    def credits_in_period(self) -> pd.DataFrame:
        return self._of_period("credits", "booked_on")

    def _of_period(self, name: str, day: str) -> pd.DataFrame:
        """The rows of the frame ``name`` dated in the period, chosen once per frame and period:
        the balance, the journal and every report ask again (eight times for the payouts, each
        a copy of their two dozen columns, 0.3 ms a time for a year; the shallow copy handed
        out costs a quarter of that). A caller's change to its copy (copy-on-write) leaves the
        rows kept here alone."""
        frame = getattr(self, name)
        kept = self._chosen.get(name)
        if kept is None or kept[0] is not frame or kept[1:3] != (self.first, self.last):
            kept = (frame, self.first, self.last, frame[between(frame[day], self.first, self.last)])
            self._chosen[name] = kept
        return kept[3].copy(deep=False)

    def results(self) -> list[PayoutResult]:
        """What the ledger keeps of this run, per payout and per credit. A credit outside the
        period that pays none of the scope's payouts is left as the ledger has it: its payout
        may be outside the scope (the next period's, or the last one's), so this run cannot
        tell that it is unexpected."""
        inside = between(self.credits["booked_on"], self.first, self.last)
        linked = (self.credits["payout_ids"].astype(str) != "").to_numpy(dtype=bool)
        kept = np.flatnonzero(inside | linked)  # only the columns a result reads are taken
        found = [
            PayoutResult(
                "payout",
                str(r["payout_id"]),
                str(r["state"]),
                as_date(r["arrival_date"]),
                int(r["items_net"]),
                int(r["bank_difference"]),
                tuple(k for k in str(r["credit_keys"]).split(" ") if k),
                tuple(str(r["reasons"]).split("; ")),
            )
            for r in records(self.payouts, PAYOUT_RESULT)
        ]
        found += [
            PayoutResult(
                "credit",
                str(r["key"]),
                str(r["state"]),
                as_date(r["booked_on"]),
                int(r["amount"]),
                0,
                tuple(k for k in str(r["payout_ids"]).split(" ") if k),
                (str(r["how"]),),
            )
            for r in records_at(self.credits, kept, CREDIT_RESULT)
        ]
        return found


def reconcile(scope: Scope) -> Reconciliation:
    """Run the three checks over ``scope``."""
    left, right = sides(scope.payouts, scope.credits)
    matches = match_credits(left, right, window=scope.window, coverage=scope.coverage)
    pairs = pair_deductions(scope.history, scope.repeated)
    as_of = max([scope.last, *(scope.coverage[1:] if scope.coverage else ())])
    items = check_items(
        scope.items, scope.documents, pairs, scope.history, scope.twice, as_of=as_of
    )
    payouts = _payout_rows(scope.payouts, items, matches, scope.credits)
    credits = _credit_rows(scope.credits, matches, scope.payouts)
    return Reconciliation(scope.first, scope.last, payouts, credits, items, matches)


def _payout_rows(
    payouts: pd.DataFrame, items: pd.DataFrame, matches: BankMatches, credits: pd.DataFrame
) -> pd.DataFrame:
    rows = payouts.copy()
    rows["items_net"] = rows["gross"] - rows["deductions"]
    rows["items_difference"] = rows["amount"] - rows["items_net"]
    # The service check's columns per payout, by plain dicts over the few lines with a note: a
    # left merge of per-payout groupbys gave the same columns, in this order, on a fresh index.
    rows = rows.reset_index(drop=True)
    counts, notes, explained = _service_by_payout(items)
    ids = rows["payout_id"].tolist()
    rows["bad_items"] = np.array([counts.get(p, 0) for p in ids], dtype=np.int64)
    for name, texts in (("service_notes", notes), ("deduction_notes", explained)):
        rows[name] = pd.Series([texts.get(p, "") for p in ids], dtype=items["note"].dtype)
    keys = [str(k) for k in credits["key"].tolist()]
    amounts = dict(zip(keys, credits["amount"].to_numpy(dtype="int64").tolist(), strict=True))
    booked = column_values(credits["booked_on"])
    days = dict(zip(keys, [str(as_date(d)) for d in booked], strict=True))
    bank = [_bank_columns(str(pid), matches, amounts, days) for pid in rows["payout_id"].tolist()]
    bank_frame = pd.DataFrame(
        bank,
        columns=[
            "check_bank",
            "bank_how",
            "credit_keys",
            "credit_days",
            "bank_amount",
            "bank_difference",
            "confidence",
        ],
        index=rows.index,
    )
    rows = pd.concat([rows, bank_frame], axis=1)
    # Only the columns a verdict reads, row by row (to_dict of every column boxes each cell).
    used = [
        "items_difference",
        "gross",
        "deductions",
        "items_net",
        "amount",
        "bad_items",
        "service_notes",
        "check_bank",
        "bank_how",
        "deduction_notes",
    ]
    verdicts = [
        _verdict(dict(zip(used, values, strict=True)))
        for values in zip(*(rows[name].tolist() for name in used), strict=True)
    ]
    states = [state for state, _ in verdicts]
    rows["state"] = states
    rows["reasons"] = [reasons for _, reasons in verdicts]
    rows["needs_attention"] = _needs_person(states)
    return rows


def _needs_person(states: list[str]) -> np.ndarray:
    """``~isin(FINE)`` of the states, from the list they were made in: pandas' ``isin`` of a
    few hundred texts costs a millisecond (its values are made Arrow scalars one by one)."""
    return np.array([state not in FINE for state in states], dtype=bool)


def _service_by_payout(
    items: pd.DataFrame,
) -> tuple[dict[str, int], dict[str, str], dict[str, str]]:
    """Per payout: how many items disagree with the service, and the notes people read (of the
    lines that disagree, and of the deductions)."""
    ok = items["ok"].to_numpy(dtype=bool)
    deduction = (items["kind"] == DEDUCTION).to_numpy(dtype=bool)
    bad_ids, bad_notes = _at_rows(items, np.flatnonzero(~ok))
    counts: dict[str, int] = {}
    for payout_id in bad_ids:
        counts[payout_id] = counts.get(payout_id, 0) + 1
    return (
        counts,
        _first_notes(bad_ids, bad_notes),
        _first_notes(*_at_rows(items, np.flatnonzero(deduction))),
    )


def _at_rows(items: pd.DataFrame, rows: np.ndarray) -> tuple[list[str], list[str]]:
    """The payout ids and notes of ``items``' lines at ``rows`` (a few hundred of a year's)."""
    return values_at(items["payout_id"], rows), values_at(items["note"], rows)


def _first_notes(payout_ids: list[str], notes: list[str]) -> dict[str, str]:
    """Per payout, the non-empty notes among its first ``MAX_NOTES`` lines, and how many lines
    are not shown."""
    shown: dict[str, list[str]] = {}
    sizes: dict[str, int] = {}
    for payout_id, note in zip(payout_ids, notes, strict=True):
        seen = sizes.get(payout_id, 0)
        sizes[payout_id] = seen + 1
        kept = shown.setdefault(payout_id, [])
        if seen < MAX_NOTES and note:
            kept.append(str(note))
    texts = {}
    for payout_id, size in sizes.items():
        kept = shown[payout_id]
        more = size - len(kept)
        texts[payout_id] = "; ".join(kept) + (f"; and {more} more" if more > 0 else "")
    return texts


def _bank_columns(
    payout_id: str, matches: BankMatches, amounts: Mapping[str, int], booked: Mapping[str, str]
) -> tuple[str, str, str, str, int, int, float]:
    """The bank check's columns of one payout (``amounts`` and ``booked``: each credit's pennies
    and booking day, by key)."""
    link = matches.of_payout(payout_id)
    if link is None:
        state, reason = matches.waiting.get(payout_id, (IN_TRANSIT, "not in the bank check"))
        return state, reason, "", "", 0, 0, 0.0
    amount = sum(amounts[k] for k in link.credits)
    days = " ".join(sorted({booked[k] for k in link.credits}))
    difference = link.difference if payout_id == link.payouts[0] else 0
    how = link.how + _others(link, payout_id)
    return link.state, how, " ".join(link.credits), days, amount, difference, link.confidence


def _others(link: Link, payout_id: str) -> str:
    others = [p for p in link.payouts if p != payout_id]
    return f" (with payout(s) {', '.join(others)})" if others else ""


def _verdict(r: Mapping[str, object]) -> tuple[str, str]:
    """The payout's state and its reasons, every check's finding."""
    found: list[str] = []
    items_ok = int(r["items_difference"]) == 0  # type: ignore[call-overload]
    if not items_ok:
        found.append(
            f"items: payments {money(r['gross'])} less deductions {money(r['deductions'])} "  # type: ignore[arg-type]
            f"= {money(r['items_net'])}, not the payout's {money(r['amount'])} "  # type: ignore[arg-type]
            f"(difference {money(r['items_difference'])})"  # type: ignore[arg-type]
        )
    service_ok = int(r["bad_items"]) == 0  # type: ignore[call-overload]
    if not service_ok:
        found.append(f"service: {r['bad_items']} item(s) disagree: {r['service_notes']}")
    found.append(f"bank: {r['check_bank']}: {r['bank_how']}")
    if r["deduction_notes"]:
        found.append(f"deductions: {r['deduction_notes']}")
    candidates = {str(r["check_bank"])}
    if not (items_ok and service_ok):
        candidates.add(ITEM_MISMATCH)
    state = next(s for s in PRECEDENCE if s in candidates)
    return state, "; ".join(found)


def _credit_rows(
    credits: pd.DataFrame, matches: BankMatches, payouts: pd.DataFrame
) -> pd.DataFrame:
    rows = credits.copy() if not credits.empty else credits_frame([])
    refs = dict(zip(payouts["payout_id"].tolist(), payouts["reference"].tolist(), strict=True))
    states, how, ids, names = [], [], [], []
    for key in rows["key"].tolist():
        link = matches.of_credit(str(key))
        if link is None:
            states.append(UNEXPECTED)
            how.append("a credit from the payment service that no payout report shows")
            ids.append("")
            names.append("")
            continue
        states.append(link.state)
        how.append(link.how)
        ids.append(" ".join(link.payouts))
        names.append(" ".join(refs.get(p, p) for p in link.payouts))
    rows["state"], rows["how"], rows["payout_ids"], rows["payout_references"] = (
        states,
        how,
        ids,
        names,
    )
    rows["needs_attention"] = _needs_person(states)
    return rows


def counts(reconciliation: Reconciliation) -> dict[str, int]:
    """Payouts of the period per state, and the unexpected credits of the period."""
    period = reconciliation.in_period()
    found = {str(k): int(v) for k, v in period["state"].value_counts().items()}
    unexpected = reconciliation.credits_in_period()
    found[UNEXPECTED] = int((unexpected["state"] == UNEXPECTED).sum())
    return {state: found[state] for state in PRECEDENCE + (UNEXPECTED,) if found.get(state)}


def attention(reconciliation: Reconciliation) -> bool:
    """Whether anything of the period needs a person."""
    return bool(
        reconciliation.in_period()["needs_attention"].any()
        or reconciliation.credits_in_period()["needs_attention"].any()
    )
