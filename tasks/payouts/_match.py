"""Check 2: each payout against the bank credits (``docs/service.md`` §6 Payouts).

1. **By reference.** A credit whose reference, text or payer holds a payout's bank reference is
   linked to it; linked payouts and credits form groups, so one payout split in several credits,
   several payouts on one credit, or both, are one group. A group whose credits add up to its
   payouts is ``matched``. When they do not, and the difference is exactly one or two payouts (or
   credits) nobody's reference names, dated within the window, those join the group (a credit
   that names only one of the payouts it carries) and it is ``matched``; otherwise it is
   ``matched_with_difference`` with the difference.
2. **By amount.** A credit naming no payout, of the same amount as a payout arriving within the
   window, is ``suggested`` with a confidence (lower when the dates are further apart or several
   payouts or credits could be the pair); a credit equal to two or three such payouts together is
   suggested for all of them. A suggestion is never taken as paid out: a person confirms it.
3. **Still waiting.** A payout with no credit is ``in_transit`` while it is young (within the
   window of working days before the last day the bank statements cover, or after it, or on a
   day no statement covers) and ``missing_in_bank`` once older. A credit with no payout is an
   ``unexpected_credit``.

The window is counted in England-and-Wales working days. Few payouts and credits reach this step
(one payout a working day), so it works on plain Python lists.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from datetime import date

import pandas as pd

from tasks.common.working_days import working_days_between
from tasks.payouts._items import as_date
from tasks.payouts._records import listed

MATCHED = "matched"
WITH_DIFFERENCE = "matched_with_difference"
SUGGESTED = "suggested"
IN_TRANSIT = "in_transit"
MISSING = "missing_in_bank"
UNEXPECTED = "unexpected_credit"
ITEM_MISMATCH = "item_mismatch"
STATES = (MATCHED, WITH_DIFFERENCE, IN_TRANSIT, MISSING, UNEXPECTED, SUGGESTED, ITEM_MISMATCH)
_TOKEN = re.compile(r"[A-Z0-9][A-Z0-9-]{3,}")
_NOT_ALNUM = re.compile(r"[^A-Z0-9]")
MAX_GROUP = 3  # payouts one credit may carry, when only amounts say so


@dataclass(frozen=True)
class Side:
    """A payout or a credit as matching sees it."""

    id: str
    day: date
    amount: int
    label: str  # the payout's reference, or the credit's text


@dataclass
class Link:
    """Payouts and the credits that paid them (or may have: ``suggested``)."""

    payouts: list[str]
    credits: list[str]
    state: str
    difference: int  # credits less payouts, pennies
    how: str
    confidence: float = 1.0


@dataclass
class BankMatches:
    """What check 2 found, by payout and by credit."""

    links: list[Link] = field(default_factory=list)
    waiting: dict[str, tuple[str, str]] = field(default_factory=dict)  # payout: state, reason
    unexpected: list[str] = field(default_factory=list)
    _indexed: tuple[int, dict[str, Link], dict[str, Link]] | None = field(
        default=None, repr=False, compare=False
    )

    def of_payout(self, payout_id: str) -> Link | None:
        return self._index()[0].get(payout_id)

    def of_credit(self, key: str) -> Link | None:
        return self._index()[1].get(key)

    def _index(self) -> tuple[dict[str, Link], dict[str, Link]]:
        """Each payout's and each credit's link (the first naming it), rebuilt when links are
        added: a year has hundreds of each, and a scan per look-up is quadratic."""
        if self._indexed is None or self._indexed[0] != len(self.links):
            payouts: dict[str, Link] = {}
            credits: dict[str, Link] = {}
            for link in self.links:
                for payout_id in link.payouts:
                    payouts.setdefault(payout_id, link)
                for key in link.credits:
                    credits.setdefault(key, link)
            self._indexed = (len(self.links), payouts, credits)
        return self._indexed[1], self._indexed[2]


def _norm(text: str) -> str:
    return _NOT_ALNUM.sub("", text.upper())


def sides(payouts: pd.DataFrame, credits: pd.DataFrame) -> tuple[list[Side], list[Side]]:
    """Payouts (by payout amount) and credits as :class:`Side` lists."""
    # Read by whole columns (``listed``: ``tolist``, days made from their numbers), not row by
    # row: a row of a frame is a Series or a tuple pandas builds cell by cell.
    left = [
        Side(str(payout_id), as_date(day), int(amount), str(reference))
        for payout_id, day, amount, reference in zip(
            *(listed(payouts[n]) for n in ("payout_id", "arrival_date", "amount", "reference")),
            strict=True,
        )
    ]
    right = [
        Side(str(key), as_date(day), int(amount), f"{reference} {text} {payer}")
        for key, day, amount, reference, text, payer in zip(
            *(
                listed(credits[n])
                for n in ("key", "booked_on", "amount", "reference", "text", "payer")
            ),
            strict=True,
        )
    ]
    return left, right


def match_credits(
    payouts: Sequence[Side],
    credits: Sequence[Side],
    *,
    window: int,
    coverage: tuple[date, date] | None,
) -> BankMatches:
    """Check 2 over ``payouts`` and ``credits`` (see the module docstring)."""
    found = BankMatches()
    groups = _by_reference(payouts, credits)
    grouped_p = {payout_id for group in groups for payout_id in group[0]}
    grouped_c = {key for group in groups for key in group[1]}
    free_p = {p.id: p for p in payouts if p.id not in grouped_p}
    free_c = {c.id: c for c in credits if c.id not in grouped_c}
    by_id = {**{p.id: p for p in payouts}, **{c.id: c for c in credits}}
    for group_p, group_c in groups:
        found.links.append(_settle(group_p, group_c, by_id, free_p, free_c, window))
    found.links += _by_amount(free_p, free_c, window)
    for payout in sorted(free_p.values(), key=lambda p: p.day):
        found.waiting[payout.id] = _waiting(payout, window, coverage)
    found.unexpected = sorted(free_c, key=lambda key: (free_c[key].day, key))
    return found


def _by_reference(
    payouts: Sequence[Side], credits: Sequence[Side]
) -> list[tuple[list[str], list[str]]]:
    """Groups of payouts and credits linked by references (connected components)."""
    refs: dict[str, list[str]] = {}
    for payout in payouts:
        if _norm(payout.label):
            refs.setdefault(_norm(payout.label), []).append(payout.id)
    parent: dict[str, str] = {}

    def root(node: str) -> str:
        while parent.setdefault(node, node) != node:
            node = parent[node]
        return node

    for credit in credits:
        tokens = {_norm(t) for t in _TOKEN.findall(credit.label.upper())}
        tokens.add(_norm(credit.label.split(" ", 1)[0]))
        for token in tokens:
            for payout_id in refs.get(token, []):
                parent[root(f"c:{credit.id}")] = root(f"p:{payout_id}")
    members: dict[str, tuple[list[str], list[str]]] = {}
    for payout in payouts:
        if f"p:{payout.id}" in parent:
            members.setdefault(root(f"p:{payout.id}"), ([], []))[0].append(payout.id)
    for credit in credits:
        if f"c:{credit.id}" in parent:
            members.setdefault(root(f"c:{credit.id}"), ([], []))[1].append(credit.id)
    return [group for group in members.values() if group[0] and group[1]]


def _settle(
    group_p: list[str],
    group_c: list[str],
    by_id: dict[str, Side],
    free_p: dict[str, Side],
    free_c: dict[str, Side],
    window: int,
) -> Link:
    """A reference group: matched, completed by unnamed payouts or credits, or with a
    difference."""
    difference = sum(by_id[c].amount for c in group_c) - sum(by_id[p].amount for p in group_p)
    shape = _shape(len(group_p), len(group_c))
    if difference == 0:
        return Link(group_p, group_c, MATCHED, 0, f"by reference{shape}")
    days = [by_id[n].day for n in group_p + group_c]
    pool = free_p if difference > 0 else free_c
    extra = _summing_to(abs(difference), pool, days, window, limit=2)
    if extra:
        for key in extra:
            del pool[key]
        if difference > 0:
            group_p = group_p + extra
            what = "payout(s) the credit does not name"
        else:
            group_c = group_c + extra
            what = "credit(s) naming no payout"
        shape = _shape(len(group_p), len(group_c))
        return Link(group_p, group_c, MATCHED, 0, f"by reference and amount{shape}, with {what}")
    sign = "more" if difference > 0 else "less"
    how = f"by reference{shape}; the bank credited {_money(abs(difference))} {sign}"
    return Link(group_p, group_c, WITH_DIFFERENCE, difference, how)


def _shape(payouts: int, credits: int) -> str:
    if payouts == 1 and credits == 1:
        return ""
    if payouts == 1:
        return f" (split in {credits} credits)"
    if credits == 1:
        return f" ({payouts} payouts on one credit)"
    return f" ({payouts} payouts on {credits} credits)"


def _near(day: date, days: Sequence[date], window: int) -> bool:
    return any(abs(working_days_between(other, day)) <= window for other in days)


def _summing_to(
    total: int, pool: dict[str, Side], days: Sequence[date], window: int, *, limit: int
) -> list[str]:
    """One to ``limit`` sides of ``pool`` dated near ``days`` whose amounts add up to
    ``total`` (the nearest first), or none."""
    near = [s for s in pool.values() if _near(s.day, days, window) and 0 < s.amount <= total]
    near.sort(key=lambda s: (min(abs((s.day - d).days) for d in days), s.id))
    for size in range(1, limit + 1):
        for combo in itertools.combinations(near[:12], size):
            if sum(s.amount for s in combo) == total:
                return [s.id for s in combo]
    return []


def _by_amount(free_p: dict[str, Side], free_c: dict[str, Side], window: int) -> list[Link]:
    """Suggested pairs (and groups) where only amounts and dates agree (see the module
    docstring); the sides suggested leave ``free_p`` and ``free_c``."""
    pairs = []
    for credit in free_c.values():
        same = [
            p
            for p in free_p.values()
            if p.amount == credit.amount and -1 <= working_days_between(p.day, credit.day) <= window
        ]
        for payout in same:
            rivals = sum(
                1
                for c in free_c.values()
                if c.amount == payout.amount
                and -1 <= working_days_between(payout.day, c.day) <= window
            )
            distance = abs(working_days_between(payout.day, credit.day))
            confidence = max(0.05, (0.9 - 0.1 * distance) / (len(same) * rivals))
            pairs.append((round(confidence, 2), payout, credit))
    links: list[Link] = []
    for confidence, payout, credit in sorted(pairs, key=lambda t: (-t[0], t[1].day, t[1].id)):
        if payout.id in free_p and credit.id in free_c:
            del free_p[payout.id], free_c[credit.id]
            how = f"by amount and date only (confidence {confidence:.2f}): confirm it"
            links.append(Link([payout.id], [credit.id], SUGGESTED, 0, how, confidence))
    for credit in sorted(list(free_c.values()), key=lambda c: c.day):
        together = _summing_to(credit.amount, free_p, [credit.day], window, limit=MAX_GROUP)
        if len(together) > 1:
            for key in together:
                del free_p[key]
            del free_c[credit.id]
            how = f"by amount only: {len(together)} payouts add up to this credit (confidence 0.50)"
            links.append(Link(together, [credit.id], SUGGESTED, 0, how, 0.5))
    return links


def _waiting(payout: Side, window: int, coverage: tuple[date, date] | None) -> tuple[str, str]:
    """In transit or missing, and why, for a payout no credit pays."""
    if coverage is None:
        return IN_TRANSIT, "no bank statement seen yet"
    bank_from, bank_until = coverage
    if payout.day < bank_from:
        return IN_TRANSIT, f"no bank statement seen covers its date (they start {bank_from})"
    if payout.day > bank_until:
        return IN_TRANSIT, f"arrives after the last day the bank statements cover ({bank_until})"
    age = working_days_between(payout.day, bank_until)
    if age <= window:
        return IN_TRANSIT, (
            f"not on the bank statements yet ({age} working day(s) old; missing after {window})"
        )
    return MISSING, (
        f"no credit on the bank statements {age} working days after its arrival date "
        f"(expected within {window})"
    )


def _money(pennies: int) -> str:
    sign = "-" if pennies < 0 else ""
    return f"{sign}£{abs(pennies) // 100:,}.{abs(pennies) % 100:02d}"
