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

from collections.abc import Sequence
from dataclasses import dataclass
from datetime import date

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ledger.payouts import ITEM_FIELDS, PayoutRecord, items_table
from tasks.payouts._order import sort_stable
from tasks.payouts._runs import run_starts

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


def payout_codes(payout_ids: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """Each item's payout as a number (0, 1, ... in order of first appearance) and each payout's
    first item (its row): a year of items is grouped by integers, not by text, once."""
    codes, _ = pd.factorize(payout_ids, sort=False)
    firsts = np.flatnonzero(~pd.Series(codes).duplicated().to_numpy(dtype=bool))
    return codes.astype(np.int64), firsts


def arrow_payout_codes(payout_ids: pa.Array) -> tuple[np.ndarray, np.ndarray]:
    """:func:`payout_codes` of an Arrow column of payout ids without nulls (a file's cells): by
    the column's runs where each payout is one run, else by one dictionary encode. Both number
    the values in order of first appearance, as ``pd.factorize`` does, without the copies pandas
    makes around it."""
    if not payout_ids.null_count:
        # A report lists its items payout by payout: when each payout's items are one run, the
        # run's number is the code, found by comparing neighbours (``_runs``), no hash of each
        # item's id.
        starts = run_starts(payout_ids)
        heads = payout_ids.take(pa.array(starts)).to_pylist()
        if len(set(heads)) == len(heads):
            sizes = np.diff(np.r_[starts, len(payout_ids)])
            return np.repeat(np.arange(len(starts), dtype=np.int64), sizes), starts
    encoded = payout_ids.dictionary_encode()
    codes = np.asarray(encoded.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    # Codes are numbered in order of first appearance, so a code appears first exactly where it
    # exceeds every code before it (numpy does not promise which of repeated writes wins, so
    # the first rows are found, not written over).
    running = np.maximum.accumulate(codes)
    firsts = np.flatnonzero(np.r_[True, running[1:] > running[:-1]]) if len(codes) else codes
    return codes, firsts.astype(np.int64)


def contiguous(codes: np.ndarray) -> bool:
    """Whether :func:`payout_codes`' codes never go back (each payout's items together, in
    payout order: code ``c``'s items are then the rows from ``firsts[c]`` to ``firsts[c + 1]``)."""
    return bool(np.all(codes[1:] >= codes[:-1])) if len(codes) else True


def positions_within(codes: np.ndarray, firsts: np.ndarray) -> np.ndarray:
    """Each item's position within its payout (0, 1, ...), in row order (a groupby's cumcount
    over ``codes``; by arithmetic where :func:`contiguous`)."""
    if contiguous(codes):
        found: np.ndarray = np.arange(len(codes), dtype=np.int64) - firsts[codes]
    else:
        found = pd.Series(codes).groupby(codes).cumcount().to_numpy(dtype=np.int64)
    return found


def payouts_of(
    items: pd.DataFrame, *, grouped: tuple[np.ndarray, np.ndarray] | None = None
) -> pd.DataFrame:
    """One row per payout (see the module docstring), in arrival order; ``grouped``:
    :func:`payout_codes` of ``items`` where the caller has them already."""
    if items.empty:
        return empty_payouts()
    codes, firsts = grouped if grouped is not None else payout_codes(items["payout_id"])
    amounts = items["amount"].to_numpy(dtype=np.int64)
    work = {
        "gross": np.where(amounts > 0, amounts, 0),
        "deductions": np.where(amounts < 0, -amounts, 0),
        "items": np.ones(len(items), dtype=np.int64),
        "first_line": items["line"].to_numpy(dtype=np.int64),
    }
    if contiguous(codes):
        # Each payout's lines together (a report lists them so): each total is a sum over a
        # slice, in whole pennies (int64, exact), without a groupby's hashing and sorting.
        totals = pd.DataFrame(
            {
                name: (np.minimum if name == "first_line" else np.add).reduceat(values, firsts)
                for name, values in work.items()
            }
        )
    else:
        totals = (
            pd.DataFrame(work)
            .groupby(codes, sort=True)
            .agg({"gross": "sum", "deductions": "sum", "items": "sum", "first_line": "min"})
        )
    heads = items[["payout_id", "reference", "arrival_date", "payout_amount"]].iloc[firsts]
    payouts = heads.rename(columns={"payout_amount": "amount"})
    payouts = payouts.reset_index(drop=True).join(totals.reset_index(drop=True))
    payouts = sort_stable(payouts, ["arrival_date", "reference", "payout_id"])
    return payouts.reset_index(drop=True)[list(PAYOUT_COLUMNS)]


def empty_payouts() -> pd.DataFrame:
    frame = pd.DataFrame({name: pd.Series([], dtype=object) for name in PAYOUT_COLUMNS})
    for name in ("amount", "gross", "deductions", "items", "first_line"):
        frame[name] = frame[name].astype("int64")
    frame["arrival_date"] = frame["arrival_date"].astype(DATE)
    return frame


def records(payouts: pd.DataFrame, sha256: str) -> list[PayoutRecord]:
    """The payouts as the ledger keeps them (the ledger digests their items itself)."""
    # Read by whole columns: ``itertuples`` boxes each Arrow cell on its own.
    columns = ("payout_id", "reference", "arrival_date", "amount", "gross", "deductions", "items")
    return [
        PayoutRecord(
            payout_id=str(payout_id),
            reference=str(reference),
            arrival_date=as_date(day),
            amount_pennies=int(amount),
            gross_pennies=int(gross),
            deduction_pennies=int(deductions),
            item_count=int(items),
            report_sha256=sha256,
        )
        for payout_id, reference, day, amount, gross, deductions, items in zip(
            *(payouts[name].tolist() for name in columns), strict=True
        )
    ]


def ledger_items(items: pd.DataFrame) -> pa.Table:
    """The items as the Arrow table the ledger keeps (``ITEM_FIELDS``; no copy of the text)."""
    chosen = items[[("amount" if n == "amount_pennies" else n) for n in ITEM_FIELDS]]
    table = pa.Table.from_pandas(chosen, preserve_index=False)
    return table.rename_columns(list(ITEM_FIELDS))


def empty_items() -> pd.DataFrame:
    """An items frame without items."""
    return from_ledger(items_table([]), [])


def from_ledger(items: pa.Table, payouts: Sequence[PayoutRecord]) -> pd.DataFrame:
    """Items read back from the ledger (an Arrow table of ``ITEM_FIELDS``) as an items frame;
    each takes its payout's reference, date and amount from ``payouts`` (by Arrow: a year of
    items is hundreds of thousands of rows)."""
    heads = pa.table(
        {
            "payout_id": pa.array([p.payout_id for p in payouts], pa.string()),
            "reference": pa.array([p.reference for p in payouts], pa.string()),
            "arrival_date": pa.array([p.arrival_date for p in payouts], pa.date32()),
            "payout_amount": pa.array([p.amount_pennies for p in payouts], pa.int64()),
        }
    )
    ids = items.column("payout_id")
    at = pc.index_in(ids, value_set=heads.column("payout_id").combine_chunks())
    if at.null_count:
        unknown = pc.filter(ids, pc.is_null(at)).unique().to_pylist()[:5]
        raise ValueError(f"items of payouts the ledger does not know: {unknown}")
    joined = heads.take(at)
    table = pa.table(
        {
            **{n: items.column(n) for n in ITEM_FIELDS if n != "amount_pennies"},
            "amount": items.column("amount_pennies").cast(pa.int64()),
            "reference": joined.column("reference"),
            "arrival_date": joined.column("arrival_date"),
            "payout_amount": joined.column("payout_amount"),
            "line": pa.array(np.zeros(items.num_rows, dtype=np.int64)),
        }
    )
    frame = table.to_pandas(types_mapper={pa.date32(): DATE}.get)
    frame["position"] = frame["position"].astype("int64")
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
    return sort_stable(frame, ["arrival_date", "reference", "payout_id"])


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
