"""Each policy condition tested for every customer at once, and said in words for one.

:func:`holds` gives a condition's result as a boolean array over the snapshot's customers,
computed once per evaluation and kept (:class:`Stay`), so the reasons written for thousands of
customers read the arrays instead of testing again; :func:`held` says which conditions of a group
held for one customer, each with that customer's figure ("31 days overdue").
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import timedelta
from typing import Any

import numpy as np

from tasks.delinquency.conditions import Condition, ConditionGroup, pounds
from tasks.delinquency.metrics import EPOCH, Figures, day_number
from tasks.delinquency.snapshot import to_pounds


@dataclass
class Stay:
    """Per-customer facts about the state it is in (for leave conditions), and each condition's
    result once computed (the reasons of every customer read them, never recompute them)."""

    days_in_state: np.ndarray
    new_mandate: np.ndarray
    tested: dict[int, np.ndarray] = field(default_factory=dict)


def holds(c: Condition, f: Figures, stay: Stay) -> np.ndarray:
    found = stay.tested.get(id(c))
    if found is None:
        found = stay.tested[id(c)] = np.asarray(_test(c, f, stay), dtype=bool)
    return found


def _test(c: Condition, f: Figures, stay: Stay) -> Any:
    match c.kind:
        case "days_overdue":
            return f.days_overdue >= c.value
        case "failed_attempts":
            return f.failed(c.value.within_days) >= c.value.count
        case "unpaid_amount_at_least":
            return f.unpaid_pence >= int(c.value * 100)
        case "unpaid_amount_below":
            return f.unpaid_pence < int(c.value * 100)
        case "overdue_amount_at_least":
            return f.overdue_pence >= int(c.value * 100)
        case "overdue_amount_below":
            return f.overdue_pence < int(c.value * 100)
        case "unpaid_invoices_at_least":
            return f.unpaid_debts >= c.value
        case "unpaid_invoices_below":
            return f.unpaid_debts < c.value
        case "mandate_status":
            return np.isin(f.mandate_status, list(c.value))
        case "new_mandate":
            return stay.new_mandate
        case "after_days":
            return stay.days_in_state >= c.value
        case _:
            return np.full(len(f.days_overdue), f.as_of >= day_number(c.value))


def group_holds(group: ConditionGroup, f: Figures, stay: Stay) -> np.ndarray:
    found = stay.tested.get(id(group))
    if found is None:
        found = stay.tested[id(group)] = _combine(group, f, stay)
    return found


def _combine(group: ConditionGroup, f: Figures, stay: Stay) -> np.ndarray:
    n = len(f.days_overdue)
    result = np.ones(n, bool)
    for c in group.all:
        result &= holds(c, f, stay)
    if group.any:
        either = np.zeros(n, bool)
        for c in group.any:
            either |= holds(c, f, stay)
        result &= either
    return result


def figure(c: Condition, f: Figures, stay: Stay, i: int) -> str:
    """The customer's figure a condition was tested on, in words."""
    match c.kind:
        case "days_overdue":
            return f"{f.days_overdue[i]} days overdue"
        case "failed_attempts":
            window = f" in {c.value.within_days} days" if c.value.within_days else ""
            return f"{f.failed(c.value.within_days)[i]} failed collections{window}"
        case "unpaid_amount_at_least" | "unpaid_amount_below":
            return f"unpaid {pounds(to_pounds(f.unpaid_pence[i]))}"
        case "overdue_amount_at_least" | "overdue_amount_below":
            return f"overdue {pounds(to_pounds(f.overdue_pence[i]))}"
        case "unpaid_invoices_at_least" | "unpaid_invoices_below":
            return f"{f.unpaid_debts[i]} unpaid debts"
        case "mandate_status":
            return f"mandate {f.mandate_status[i]}"
        case "new_mandate":
            return "new mandate" if stay.new_mandate[i] else "same mandate"
        case "after_days":
            return f"{stay.days_in_state[i]} days in the state"
        case _:
            return f"today {(EPOCH + timedelta(days=int(f.as_of))).isoformat()}"


def held(group: ConditionGroup, f: Figures, stay: Stay, i: int) -> list[str]:
    """The conditions of ``group`` that hold for customer ``i``, each with its figure."""
    return [
        f"{c.describe()} ({figure(c, f, stay, i)})"
        for c in group.conditions
        if bool(holds(c, f, stay)[i])
    ]
