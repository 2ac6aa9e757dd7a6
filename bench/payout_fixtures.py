"""A year of a large platform biller's payouts, as the finance team downloads it: the payout
export (the sandbox's layout, one row per payout item), the business account's statement (the
generic layout: the payouts' credits among customers' transfers and spending), and what the
service holds of the payment requests the items name (as the reconciliation would fetch it).

Deterministic (a seeded generator). About one item in a thousand is a direct debit that failed
after it was paid out: a later payout deducts it, and its payment request is unpaid again.
"""

from __future__ import annotations

import csv
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

import numpy as np
import pandas as pd

from tasks.common.working_days import is_working_day

FIRST_DAY = date(2025, 1, 1)
NAMES = ("Harbour Dental", "Oak Joinery", "Bright Florists", "Kingsmead Vets", "Ash Bakery")
HEADER = (
    "Payout ID,Bank reference,Arrival date,Payout amount,Item type,Invoice number,"
    "Payment request number,Payment ID,Customer name,Item amount"
)


@dataclass(frozen=True)
class Year:
    """Where the files are and how big they are."""

    report: Path
    statement: Path
    documents: pd.DataFrame
    payouts: int
    items: int
    bank_lines: int


def _money(pennies: np.ndarray) -> np.ndarray:
    sign = np.where(pennies < 0, "-", "")
    whole = np.abs(pennies) // 100
    cents = np.char.zfill((np.abs(pennies) % 100).astype(str), 2)
    return np.char.add(np.char.add(np.char.add(sign, whole.astype(str)), "."), cents)


def _days(count: int) -> list[date]:
    days: list[date] = []
    day = FIRST_DAY
    while len(days) < count:
        if is_working_day(day):
            days.append(day)
        day += timedelta(days=1)
    return days


def write_year(
    folder: Path, *, payouts: int = 252, items: int = 201_600, bank_lines: int = 100_000
) -> Year:
    """The three inputs in ``folder`` (see the module docstring)."""
    rng = np.random.default_rng(2025)
    days = _days(payouts)
    per_day = items // payouts
    amounts = rng.integers(500, 50_000, size=per_day * payouts)
    numbers = np.arange(1, per_day * payouts + 1)
    payout_of = np.repeat(np.arange(payouts), per_day)
    failed = np.flatnonzero(rng.random(len(amounts)) < 0.001)
    failed = failed[payout_of[failed] < payouts - 1]
    rows = _item_frame(days, payout_of, numbers, amounts)
    deductions = rows.iloc[failed].copy()
    deductions["payout"] = payout_of[failed] + 1
    deductions["kind"] = "DEDUCTION"
    deductions["amount"] = -deductions["amount"]
    frame = pd.concat([rows, deductions], ignore_index=True).sort_values(["payout"], kind="stable")
    totals = frame.groupby("payout")["amount"].sum()
    frame["day"] = [str(days[p]) for p in frame["payout"]]
    frame["payout_id"] = [f"po-{p:04d}" for p in frame["payout"]]
    frame["reference"] = [f"ADFIN-PO-{p:06d}" for p in frame["payout"]]
    frame["total"] = _money(totals.reindex(frame["payout"]).to_numpy())
    report = folder / "payouts.csv"
    _write_report(report, frame)
    statement = folder / "statement.csv"
    _write_statement(statement, days, totals.to_numpy(), bank_lines, rng)
    documents = pd.DataFrame(
        {
            "kind": "payment_request",
            "number": [f"PR-{n}" for n in numbers],
            "id": [f"id-{n}" for n in numbers],
            "status": np.where(np.isin(np.arange(len(numbers)), failed), "UNPAID", "SETTLED"),
            "total": amounts,
            "paid": np.where(np.isin(np.arange(len(numbers)), failed), 0, amounts),
            "updated": None,
        }
    )
    return Year(report, statement, documents, payouts, len(frame), bank_lines)


def _item_frame(
    days: list[date], payout_of: np.ndarray, numbers: np.ndarray, amounts: np.ndarray
) -> pd.DataFrame:
    return pd.DataFrame(
        {
            "payout": payout_of,
            "kind": "PAYMENT",
            "number": [f"PR-{n}" for n in numbers],
            "payment": [f"pay-{n:07d}" for n in numbers],
            "customer": np.array(NAMES)[numbers % len(NAMES)],
            "amount": amounts,
        }
    )


def _write_report(path: Path, frame: pd.DataFrame) -> None:
    lines = (
        frame["payout_id"]
        + ","
        + frame["reference"]
        + ","
        + frame["day"]
        + ","
        + frame["total"]
        + ","
        + frame["kind"]
        + ",,"
        + frame["number"]
        + ","
        + frame["payment"]
        + ","
        + frame["customer"]
        + ","
        + _money(frame["amount"].to_numpy())
    )
    path.write_text(HEADER + "\r\n" + "\r\n".join(lines) + "\r\n", encoding="utf-8")


def _write_statement(
    path: Path, days: list[date], totals: np.ndarray, lines: int, rng: np.random.Generator
) -> None:
    others = lines - len(days)
    when = sorted(
        [
            (d, 0, "BACS_IN", "ADFIN", f"ADFIN-PO-{i:06d}", int(t))
            for i, (d, t) in enumerate(zip(days, totals, strict=True))
        ]
        + [
            (
                days[0] + timedelta(days=int(o)),
                1,
                "FPI" if a > 0 else "DD",
                f"PAYEE {n}",
                f"REF {n}",
                int(a),
            )
            for n, (o, a) in enumerate(
                zip(
                    rng.integers(0, 364, size=others),
                    rng.integers(-90_000, 90_000, size=others),
                    strict=True,
                )
            )
        ]
    )
    balance = 10_000_000
    with path.open("w", encoding="utf-8", newline="") as handle:
        writer = csv.writer(handle, lineterminator="\r\n")
        writer.writerow(["Date", "Type", "Counterparty", "Reference", "Amount", "Balance"])
        for day, _, kind, payer, reference, amount in when:
            balance += amount
            writer.writerow(
                [
                    day.isoformat(),
                    kind,
                    payer,
                    reference,
                    _money(np.array([amount]))[0],
                    _money(np.array([balance]))[0],
                ]
            )
