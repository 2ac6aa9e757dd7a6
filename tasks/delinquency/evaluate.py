"""The policy applied to a snapshot: the state each customer should be in, and why.

:func:`evaluate` is a pure function of the snapshot, the policy and each customer's standing from
the previous run (state, since when, the mandate it had on entering, when it last left each
state). The rules (README, "Pausing collection for delinquent customers"):

1. a customer in scope (``include``/``exclude``) may enter a state whose ``enter`` conditions
   hold, unless it left that state less than ``cooldown_days`` ago;
2. it goes to the most severe such state when that is more severe than where it is (escalation is
   immediate);
3. otherwise it stays, until the ``leave`` conditions of its state hold (the enter conditions no
   longer holding, where a state has none) **and** it has been there ``min_days``; it then moves
   to the most severe milder state it may enter, or to good standing. Leave conditions differ
   from enter conditions and time in a state has a floor, so nobody flaps;
4. a customer out of scope leaves its state at once.

The figures and the state machine are vectorised over customers (numpy); the words (each
decision's reasons, with the figures that made them) are written only for the customers who are
or were in a state.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np
import pandas as pd

from tasks.delinquency.checks import Stay, group_holds, held
from tasks.delinquency.metrics import NEVER, Figures, compute_figures, day_number
from tasks.delinquency.policy import Policy
from tasks.delinquency.snapshot import Snapshot

GOOD = ""  # the state of a customer in good standing
USABLE_MANDATE = ("PENDING", "ACTIVE")
STANDING_COLUMNS = (
    "customer_id",
    "state",
    "since",
    "hold_period",
    "hold_count",
    "mandate_at_entry",
    "left_on",
)


def standing_frame(rows: Iterable[Mapping[str, Any]]) -> pd.DataFrame:
    """Customers' standing from the previous run (the ledger's rows; absent = good standing)."""
    defaults = {
        "state": GOOD,
        "since": None,
        "hold_period": "",
        "hold_count": 0,
        "mandate_at_entry": "",
        "left_on": None,
    }
    frame = pd.DataFrame.from_records(
        [{**defaults, **row} for row in rows], columns=list(STANDING_COLUMNS)
    )
    frame["left_on"] = [dict(v) if v else {} for v in frame["left_on"]]
    return frame


@dataclass(frozen=True)
class Evaluation:
    """Every customer's decision (one row each, in the snapshot's order) and what it rests on."""

    policy: Policy
    as_of: date
    decisions: pd.DataFrame

    def decision(self, customer_id: str) -> dict[str, Any]:
        """One customer's decision as a plain mapping (tests, ``billops delinquency status``)."""
        found = self.decisions[self.decisions["customer_id"] == customer_id]
        if found.empty:
            raise KeyError(f"no customer {customer_id!r} in the snapshot")
        return dict(found.iloc[0])

    @property
    def involved(self) -> pd.DataFrame:
        """The customers who are, or were until now, in a state, or whose hold is still open."""
        d = self.decisions
        return d[(d["before"] != GOOD) | (d["after"] != GOOD) | (d["old_hold_period"] != "")]


def _in_scope(policy: Policy, customers: pd.DataFrame) -> np.ndarray:
    def matches(scope_ids: tuple[str, ...], tags: tuple[str, ...]) -> np.ndarray:
        ids = set(scope_ids)
        hit = customers["customer_id"].isin(ids) | customers["external_id"].isin(ids)
        if tags:
            wanted = set(tags)
            hit |= pd.Series([bool(wanted.intersection(t)) for t in customers["tags"]])
        return np.asarray(hit.to_numpy(dtype=bool), dtype=bool)

    n = len(customers)
    included = np.ones(n, bool) if policy.include.empty else matches(*_scope(policy.include))
    excluded = np.zeros(n, bool) if policy.exclude.empty else matches(*_scope(policy.exclude))
    allowed: np.ndarray = included & ~excluded
    return allowed


def _scope(scope: Any) -> tuple[tuple[str, ...], tuple[str, ...]]:
    return scope.customers, scope.tags


