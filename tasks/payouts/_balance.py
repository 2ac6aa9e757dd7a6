"""Money in transit: what the service has paid out (its payouts' items) and the bank has not yet
credited, on any day, and the period's roll-up per day and per month.

For a day: **collected** is the payments of the payouts arriving that day (gross: the service
invoices its fees separately, ``docs/service.md`` §6 Payouts), **deductions** the late failures
those payouts took back, **paid out** the bank credits booked that day that pay a payout
(``matched`` or ``matched_with_difference``; a suggestion is not paid out until a person
confirms it). In transit at the end of a day = in transit the day before + collected −
deductions − paid out, so the roll-up ties out to the penny by construction; what the closing
balance is made of (payouts still waiting for their credit, differences on credits that arrived,
and what was in transit before the period) is shown beside it.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass
from datetime import date, timedelta

import numpy as np
import pandas as pd

from ledger import Ledger
from tasks.payouts._items import as_date
from tasks.payouts._match import MATCHED, WITH_DIFFERENCE
from tasks.payouts._reconcile import Reconciliation
from tasks.payouts._records import column_values

PAID_OUT = (MATCHED, WITH_DIFFERENCE)
DAILY_COLUMNS = ("day", "collected", "deductions", "paid_out", "in_transit")


@dataclass(frozen=True)
class Balance:
    """The period's money: opening, per day, per month, closing, and what the closing is."""

    first: date
    last: date
    opening: int
    daily: pd.DataFrame
    awaiting: int  # payouts of the period the bank had not credited by the last day
    differences: int  # payouts credited by then, less what was credited for them

    @property
    def collected(self) -> int:
        return int(self.daily["collected"].sum())

    @property
    def deductions(self) -> int:
        return int(self.daily["deductions"].sum())

    @property
    def paid_out(self) -> int:
        return int(self.daily["paid_out"].sum())

    @property
    def closing(self) -> int:
        return self.opening + self.collected - self.deductions - self.paid_out

    @property
    def earlier(self) -> int:
        """What of the closing balance comes from payouts before the period."""
        return self.closing - self.awaiting - self.differences

    def monthly(self) -> pd.DataFrame:
        """The roll-up per calendar month: opening, collected, deductions, paid out, closing."""
        return self._months.copy()  # worked out once: the roll-up file and the summary show it

    @functools.cached_property
    def _months(self) -> pd.DataFrame:
        # Summed in whole pennies by plain dicts over the days (a year is 365 of them): two
        # groupbys cost more. Months in order, each closing with its last day's balance.
        moves = ("collected", "deductions", "paid_out")
        sums: dict[str, list[int]] = {}
        closing: dict[str, int] = {}
        columns = [self.daily[name].tolist() for name in (*moves, "in_transit")]
        for day, *values, in_transit in zip(self.daily["day"].tolist(), *columns, strict=True):
            month = day.strftime("%Y-%m")
            total = sums.setdefault(month, [0, 0, 0])
            for n, value in enumerate(values):
                total[n] += int(value)
            closing[month] = int(in_transit)
        months = sorted(sums)
        net = [sums[m][0] - sums[m][1] - sums[m][2] for m in months]
        return pd.DataFrame(
            {
                "month": months,
                "opening": np.array(
                    [closing[m] - n for m, n in zip(months, net, strict=True)], dtype=np.int64
                ),
                **{
                    name: np.array([sums[m][k] for m in months], dtype=np.int64)
                    for k, name in enumerate(moves)
                },
                "in_transit": np.array([closing[m] for m in months], dtype=np.int64),
            }
        )


def in_transit_on(ledger: Ledger, biller: str, day: date) -> int:
    """Pennies in transit at the end of ``day``, from what the ledger knows."""
    after = day + timedelta(days=1)
    return ledger.payout_net_before(biller, after) - ledger.paid_out_before(biller, after)


def balance(reconciliation: Reconciliation, opening: int) -> Balance:
    """The roll-up of ``reconciliation``'s period, from ``opening`` pennies in transit."""
    first, last = reconciliation.first, reconciliation.last
    days = [first + timedelta(days=n) for n in range((last - first).days + 1)]
    payouts = reconciliation.in_period()
    arrival = [as_date(d) for d in column_values(payouts["arrival_date"])]
    credits = reconciliation.credits_in_period()
    # The credits that paid out, chosen from their lists (a few hundred): pandas' ``isin`` and a
    # copy of the credits' columns cost more than the sums.
    paying = [state in PAID_OUT for state in credits["state"].tolist()]
    booked = column_values(credits["booked_on"])
    credited = credits["amount"].tolist()
    paid = [(as_date(d), a) for d, a, y in zip(booked, credited, paying, strict=True) if y]
    # Per day by plain dicts of whole pennies (a few hundred payouts and credits): a groupby per
    # column and a Series look-up per day cost more than the sums. The frame is made at once,
    # not a column at a time.
    collected = _per_day(arrival, payouts["gross"].tolist(), days)
    deductions = _per_day(arrival, payouts["deductions"].tolist(), days)
    paid_out = _per_day([d for d, _ in paid], [a for _, a in paid], days)
    in_transit = opening + np.cumsum(collected - deductions - paid_out)
    columns = (days, collected, deductions, paid_out, in_transit)
    frame = pd.DataFrame(dict(zip(DAILY_COLUMNS, columns, strict=True)))
    awaiting, differences = _closing_parts(reconciliation)
    return Balance(first, last, opening, frame, awaiting, differences)


def _per_day(on: list[date], pennies: list[int], days: list[date]) -> np.ndarray:
    """The pennies summed per day of ``days`` (``on``: each amount's day)."""
    sums: dict[date, int] = {}
    for day, amount in zip(on, pennies, strict=True):
        sums[day] = sums.get(day, 0) + int(amount)
    return np.array([sums.get(d, 0) for d in days], dtype=np.int64)


def _closing_parts(reconciliation: Reconciliation) -> tuple[int, int]:
    """Payouts of the period not credited by its last day, and the differences of those that
    were (links reaching outside the period count with what came before it)."""
    first, last = reconciliation.first, reconciliation.last
    period = reconciliation.in_period()
    net = dict(zip(period["payout_id"].tolist(), period["items_net"].tolist(), strict=True))
    credits = reconciliation.credits
    keys = credits["key"].tolist()
    credited = dict(zip(keys, credits["amount"].tolist(), strict=True))
    booked = {
        str(k): as_date(d) for k, d in zip(keys, column_values(credits["booked_on"]), strict=True)
    }
    awaiting = differences = 0
    linked: set[str] = set()
    for link in reconciliation.matches.links:
        if link.state not in PAID_OUT:
            continue
        inside = all(p in net for p in link.payouts)
        arrived = all(first <= booked[c] <= last for c in link.credits)
        if inside and arrived:
            differences += sum(int(net[p]) for p in link.payouts)
            differences -= sum(int(credited[c]) for c in link.credits)
            linked.update(link.payouts)
        elif inside and all(booked[c] > last for c in link.credits):
            continue  # credited after the period: waiting, below
        else:
            linked.update(link.payouts)  # reaches before the period: part of "earlier"
    for payout_id, amount in net.items():
        if payout_id not in linked:
            awaiting += int(amount)
    return awaiting, differences
