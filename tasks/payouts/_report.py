"""Reading a payout report: the file through the shared finance-file reader, its layout from the
payout profiles, every cell checked by whole columns.

A report with any unusable line is refused whole, naming the file, the line, the column and the
reason (``docs/conventions.md`` §8 Bad input): nothing of it is kept. Refused: a file no layout
describes, a cell that is not a date or an amount of pounds, a line type the layout does not
know, a payment line with a negative amount, a line naming no invoice, payment request or
payment, a payout whose reference, arrival date or amount differ between its lines, a payment
twice in one payout, a line with more cells than the header.

The report is one row per payout item. :class:`PayoutReport` keeps the items (signed pennies:
payments positive, deductions negative) and the payouts (totals per payout) as pandas frames,
and the payment ids on more than one line (what finding a payment paid out twice starts from).
"""

from __future__ import annotations

import csv
import hashlib
import io
from collections.abc import Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from ledger.payouts import ITEM_FIELDS
from tasks.common.finance_files import InputFileError, LoadedTable, load_table
from tasks.payouts._items import (
    DATE,
    ITEM_TEXT,
    Problem,
    arrow_payout_codes,
    empty_items,
    payouts_of,
    positions_within,
)
from tasks.payouts._payout_lines import (
    NO_REPEATS,
    Payments,
    RepeatedPayments,
    inconsistent,
)
from tasks.payouts._profiles import (
    DEDUCTION,
    PAYMENT,
    ReportProfile,
    available_report_profiles,
)
from tasks.payouts._text import empty_cells
from tasks.payouts._values import dates_column, distinct, pennies_column

HEAD_BYTES = 64 * 1024
HEADER_ROWS = 10


class PayoutReportRefused(Exception):
    """The report cannot be used; nothing of it is kept. ``problems`` lists every bad cell."""

    def __init__(self, where: str, reason: str, problems: Sequence[Problem] = ()) -> None:
        super().__init__(f"{where}: {reason}")
        self.where = where
        self.reason = reason
        self.problems = list(problems)


@dataclass(frozen=True)
class PayoutReport:
    """A payout report read: its items, its payouts, and how it was read."""

    file: str
    sha256: str
    profile: str
    items: pd.DataFrame
    payouts: pd.DataFrame
    # Payment ids on more than one of the items (None: not known). Checking the report found
    # them already; a payment paid out by two payouts is among them, so the reconciliation looks
    # at these instead of hashing a year of payment ids again (``_scope.paid_out_twice``).
    repeated_payments: RepeatedPayments | None = None
    # The items as the ledger keeps them (``ledger.payouts.ITEM_FIELDS``), from the Arrow
    # columns the frame was built from (None: made from the frame when needed): keeping the
    # report converts no frame back to Arrow.
    ledger_items: pa.Table | None = field(default=None, compare=False, repr=False)

    @property
    def first_day(self) -> object:
        """The first arrival date (None for a report without payouts)."""
        return self.payouts["arrival_date"].min() if len(self.payouts) else None

    @property
    def last_day(self) -> object:
        return self.payouts["arrival_date"].max() if len(self.payouts) else None


def read_payout_report(
    path: Path, *, profile: ReportProfile | None = None, profiles: Sequence[ReportProfile] = ()
) -> PayoutReport:
    """Read ``path`` (see the module docstring); :class:`PayoutReportRefused` when refused."""
    loaded, chosen = _load(path, [profile] if profile else list(profiles) or None)
    if isinstance(loaded, str):  # a header and no payouts: an export of a period without any
        empty = empty_items()
        return PayoutReport(str(path), loaded, chosen.name, empty, payouts_of(empty), NO_REPEATS)
    (items, kept), problems, grouped, repeated = _items(loaded, chosen)
    if problems:
        problems.sort(key=lambda p: p.line)
        first = problems[0]
        more = f" ({len(problems) - 1} more problem(s) in the file)" if len(problems) > 1 else ""
        raise PayoutReportRefused(str(path), f"{first}{more}; nothing was kept", problems)
    payouts = payouts_of(items, grouped=grouped)
    return PayoutReport(str(path), loaded.sha256, chosen.name, items, payouts, repeated, kept)


