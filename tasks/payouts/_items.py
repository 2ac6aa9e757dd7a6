"""Payout items and payouts as frames, the way every step of the job passes them around.

Items (one row per payout item): ``line`` (in the report; 0 when read back from the ledger),
``payout_id``, ``reference``, ``arrival_date``, ``payout_amount`` (pennies), ``kind`` (PAYMENT or
DEDUCTION), ``amount`` (signed pennies: deductions negative), ``position`` (within its payout),
and the texts naming what was paid: ``invoice_number``, ``payment_request_number``,
``payment_id``, ``invoice_id``, ``payment_request_id``, ``customer``, ``description``.

Payouts (one row per payout): ``payout_id``, ``reference``, ``arrival_date``, ``amount`` (what
the report says was paid out), ``gross`` (its payments), ``deductions`` (positive), ``items``,
``first_line``.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from datetime import date
from typing import Any

import numpy as np
import pandas as pd
import pyarrow as pa

from ledger.payouts import ITEM_FIELDS, PayoutRecord

ITEM_TEXT = (
    "payout_id",
    "reference",
    "invoice_number",
    "payment_request_number",
    "payment_id",
    "invoice_id",
    "payment_request_id",
    "customer",
    "description",
)
DATE = pd.ArrowDtype(pa.date32())
PAYOUT_COLUMNS = (
    "payout_id",
    "reference",
    "arrival_date",
    "amount",
    "gross",
    "deductions",
    "items",
    "first_line",
)


@dataclass(frozen=True)
class Problem:
    """One bad cell or line of a report: where a person finds it, and why it is refused."""

    line: int
    column: str
    value: str
    reason: str

    def __str__(self) -> str:
        where = f"line {self.line}" + (f", column {self.column!r}" if self.column else "")
        shown = f" ({self.value!r})" if self.value else ""
        return f"{where}{shown}: {self.reason}"


def payouts_of(items: pd.DataFrame) -> pd.DataFrame:
    """One row per payout (see the module docstring), in arrival order."""
    if items.empty:
        return empty_payouts()
    amounts = items["amount"].to_numpy(dtype=np.int64)
    work = pd.DataFrame(
        {
            "payout_id": items["payout_id"],
            "gross": np.where(amounts > 0, amounts, 0),
            "deductions": np.where(amounts < 0, -amounts, 0),
            "items": 1,
        }
    )
    totals = work.groupby("payout_id", sort=False).sum()
    heads = items.groupby("payout_id", sort=False).agg(
        reference=("reference", "first"),
        arrival_date=("arrival_date", "first"),
        amount=("payout_amount", "first"),
        first_line=("line", "min"),
    )
    payouts = heads.join(totals).reset_index()
    payouts = payouts.sort_values(["arrival_date", "reference", "payout_id"], kind="stable")
    return payouts.reset_index(drop=True)[list(PAYOUT_COLUMNS)]


def empty_payouts() -> pd.DataFrame:
    frame = pd.DataFrame({name: pd.Series([], dtype=object) for name in PAYOUT_COLUMNS})
    for name in ("amount", "gross", "deductions", "items", "first_line"):
        frame[name] = frame[name].astype("int64")
    frame["arrival_date"] = frame["arrival_date"].astype(DATE)
    return frame


def records(payouts: pd.DataFrame, digests: pd.Series, sha256: str) -> list[PayoutRecord]:
    """The payouts as the ledger keeps them."""
    return [
        PayoutRecord(
            payout_id=str(row.payout_id),
            reference=str(row.reference),
            arrival_date=row.arrival_date,
            amount_pennies=int(row.amount),
            gross_pennies=int(row.gross),
            deduction_pennies=int(row.deductions),
            item_count=int(row.items),
            items_digest=str(digests[row.payout_id]),
            report_sha256=sha256,
        )
        for row in payouts.itertuples(index=False)
    ]


def ledger_rows(items: pd.DataFrame) -> Iterator[tuple[Any, ...]]:
    """The items as tuples in the ledger's ``ITEM_FIELDS`` order."""
    columns = [
        items["amount"].to_numpy(dtype=np.int64).tolist()
        if name == "amount_pennies"
        else items[name].tolist()
        for name in ITEM_FIELDS
    ]
    return zip(*columns, strict=True)


def from_ledger(rows: Sequence[Sequence[Any]], payouts: Sequence[PayoutRecord]) -> pd.DataFrame:
    """Items read back from the ledger (tuples in ``ITEM_FIELDS`` order) as an items frame; each
    takes its payout's reference, date and amount from ``payouts``."""
    frame = pd.DataFrame(list(rows), columns=list(ITEM_FIELDS))
    frame = frame.rename(columns={"amount_pennies": "amount"})
    frame["amount"] = frame["amount"].astype("int64")
    frame["position"] = frame["position"].astype("int64")
    heads = {p.payout_id: p for p in payouts}
    frame["reference"] = [heads[p].reference for p in frame["payout_id"]]
    frame["arrival_date"] = pd.array(
        [heads[p].arrival_date for p in frame["payout_id"]], dtype=DATE
    )
    frame["payout_amount"] = np.array(
        [heads[p].amount_pennies for p in frame["payout_id"]], dtype=np.int64
    )
    frame["line"] = np.zeros(len(frame), dtype=np.int64)
    return frame


def payouts_from_records(payouts: Sequence[PayoutRecord]) -> pd.DataFrame:
    """Payouts known to the ledger as a payouts frame."""
    if not payouts:
        return empty_payouts()
    frame = pd.DataFrame(
        {
            "payout_id": [p.payout_id for p in payouts],
            "reference": [p.reference for p in payouts],
            "arrival_date": pd.array([p.arrival_date for p in payouts], dtype=DATE),
            "amount": [p.amount_pennies for p in payouts],
            "gross": [p.gross_pennies for p in payouts],
            "deductions": [p.deduction_pennies for p in payouts],
            "items": [p.item_count for p in payouts],
            "first_line": [0] * len(payouts),
        }
    )
    return frame.sort_values(["arrival_date", "reference", "payout_id"], kind="stable")


def as_date(value: object) -> date:
    """A date cell of a frame (Arrow date, pandas Timestamp or date) as a ``date``."""
    if isinstance(value, pd.Timestamp):
        day: date = value.date()
        return day
    if isinstance(value, date):
        return value
    if hasattr(value, "as_py"):
        return as_date(value.as_py())  # an Arrow scalar
    raise TypeError(f"not a date: {value!r}")
