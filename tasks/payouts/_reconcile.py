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

FINE = (MATCHED, IN_TRANSIT)  # states that need no person
PRECEDENCE = (MISSING, ITEM_MISMATCH, WITH_DIFFERENCE, SUGGESTED, IN_TRANSIT, MATCHED)
MAX_NOTES = 3
# The columns a result is made of: rows are read with only these (itertuples boxes every cell of
# every column it is given, one Arrow scalar at a time).
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


@dataclass
class Reconciliation:
    """Every payout and credit of the scope with its checks, state and reasons."""

    first: date
    last: date
    payouts: pd.DataFrame
    credits: pd.DataFrame
    items: pd.DataFrame
    matches: BankMatches

    def in_period(self) -> pd.DataFrame:
        """The payouts arriving in the period reported."""
        days = self.payouts["arrival_date"].map(as_date)
        return self.payouts[(days >= self.first) & (days <= self.last)]

    def credits_in_period(self) -> pd.DataFrame:
        days = self.credits["booked_on"].map(as_date)
        return self.credits[(days >= self.first) & (days <= self.last)]

    def results(self) -> list[PayoutResult]:
        """What the ledger keeps of this run, per payout and per credit. A credit outside the
        period that pays none of the scope's payouts is left as the ledger has it: its payout
        may be outside the scope (the next period's, or the last one's), so this run cannot
        tell that it is unexpected."""
        booked = self.credits["booked_on"].map(as_date)
        inside = (booked >= self.first) & (booked <= self.last)
        linked = self.credits["payout_ids"].astype(str) != ""
        credits = self.credits[(inside | linked).to_numpy(dtype=bool)]
        found = [
            PayoutResult(
                "payout",
                str(r.payout_id),
                str(r.state),
                as_date(r.arrival_date),
                int(r.items_net),
                int(r.bank_difference),
                tuple(k for k in str(r.credit_keys).split(" ") if k),
                tuple(str(r.reasons).split("; ")),
            )
            for r in self.payouts[list(PAYOUT_RESULT)].itertuples(index=False)
        ]
        found += [
            PayoutResult(
                "credit",
                str(r.key),
                str(r.state),
                as_date(r.booked_on),
                int(r.amount),
                0,
                tuple(k for k in str(r.payout_ids).split(" ") if k),
                (str(r.how),),
            )
            for r in credits[list(CREDIT_RESULT)].itertuples(index=False)
        ]
        return found


def reconcile(scope: Scope) -> Reconciliation:
    """Run the three checks over ``scope``."""
    left, right = sides(scope.payouts, scope.credits)
    matches = match_credits(left, right, window=scope.window, coverage=scope.coverage)
    pairs = pair_deductions(scope.history)
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
    service = _service_by_payout(items)
    rows = rows.merge(service, on="payout_id", how="left")
    rows["bad_items"] = rows["bad_items"].fillna(0).astype("int64")
    for name in ("service_notes", "deduction_notes"):
        rows[name] = rows[name].fillna("")
    keys = [str(k) for k in credits["key"]]
    amounts = dict(zip(keys, credits["amount"].to_numpy(dtype="int64").tolist(), strict=True))
    days = dict(zip(keys, [str(as_date(d)) for d in credits["booked_on"]], strict=True))
    bank = [_bank_columns(str(pid), matches, amounts, days) for pid in rows["payout_id"]]
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
    rows["state"] = [state for state, _ in verdicts]
    rows["reasons"] = [reasons for _, reasons in verdicts]
    rows["needs_attention"] = ~rows["state"].isin(FINE)
    return rows


def _service_by_payout(items: pd.DataFrame) -> pd.DataFrame:
    """Per payout: how many items disagree with the service, and the notes people read."""
    bad = items[~items["ok"]]
    deductions = items[items["kind"] == DEDUCTION]
    counts = bad.groupby("payout_id").size().rename("bad_items")
    notes = _first_notes(bad).rename("service_notes")
    explained = _first_notes(deductions).rename("deduction_notes")
    frame = pd.concat([counts, notes, explained], axis=1)
    return frame.reset_index(names="payout_id")


def _first_notes(lines: pd.DataFrame) -> pd.Series:
    """Per payout (sorted, as a groupby gives them), the non-empty notes among its first
    ``MAX_NOTES`` lines, and how many lines are not shown. The first lines are picked by one
    cumcount; only they are looked at in Python (a function per payout over a Series of its
    notes cost more than the rest of the check)."""
    grouped = lines.groupby("payout_id")["note"]
    sizes = grouped.size()
    first = lines[(grouped.cumcount() < MAX_NOTES).to_numpy(dtype=bool)]
    shown: dict[object, list[str]] = {}
    for payout_id, note in zip(first["payout_id"].tolist(), first["note"].tolist(), strict=True):
        kept = shown.setdefault(payout_id, [])
        if note:
            kept.append(str(note))
    texts = []
    for payout_id, size in zip(sizes.index.tolist(), sizes.tolist(), strict=True):
        kept = shown.get(payout_id, [])
        more = size - len(kept)
        texts.append("; ".join(kept) + (f"; and {more} more" if more > 0 else ""))
    return pd.Series(texts, index=sizes.index, dtype=lines["note"].dtype)


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
    refs = dict(zip(payouts["payout_id"], payouts["reference"], strict=True))
    states, how, ids, names = [], [], [], []
    for key in rows["key"]:
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
    rows["needs_attention"] = ~rows["state"].isin(FINE)
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