def is_payout_report(path: Path) -> str | None:
    """None when ``path`` reads as a payout report, else why not (the inbox's detector)."""
    try:
        read_payout_report(path)
    except PayoutReportRefused as exc:
        return exc.reason
    return None


def _load(
    path: Path, profiles: list[ReportProfile] | None
) -> tuple[LoadedTable | str, ReportProfile]:
    """The file read by the layout that recognises most of its header (user layouts first on a
    tie) among those whose required columns the header has (the file's digest instead of the
    table when it has the header and no line)."""
    candidates = profiles if profiles is not None else available_report_profiles()
    answers: list[str] = []
    for candidate in _ranked(path, candidates):
        try:
            return load_table(path, candidate.spec), candidate
        except InputFileError as exc:
            text = str(exc).removeprefix(f"{path}: ")
            if text.startswith(("cannot be read", "is empty", "is binary", "unreadable")):
                raise PayoutReportRefused(str(path), text) from exc
            if text.startswith("has a header row") and text.endswith("but no data rows"):
                return hashlib.sha256(path.read_bytes()).hexdigest(), candidate
            answers.append(f"{candidate.name} ({candidate.origin}): {text}")
    raise PayoutReportRefused(
        str(path),
        "not a payout report billops knows; each layout says: "
        + " | ".join(answers)
        + ". Describe its columns in $BILLOPS_HOME/payout-profiles/NAME.yaml",
    )


def _ranked(path: Path, candidates: list[ReportProfile]) -> list[ReportProfile]:
    """Layouts by how many cells of the file's first lines they recognise (a sniff of the first
    64 KiB; a workbook or an unreadable file keeps the given order)."""
    try:
        with path.open("rb") as handle:
            head = handle.read(HEAD_BYTES)
    except OSError:
        return candidates
    if head.startswith(b"PK"):
        return candidates
    text = head.decode("utf-8-sig", errors="replace")
    delimiter = max(",;\t", key=lambda d: text.split("\n", 1)[0].count(d))
    rows = list(csv.reader(io.StringIO(text), delimiter=delimiter))[:HEADER_ROWS]
    score = {p.name: max((p.spec.recognised(r) for r in rows), default=0) for p in candidates}
    # On a tie: a user's layout first, then the most specific (fewest header names).
    return sorted(
        candidates,
        key=lambda p: (-score[p.name], p.origin != "user", sum(map(len, p.columns.values()))),
    )


def _items(
    loaded: LoadedTable, profile: ReportProfile
) -> tuple[
    tuple[pd.DataFrame, pa.Table], list[Problem], tuple[np.ndarray, np.ndarray], RepeatedPayments
]:
    """The items frame and the same items as the ledger keeps them, the problems found,
    :func:`payout_codes` of its lines, and the payment ids on more than one line."""
    table = loaded.table
    names = table.column_names
    lines = np.asarray(table.lines.to_numpy(), dtype=np.int64)
    problems = _shape_problems(loaded, lines)
    days, bad_days, why = dates_column(table.value("arrival_date"))
    problems += _bad(lines, bad_days, names["arrival_date"], table.value("arrival_date"), why)
    amounts: dict[str, np.ndarray] = {}
    for name in ("payout_amount", "item_amount"):
        amounts[name], bad, why = pennies_column(table.value(name))
        problems += _bad(lines, bad, names[name], table.value(name), why)
    kinds, signed, wrong = _kinds(table.value("item_type"), amounts["item_amount"], profile)
    column = names.get("item_type", "")
    problems += [Problem(int(lines[i]), column, value, reason) for i, value, reason in wrong]
    # Built as Arrow columns and handed to pandas as they are (text stays Arrow-backed: no
    # Python string per cell).
    columns = {
        "line": pa.array(lines),
        **{name: table.value(name) for name in ITEM_TEXT},
        "arrival_date": days,
        "payout_amount": pa.array(amounts["payout_amount"]),
        "kind": kinds,
        "amount": pa.array(signed),
    }
    codes, firsts = arrow_payout_codes(columns["payout_id"])  # grouped by integers, once
    payments = Payments(columns["payment_id"])
    if not problems:
        problems += inconsistent(columns, names, codes, firsts, payments)
    frame = pa.table(columns).to_pandas(types_mapper={pa.date32(): DATE}.get)
    frame["position"] = positions = positions_within(codes, firsts)
    named = {"position": pa.array(positions), "amount_pennies": columns["amount"]}
    kept = pa.table({n: named[n] if n in named else columns[n] for n in ITEM_FIELDS})
    return (frame, kept), problems, (codes, firsts), payments.repeated()


