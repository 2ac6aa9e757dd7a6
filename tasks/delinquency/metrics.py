"""Per-customer figures the conditions are tested on, computed with vectorised kernels.

Days are whole Europe/London calendar days as integers (days since 1970-01-01), amounts whole
pence as ``int64``; one array per figure, aligned with the snapshot's ``customers`` rows. A debt is
an invoice, or a payment request raised without an invoice, that has money due and is not a
draft, paid, settled or void (``SUBMITTED`` counts: the money is not in until the bank says so).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import date

import numpy as np
import pandas as pd

from tasks.delinquency.snapshot import INVOICE, NOT_DEBT_STATUSES, Snapshot

EPOCH = date(1970, 1, 1)
NEVER = np.iinfo(np.int64).min // 2  # a day number older than any real one


def day_number(day: date) -> int:
    """Days since 1970-01-01."""
    return (day - EPOCH).days


def day_numbers(column: pd.Series) -> np.ndarray:
    """A datetime column as day numbers; missing dates become :data:`NEVER`."""
    values = column.to_numpy(dtype="datetime64[D]")
    days: np.ndarray = values.astype(np.int64)
    days[np.isnat(values)] = NEVER
    return days


@dataclass
class Figures:
    """The figures of every customer of a snapshot (arrays aligned with its ``customers``)."""

    as_of: int
    days_overdue: np.ndarray
    unpaid_pence: np.ndarray
    overdue_pence: np.ndarray
    unpaid_debts: np.ndarray
    mandate_id: np.ndarray
    mandate_status: np.ndarray
    failures: dict[int | None, np.ndarray] = field(default_factory=dict)

    def failed(self, within_days: int | None) -> np.ndarray:
        """Failed collections observed in the last ``within_days`` days (None: ever)."""
        return self.failures[within_days]


def _positions(customer_ids: pd.Series, customers: pd.Index) -> np.ndarray:
    found: np.ndarray = np.asarray(customers.get_indexer(customer_ids), dtype=np.int64)
    return found


def _sum(at: np.ndarray, pence: np.ndarray, n: int) -> np.ndarray:
    """Pence summed per customer in ``int64`` (exact; a float sum would round large totals)."""
    total = np.zeros(n, dtype=np.int64)
    np.add.at(total, at, pence)
    return total


def compute_figures(snapshot: Snapshot, windows: Iterable[int | None]) -> Figures:
    """Every customer's figures on the snapshot's day; failures counted for each window."""
    customers = pd.Index(snapshot.customers["customer_id"])
    n = len(customers)
    today = day_number(snapshot.as_of)
    items = snapshot.items
    debt = ~items["status"].isin(NOT_DEBT_STATUSES).to_numpy() & (items["due_pence"] > 0).to_numpy()
    debt &= ((items["kind"] == INVOICE) | (items["invoice_id"] == "")).to_numpy()
    where = _positions(items["customer_id"], customers)
    debt &= where >= 0
    at, pence = where[debt], items["due_pence"].to_numpy(dtype=np.int64)[debt]
    due = day_numbers(items["due_on"])[debt]
    late = (due != NEVER) & (due < today)
    oldest = np.full(n, np.iinfo(np.int64).max, dtype=np.int64)
    np.minimum.at(oldest, at[late], due[late])
    days_overdue = np.where(oldest == np.iinfo(np.int64).max, 0, today - oldest)
    figures = Figures(
        as_of=today,
        days_overdue=days_overdue.astype(np.int64),
        unpaid_pence=_sum(at, pence, n),
        overdue_pence=_sum(at[late], pence[late], n),
        unpaid_debts=np.bincount(at, minlength=n).astype(np.int64),
        mandate_id=snapshot.customers["mandate_id"].to_numpy(dtype=object),
        mandate_status=snapshot.customers["mandate_status"].to_numpy(dtype=object),
    )
    failures = snapshot.failures
    failed_at = _positions(failures["customer_id"], customers)
    failed_on = day_numbers(failures["observed_on"])
    for window in set(windows):
        keep = failed_at >= 0
        if window is not None:
            keep &= failed_on > today - window
        figures.failures[window] = np.bincount(failed_at[keep], minlength=n).astype(np.int64)
    return figures