def evaluate(snapshot: Snapshot, policy: Policy, standing: pd.DataFrame) -> Evaluation:
    """Decide every customer's state (see the module docstring)."""
    customers = snapshot.customers
    n, states = len(customers), policy.states
    figures = compute_figures(snapshot, [None, *policy.failure_windows])
    prev = standing.set_index("customer_id").reindex(customers["customer_id"])
    before_name = prev["state"].fillna(GOOD).to_numpy(dtype=object)
    index = {s.name: k for k, s in enumerate(states)}
    before = np.array([index.get(name, -1) for name in before_name], dtype=np.int64)
    removed = (before == -1) & (before_name != GOOD)
    since = prev["since"].to_numpy(dtype=object)
    since_days = np.array(
        [day_number(d) if isinstance(d, date) else figures.as_of for d in since], dtype=np.int64
    )
    at_entry = prev["mandate_at_entry"].fillna("").to_numpy(dtype=object)
    stay = Stay(
        days_in_state=figures.as_of - since_days,
        new_mandate=(figures.mandate_id != at_entry)
        & (figures.mandate_id != "")
        & np.isin(figures.mandate_status, list(USABLE_MANDATE)),
    )
    eligible = _in_scope(policy, customers)
    left_on = [v if isinstance(v, dict) else {} for v in prev["left_on"].to_numpy(dtype=object)]
    can_enter = np.zeros((len(states), n), bool)
    leave = np.zeros((len(states), n), bool)
    for k, s in enumerate(states):
        enter = group_holds(s.enter, figures, stay)
        last_left = np.array(
            [day_number(date.fromisoformat(m[s.name])) if s.name in m else NEVER for m in left_on],
            dtype=np.int64,
        )
        cooling = figures.as_of - last_left < s.cooldown_days
        can_enter[k] = enter & eligible & ~cooling
        leave[k] = group_holds(s.leave, figures, stay) if s.leave is not None else ~enter
    after, move = _decide(policy, before, removed, eligible, can_enter, leave, stay)
    decisions = _decisions(
        policy, snapshot, figures, stay, prev, before, before_name, after, move, can_enter
    )
    return Evaluation(policy=policy, as_of=snapshot.as_of, decisions=decisions)


def _highest(mask: np.ndarray) -> np.ndarray:
    """Per column, the highest row index that is True (-1 where none is)."""
    rows = mask.shape[0]
    if rows == 0:
        return np.full(mask.shape[1], -1, dtype=np.int64)
    flipped = mask[::-1]
    found = flipped.any(axis=0)
    return np.where(found, rows - 1 - flipped.argmax(axis=0), -1).astype(np.int64)


def _decide(
    policy: Policy,
    before: np.ndarray,
    removed: np.ndarray,
    eligible: np.ndarray,
    can_enter: np.ndarray,
    leave: np.ndarray,
    stay: Stay,
) -> tuple[np.ndarray, np.ndarray]:
    n = len(before)
    candidate = _highest(can_enter)
    after = before.copy()
    move = np.full(n, "none", dtype=object)
    in_state = before >= 0
    move[in_state] = "stay"
    rise = candidate > before
    after[rise] = candidate[rise]
    move[rise & in_state] = "escalate"
    move[rise & ~in_state] = "enter"
    move[rise & removed] = "enter"
    out = in_state & ~rise & ~eligible
    after[out] = -1
    move[out] = "excluded"
    min_days = np.array([s.min_days for s in policy.states], dtype=np.int64)
    safe = np.where(in_state, before, 0)
    columns = np.arange(n)
    leaving = in_state & ~rise & eligible
    leaving &= leave[safe, columns] & (stay.days_in_state >= min_days[safe])
    # The most severe milder state the customer may enter (-1: good standing).
    below = np.arange(len(policy.states))[:, None] < before[None, :]
    lower = _highest(can_enter & below)
    after[leaving] = lower[leaving]
    move[leaving] = "leave"
    gone = removed & ~rise
    move[gone] = "leave"
    return after, move