def _shape_problems(loaded: LoadedTable, lines: np.ndarray) -> list[Problem]:
    """Lines wider than the header, and required cells left empty."""
    table = loaded.table
    width = len(table.header)
    wide = np.flatnonzero(np.asarray(table.widths.to_numpy()) > width)
    problems = [
        Problem(int(lines[i]), "", "", f"has more cells than the header's {width}") for i in wide
    ]
    for name in ("payout_id", "arrival_date", "payout_amount", "item_amount"):
        empty = np.flatnonzero(empty_cells(table.value(name)))
        problems += [
            Problem(int(lines[i]), table.column_names[name], "", "is empty") for i in empty
        ]
    return problems


def _bad(
    lines: np.ndarray, bad: np.ndarray, column: str, values: pa.Array, why: list[str]
) -> list[Problem]:
    rows = np.flatnonzero(bad)
    texts = pc.take(values, pa.array(rows)).to_pylist() if len(rows) else []
    return [
        Problem(int(lines[i]), column, str(text), reason)
        for i, text, reason in zip(rows, texts, why, strict=True)
        if text != ""  # an empty cell is reported once, as empty
    ]


def _kinds(
    words: pa.Array, amounts: np.ndarray, profile: ReportProfile
) -> tuple[pa.Array, np.ndarray, list[tuple[int, str, str]]]:
    """Each line's kind and signed amount (deductions negative), and the lines that are wrong."""
    if "item_type" not in profile.columns or not pc.any(pc.not_equal(words, "")).as_py():
        kinds = pa.array([PAYMENT, DEDUCTION], pa.string()).take(
            pa.array(amounts < 0).cast(pa.int8())
        )
        return kinds, amounts, []
    known, indices = distinct(words, lambda w: profile.kind_of(w) or "")
    # Each line's kind through the distinct words' (a handful): no Python string per line, and
    # each test on the handful, spread back by index (a take: no dictionary cast to warm up).
    kind_of_word = np.array([str(k) for k in known], dtype=object)
    looked_up = pa.array(kind_of_word.tolist(), pa.string()).take(pa.array(indices))

    def lines_of(kind: str) -> np.ndarray:
        return np.asarray((kind_of_word == kind)[indices], dtype=bool)

    problems: list[tuple[int, str, str]] = []
    unknown = np.flatnonzero(lines_of(""))
    listed = "; ".join(f"{k}: {', '.join(v)}" for k, v in profile.item_types.items())
    problems += [
        (int(i), _text(words, int(i)), f"is not a line type of the layout ({listed})")
        for i in unknown
    ]
    deduction = lines_of(DEDUCTION)
    signed = amounts.copy()
    if profile.deductions == "positive":
        wrong = deduction & (amounts < 0)
        signed[deduction] = -amounts[deduction]
    elif profile.deductions == "negative":
        wrong = deduction & (amounts > 0)
    else:
        wrong = np.zeros(len(amounts), dtype=bool)
        signed[deduction] = -np.abs(amounts[deduction])
    problems += [
        (
            int(i),
            _text(words, int(i)),
            f"a deduction's amount must be {profile.deductions} in this layout",
        )
        for i in np.flatnonzero(wrong)
    ]
    negative_payment = lines_of(PAYMENT) & (amounts < 0)
    problems += [
        (
            int(i),
            _text(words, int(i)),
            "a payment line cannot have a negative amount (a deduction?)",
        )
        for i in np.flatnonzero(negative_payment)
    ]
    return looked_up, signed, problems


def _text(values: pa.Array, row: int) -> str:
    return str(values[int(row)].as_py() or "")
