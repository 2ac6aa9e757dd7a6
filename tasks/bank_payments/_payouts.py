"""A statement read for the payout job: every line checked as :func:`read_statement` checks it,
the texts of the credits only, and the payment service's payouts among them with their keys.

The payout job keeps the payout credits of a statement (``tasks/payouts/_credits.py``) and the
days it covers, no other line. Reading the whole statement for it, then classifying and keying
every line, cost 0.22-0.26 s of CPU for a year's 100,000 lines (``bench/bench_payouts.py``'s
"read statement" step), most of it for lines it drops: dictionary-encoding 100,000 nearly all
distinct payers and references (50 ms), every class's patterns over them (80 ms), every line's
key (50 ms), the running balance. Here (0.12 s):

- every line is checked as the bank import checks it (:func:`~._normalise.checked`: skipped
  rows, currency, date, amount), and a file with a bad line is refused with the same words;
- only the credits (amount above zero: the job keeps no other line) have their texts read,
  cleaned value by value (:class:`~._lines.FewLines`);
- only the payout patterns run (:func:`~._classify.payout_hits`): a credit they match is
  ``provider_payout`` whatever else matches it;
- only the payouts are keyed, with the credits of the same day and amount: a line's key counts
  the identical lines before it (``_keys``), and identical lines share their day and amount.
  (Were a payout's 64-bit digest equal to that of a line of another day or amount, a chance of
  about 1 in 10^12 for a year's 252 payouts among 100,000 lines, the bank import would count
  that line as an identical one before it, and this reading would not.)

``tests/bank_payments/test_payout_lines.py`` checks this against :func:`read_statement`,
:func:`classify` and :func:`line_keys`.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._classify import ClassifyRules, payout_hits
from tasks.bank_payments._file_bytes import Buffer, view
from tasks.bank_payments._keys import line_keys
from tasks.bank_payments._lines import FewLines
from tasks.bank_payments._memo import empty_text, payer_reference
from tasks.bank_payments._normalise import checked, outcome
from tasks.bank_payments._raw import read_rows
from tasks.bank_payments._read import detect_content, file_bytes, refuse_unusable
from tasks.bank_payments._text import statement_text
from tasks.common.working_days import london_today

# The columns of :attr:`StatementCredits.lines` (as the normalised statement's, texts plain).
CREDIT_COLUMNS = ("line", "date", "amount", "account", "payer", "reference", "text", "txn_id")
PAYOUT_COLUMNS = ("line", "date", "amount", "payer", "reference", "text", "key")


@dataclass(frozen=True)
class StatementCredits:
    """A statement's usable lines counted, the days they cover, and its credits' lines."""

    file: str
    sha256: str
    count: int
    first: date
    last: date
    lines: pa.Table  # CREDIT_COLUMNS, one row per credit (amount above zero), in file order


def read_statement_credits(path: Path, *, today: date | None = None) -> StatementCredits:
    """:func:`read_statement` of ``path`` for its credits (see the module docstring); refused
    as that refuses it, with the same :class:`StatementRefused` or :class:`UnknownLayout`."""
    return statement_credits_of(file_bytes(path), where=str(path), today=today)


def statement_credits_of(
    data: Buffer, *, where: str, today: date | None = None
) -> StatementCredits:
    """:func:`read_statement_credits` of bytes already in memory."""
    content = statement_text(data, where)
    detection = detect_content(content, None)
    raw = read_rows(content, detection, where)
    lines = checked(raw, detection.profile, today=today or london_today(), where=where)
    bad, _ = outcome(lines)
    usable = lines.open()
    refuse_unusable(int(usable.sum()), bad, "reject_file", detection, where)
    sha256 = hashlib.sha256(view(data)).hexdigest()
    dates = lines.dates if usable.all() else lines.dates.filter(pa.array(usable))
    days = pc.min_max(dates).as_py()
    credits = usable & (lines.amount > 0)
    few = FewLines(lines.raw, detection.profile, credits)
    description = few.field("text")
    payer, reference = payer_reference(few, description)
    txn = few.field("id")
    rows = pa.array(np.flatnonzero(credits))
    table = pa.table(
        {
            "line": pa.array(lines.raw.lines[credits], pa.int64()),
            "date": lines.dates.take(rows),
            "amount": pa.array(lines.amount[credits], pa.int64()),
            "account": lines.account.take(rows),
            "payer": payer,
            "reference": reference,
            "text": description if description is not None else empty_text(few.n),
            "txn_id": txn if txn is not None else empty_text(few.n),
        }
    )
    return StatementCredits(where, sha256, len(dates), days["min"], days["max"], table)


def payout_lines(statement: StatementCredits, rules: ClassifyRules | None = None) -> pa.Table:
    """The credits :func:`classify` calls ``provider_payout`` under ``rules``, each with the
    key :func:`line_keys` gives it (``PAYOUT_COLUMNS``, in file order)."""
    credits = statement.lines
    hits = payout_hits(
        credits.column("payer"), credits.column("reference"), credits.column("text"), rules
    )
    picked = np.flatnonzero(hits)
    alike = _same_day_and_amount(credits, picked)
    keys = line_keys(credits.take(pa.array(alike)))
    found = credits.take(pa.array(picked)).select(list(PAYOUT_COLUMNS[:-1]))
    # ``picked`` is within ``alike`` (both in file order): where each of its rows is there.
    return found.append_column("key", keys.take(pa.array(np.searchsorted(alike, picked))))


def _same_day_and_amount(credits: pa.Table, picked: np.ndarray) -> np.ndarray:
    """The rows (in order) of ``credits`` with the day and amount of a ``picked`` one: every
    line identical to one of those (see the module docstring), the picked ones among them."""
    amount = np.asarray(credits.column("amount").to_numpy(), dtype=np.int64)
    days = np.asarray(credits.column("date").cast(pa.int32()).to_numpy(), dtype=np.int64)
    wanted = set(zip(days[picked].tolist(), amount[picked].tolist(), strict=True))
    amounts = np.unique(amount[picked])  # a few hundred, looked up by bisection
    if not len(amounts):
        return picked
    at = np.minimum(np.searchsorted(amounts, amount), len(amounts) - 1)
    near = np.flatnonzero(amounts[at] == amount)
    same = [pair in wanted for pair in zip(days[near].tolist(), amount[near].tolist(), strict=True)]
    alike: np.ndarray = near[np.array(same, dtype=bool)]
    return alike