def _decisions(
    policy: Policy,
    snapshot: Snapshot,
    f: Figures,
    stay: Stay,
    prev: pd.DataFrame,
    before: np.ndarray,
    before_name: np.ndarray,
    after: np.ndarray,
    move: np.ndarray,
    can_enter: np.ndarray,
) -> pd.DataFrame:
    states = policy.states
    names = np.array([s.name for s in states] + [GOOD], dtype=object)
    pauses = np.array([s.pauses for s in states] + [False])
    resumes = np.array([s.resumes for s in states] + [False])
    after_name = names[after]  # -1 picks GOOD, the last entry
    changed = after_name != before_name
    old_period = prev["hold_period"].fillna("").to_numpy(dtype=object)
    old_count = prev["hold_count"].fillna(0).to_numpy(dtype=np.int64)
    # The ledger's open hold is the truth: a state that pauses only since the policy changed
    # starts a hold of its own.
    held_before = old_period != ""
    held_after = pauses[after]
    new_hold = held_after & ~held_before
    period = np.where(held_after, old_period, "")
    count = old_count + new_hold
    as_of = snapshot.as_of.isoformat()
    period[new_hold] = [f"h{c}-{as_of}" for c in count[new_hold]]
    release = held_before & ~held_after & (resumes[before] | (before < 0))
    prev_since = prev["since"].to_numpy(dtype=object)
    frame = pd.DataFrame(
        {
            "customer_id": snapshot.customers["customer_id"].to_numpy(dtype=object),
            "name": snapshot.customers["name"].to_numpy(dtype=object),
            "external_id": snapshot.customers["external_id"].to_numpy(dtype=object),
            "before": before_name,
            "after": after_name,
            "move": move,
            "changed": changed,
            "since": [snapshot.as_of if c else s for c, s in zip(changed, prev_since, strict=True)],
            "days_overdue": f.days_overdue,
            "unpaid_pence": f.unpaid_pence,
            "overdue_pence": f.overdue_pence,
            "unpaid_debts": f.unpaid_debts,
            "failures": f.failed(None),
            "mandate_id": f.mandate_id,
            "mandate_status": f.mandate_status,
            "mandate_at_entry": np.where(
                changed, f.mandate_id, prev["mandate_at_entry"].fillna("").to_numpy(dtype=object)
            ),
            "held_before": held_before,
            "holds": held_after,
            "release": release,
            "keeps_paused": held_before & ~held_after & ~release,
            "hold_period": period,
            "old_hold_period": old_period,
            "hold_count": count,
            "left_on": _left_on(prev, before_name, changed, as_of),
            "reasons": [()] * len(before),
        }
    )
    frame.loc[frame["after"] == GOOD, "since"] = None
    involved = np.flatnonzero((before_name != GOOD) | (after_name != GOOD) | held_before)
    frame.loc[involved, "reasons"] = pd.Series(
        [
            _reasons(policy, f, stay, int(i), int(before[i]), int(after[i]), move[i])
            for i in involved
        ],
        index=involved,
        dtype=object,
    )
    return frame


def _left_on(
    prev: pd.DataFrame, before_name: np.ndarray, changed: np.ndarray, as_of: str
) -> list[dict[str, str]]:
    result = []
    lefts = prev["left_on"].to_numpy(dtype=object)
    for left, was, moved in zip(lefts, before_name, changed, strict=True):
        record = dict(left) if isinstance(left, dict) else {}
        if moved and was != GOOD:
            record[was] = as_of
        result.append(record)
    return result


def _reasons(
    policy: Policy, f: Figures, stay: Stay, i: int, before: int, after: int, move: str
) -> tuple[str, ...]:
    states = policy.states
    reasons: list[str] = []
    if move == "excluded":
        reasons.append(f"left {states[before].name}: not in the policy's scope (include/exclude)")
    elif move == "leave" and before < 0:
        reasons.append("left a state the policy no longer has")
    elif move == "leave":
        s = states[before]
        why = held(s.leave, f, stay, i) if s.leave else ["its enter conditions no longer hold"]
        reasons.append(f"left {s.name}: " + "; ".join(why))
    elif move == "stay":
        s = states[before]
        if s.leave is not None and bool(group_holds(s.leave, f, stay)[i]):
            reasons.append(
                f"stays {s.name}: leave conditions hold ({'; '.join(held(s.leave, f, stay, i))}) "
                f"but {stay.days_in_state[i]} of the {s.min_days} minimum days in the state"
            )
        else:
            wanted = s.leave.describe() if s.leave else "its enter conditions no longer holding"
            reasons.append(f"stays {s.name}: waiting for {wanted}")
    elif move == "none":
        reasons.append("in good standing; resuming what billops paused while it was not")
    if after >= 0 and move in ("enter", "escalate", "leave"):
        s = states[after]
        reasons.append(f"entered {s.name}: " + "; ".join(held(s.enter, f, stay, i)))
    return tuple(reasons)
