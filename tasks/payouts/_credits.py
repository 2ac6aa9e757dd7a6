"""The payment service's credits on the biller's bank statement: payouts arriving.

A statement is read and classified by the bank-payments job (its profiles and its
``provider_payout`` class, so a biller's bank settings decide what a payout credit looks like);
this module takes those lines and keeps what reconciliation needs: each credit's stable line key,
booking date, amount, payer, reference and text, and the days the statement covered. The payout
job's own run has the bank-payments job read the statement for its payout lines only (its flow
hands them over: :func:`payout_line_credits`); the bank import, which classifies and keys every
line anyway, hands all its lines over (:func:`payout_credits`).
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ledger.payouts import BankCoverage, PayoutCredit
from tasks.payouts._items import DATE
from tasks.payouts._order import sort_stable

PROVIDER_PAYOUT = "provider_payout"  # the bank-payments job's class of these credits
CREDIT_COLUMNS = ("key", "booked_on", "amount", "payer", "reference", "text", "line")


def payout_credits(
    lines: pa.Table, classes: pa.Array, keys: pa.Array, sha256: str
) -> tuple[list[PayoutCredit], BankCoverage | None]:
    """The statement's payout credits and the days it covers.

    ``lines`` is a normalised statement (one row per line: ``line``, ``date``, ``amount`` in
    signed pennies, ``payer``, ``reference``, ``text``), ``classes`` each line's class and
    ``keys`` each line's stable key, as the bank-payments job computes them.
    """
    if lines.num_rows == 0:
        return [], None
    days = pc.min_max(lines.column("date")).as_py()
    coverage = BankCoverage(sha256, days["min"], days["max"], lines.num_rows)
    is_payout = pc.equal(pc.cast(classes, pa.string()), PROVIDER_PAYOUT)
    chosen = pc.and_(is_payout, pc.greater(lines.column("amount"), 0))
    picked = lines.filter(chosen).append_column("key", pc.filter(keys, chosen))
    return _credits(picked, sha256), coverage


def payout_line_credits(
    lines: pa.Table, coverage: BankCoverage
) -> tuple[list[PayoutCredit], BankCoverage]:
    """:func:`payout_credits` of a statement's payout lines as the payout job's own reading of
    a statement finds them (``line``, ``date``, ``amount``, ``payer``, ``reference``, ``text``
    and ``key``, one row per payout credit; the flow hands them over from the bank-payments
    job) and the days that statement covers."""
    return _credits(lines, coverage.file_sha256), coverage


def _credits(picked: pa.Table, sha256: str) -> list[PayoutCredit]:
    """The credits of a statement's payout lines (its columns with each line's ``key``)."""
    columns = picked.select(["line", "date", "amount", "payer", "reference", "text"]).to_pydict()
    return [
        PayoutCredit(
            line_key=str(key),
            booked_on=columns["date"][i],
            amount_pennies=int(columns["amount"][i]),
            payer=str(columns["payer"][i] or ""),
            reference=str(columns["reference"][i] or ""),
            text=str(columns["text"][i] or ""),
            file_sha256=sha256,
            line=int(columns["line"][i]),
        )
        for i, key in enumerate(picked.column("key").to_pylist())
    ]


def credits_frame(credits: Sequence[PayoutCredit]) -> pd.DataFrame:
    """Credits as a frame: ``key``, ``booked_on``, ``amount`` (pennies), ``payer``,
    ``reference``, ``text``, ``line``, by booking date."""
    frame = pd.DataFrame(
        {
            "key": [c.line_key for c in credits],
            "booked_on": pd.array([c.booked_on for c in credits], dtype=DATE),
            "amount": np.array([c.amount_pennies for c in credits], dtype=np.int64),
            "payer": [c.payer for c in credits],
            "reference": [c.reference for c in credits],
            "text": [c.text for c in credits],
            "line": np.array([c.line for c in credits], dtype=np.int64),
        },
        columns=list(CREDIT_COLUMNS),
    )
    return sort_stable(frame, ["booked_on", "line"]).reset_index(drop=True)
