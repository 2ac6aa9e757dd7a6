"""The preview of a statement: every line, its class, what it names, what it matches, and the
action billops would take. Computed the same way for a dry run and for a real one.

The plan is columnar (the statement's table, one class and key per line, the matches as
frames); :class:`PlannedLine` objects are made only for the lines looked at one by one (those
to record, those for review) or in batches for the reports.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from datetime import date
from decimal import Decimal
from functools import cached_property

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._classify import (
    CLASSES,
    CUSTOMER_PAYMENT,
    ClassifyRules,
    class_codes,
    classify,
)
from tasks.bank_payments._dedup import duplicates
from tasks.bank_payments._kernels import encoded, mask
from tasks.bank_payments._keys import ID_PREFIX, line_keys
from tasks.bank_payments._match import (
    ALLOCATION_COLUMNS,
    CODE,
    DUPLICATE,
    FULL,
    OUTCOMES,
    OVERPAYMENT,
    PARTIAL,
    Allocation,
    Matches,
    match_lines,
)
from tasks.bank_payments._statement import Statement, pounds
from tasks.bank_payments._suggest import suggest

RECORDABLE = (FULL, PARTIAL, OVERPAYMENT)
BATCH = 50_000


@dataclass
class PlannedLine:
    """One statement line and what billops makes of it."""

    index: int
    line: int
    date: date
    amount: Decimal
    klass: str
    key: str
    payer: str
    reference: str
    text: str
    outcome: str
    references: list[str] = field(default_factory=list)
    allocations: list[Allocation] = field(default_factory=list)
    unallocated: Decimal = Decimal("0.00")
    suggestions: list[tuple[str, float]] = field(default_factory=list)
    note: str = ""
    conflicting_repeat: bool = False

    @property
    def recordable(self) -> bool:
        """Whether the line leads to payments recorded at the service."""
        return self.outcome in RECORDABLE and bool(self.allocations)


@dataclass
class Plan:
    """A statement planned against what is owed.

    ``conflicting_repeats``: duplicates (by index) that repeat an earlier line's transaction id
    with another amount or date. They are not recorded, but neither are they the same payment
    seen twice: a person must check them with the bank, so they go to review (``report``)."""

    statement: Statement
    classes: pa.Array
    keys: pa.Array
    matches: Matches
    suggestions: pd.DataFrame
    open_items: int
    conflicting_repeats: frozenset[int] = frozenset()

    @property
    def count(self) -> int:
        return self.statement.count

    @property
    def outcomes(self) -> np.ndarray:
        """Each line's outcome as its index into ``OUTCOMES``."""
        return self.matches.outcome

    def outcome_counts(self) -> dict[str, int]:
        counts = np.bincount(self.outcomes, minlength=len(OUTCOMES))
        return {name: int(c) for name, c in zip(OUTCOMES, counts, strict=True) if c}

    @cached_property
    def codes(self) -> np.ndarray:
        """Each line's class as an index into ``CLASSES``."""
        return class_codes(self.classes)

    @cached_property
    def amounts(self) -> np.ndarray:
        """Each line's amount in pennies."""
        return np.asarray(self.statement.lines.column("amount").to_numpy(), dtype=np.int64)

    @cached_property
    def lines(self) -> list[PlannedLine]:
        """Every line (small statements; large ones are read in :meth:`batches`)."""
        return [line for batch in self.batches() for line in batch]

    def recordable_indices(self) -> np.ndarray:
        """Lines that lead to payments, in file order."""
        with_money = np.unique(self.matches.allocations["line"].to_numpy(dtype=np.int64))
        outcome = self.outcomes[with_money]
        return with_money[np.isin(outcome, [CODE[name] for name in RECORDABLE])]

    def recordable(self) -> list[PlannedLine]:
        """Lines that lead to payments."""
        return self.take(self.recordable_indices())

    def conflicting(self) -> np.ndarray:
        """Whether each line is one of ``conflicting_repeats``."""
        found = np.zeros(self.count, dtype=bool)
        found[list(self.conflicting_repeats)] = True
        return found

    def customer_credit(self) -> np.ndarray:
        """A customer's money in (recorded or not), per line."""
        credit: np.ndarray = (self.codes == CLASSES.index(CUSTOMER_PAYMENT)) & (self.amounts > 0)
        return credit

    def batches(self, size: int = BATCH) -> Iterator[list[PlannedLine]]:
        """Every line, ``size`` at a time."""
        for start in range(0, self.count, size):
            yield self.take(np.arange(start, min(start + size, self.count)))

    def take(self, indices: np.ndarray | Sequence[int]) -> list[PlannedLine]:
        """The lines at ``indices`` (positions in the statement table)."""
        chosen = np.asarray(indices, dtype=np.int64)
        if len(chosen) == 0:
            return []
        picked = pa.array(chosen)
        table = self.statement.lines.take(picked)
        columns = table.select(["line", "date", "amount", "payer", "reference", "text"]).to_pydict()
        klass = pc.take(self.classes, picked).to_pylist()
        keys = pc.take(self.keys, picked).to_pylist()
        allocations = _grouped(self.matches.allocations, chosen, _allocation)
        references = _grouped(self.matches.references, chosen, lambda r: str(r.key))
        suggestions = _grouped(
            self.suggestions, chosen, lambda r: (str(r.number), float(r.confidence))
        )
        planned = []
        for position, index in enumerate(chosen.tolist()):
            outcome = OUTCOMES[int(self.outcomes[index])]
            note = self.matches.notes.get(index, "")
            if outcome == DUPLICATE and not note:
                note = "already recorded from an earlier file"
            planned.append(
                PlannedLine(
                    index=index,
                    line=int(columns["line"][position]),
                    date=columns["date"][position],
                    amount=pounds(columns["amount"][position]),
                    klass=str(klass[position]),
                    key=str(keys[position]),
                    payer=str(columns["payer"][position] or ""),
                    reference=str(columns["reference"][position] or ""),
                    text=str(columns["text"][position] or ""),
                    outcome=outcome,
                    references=list(dict.fromkeys(references.get(index, []))),
                    allocations=allocations.get(index, []),
                    unallocated=pounds(self.matches.unallocated.get(index, 0)),
                    suggestions=suggestions.get(index, []),
                    note=note,
                    conflicting_repeat=index in self.conflicting_repeats,
                )
            )
        return planned


def _allocation(row: object) -> Allocation:
    return Allocation(
        str(row.kind),  # type: ignore[attr-defined]
        str(row.id),  # type: ignore[attr-defined]
        str(row.number),  # type: ignore[attr-defined]
        int(row.pennies),  # type: ignore[attr-defined]
    )


def _grouped(frame: pd.DataFrame, chosen: np.ndarray, make: object) -> dict[int, list]:  # type: ignore[type-arg]
    """Rows of ``frame`` for the chosen lines, made into values and listed per line."""
    if frame.empty:
        return {}
    rows = frame[frame["line"].isin(chosen)] if len(chosen) < len(frame) else frame
    found: dict[int, list] = {}  # type: ignore[type-arg]
    for row in rows.itertuples(index=False):
        found.setdefault(int(row.line), []).append(make(row))  # type: ignore[operator]
    return found


@dataclass(frozen=True)
class Resumed:
    """A line an earlier applied run set out to record and did not finish: its outcome then, and
    the payments it planned (kind, id, number, pennies), resumed as they were."""

    outcome: str
    payments: list[Allocation]
    run_id: str | None = None


def plan_statement(
    statement: Statement,
    items: pd.DataFrame,
    *,
    done_keys: Iterable[str] = frozenset(),
    resumed: dict[str, Resumed] | None = None,
    keys: pa.Array | None = None,
    rules: ClassifyRules | None = None,
    aliases: dict[str, list[str]] | None = None,
) -> Plan:
    """Classify, key, de-duplicate, match and suggest (see ``_match`` and ``_keys``).

    ``done_keys``: lines recorded from an earlier file (duplicates). ``resumed``: lines (by key)
    an earlier run began to record; they keep the payments planned then, and the open items are
    expected to show those payments' effect already or soon (the caller takes what is still in
    doubt off what is due, so no other line is given the same money).
    """
    table = statement.lines
    classes = classify(table, rules)
    keys = line_keys(table) if keys is None else keys
    # Only a customer's money can have been recorded from an earlier file.
    customer = class_codes(classes) == CLASSES.index(CUSTOMER_PAYMENT)
    skip = duplicates(keys, done_keys, among=customer)
    repeats = {i: f for i, f in _repeats(keys).items() if customer[i]}
    carried = {i: r for i, r in _positions(keys, resumed or {}).items() if i not in repeats}
    skip[list(carried)] = True
    skip[list(repeats)] = True
    matches = match_lines(table, classes, items, skip=skip, aliases=aliases)
    conflicting = _note_repeats(matches, table, repeats)
    suggestions = suggest(table, matches, items)
    _carry(matches, carried)
    return Plan(statement, classes, keys, matches, suggestions, len(items), conflicting)


def _repeats(keys: pa.Array) -> dict[int, int]:
    """Lines whose key an earlier line of the same file has (line index → that line's index).

    Only a bank's transaction id can repeat (identical lines without one are told apart by
    their occurrence, ``_keys``): the same transaction twice, as when two overlapping exports
    are pasted into one file. It is one payment: its payments share their ledger keys, so a
    second allocation would be a second payment of the item or a ledger conflict mid-run.

    Only the lines keyed by an id are looked at: encoding a million digest keys to find none
    repeated took about half a second, as long as the whole rest of a statement's main pass."""
    ided = np.flatnonzero(mask(pc.starts_with(keys, ID_PREFIX)))
    if len(ided) < 2:
        return {}
    codes = encoded(keys.take(pa.array(ided)))
    if len(codes.dictionary) == len(ided):  # every id once
        return {}
    indices = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    values, first = np.unique(indices, return_index=True)
    first_of = np.empty(len(codes.dictionary), dtype=np.int64)
    first_of[values] = first
    earlier = first_of[indices]
    later = np.flatnonzero(earlier != np.arange(len(indices)))
    return {int(ided[i]): int(ided[earlier[i]]) for i in later}


def _note_repeats(matches: Matches, table: pa.Table, repeats: dict[int, int]) -> frozenset[int]:
    """Say on each repeated line which line it repeats, and whether it differs from it; the
    lines that differ (another amount or date under the same id)."""
    if not repeats:
        return frozenset()
    numbers = np.asarray(table.column("line").to_numpy(), dtype=np.int64)
    amounts = np.asarray(table.column("amount").to_numpy(), dtype=np.int64)
    days = np.asarray(table.column("date").cast(pa.int32()).to_numpy(), dtype=np.int64)
    differing: set[int] = set()
    for index, first in repeats.items():
        matches.outcome[index] = CODE[DUPLICATE]
        note = f"the bank's transaction id is also on line {numbers[first]}: recorded once"
        if amounts[index] != amounts[first] or days[index] != days[first]:
            note += " (with a different amount or date: check the file with the bank)"
            differing.add(index)
        matches.notes[index] = note
    return frozenset(differing)


def _positions(keys: pa.Array, resumed: dict[str, Resumed]) -> dict[int, Resumed]:
    if not resumed:
        return {}
    hit = duplicates(keys, resumed)
    names = pc.filter(keys, pa.array(hit)).to_pylist()
    return {int(i): resumed[str(k)] for i, k in zip(np.flatnonzero(hit), names, strict=True)}


def _carry(matches: Matches, carried: dict[int, Resumed]) -> None:
    """Resumed lines take the outcome and payments planned by the run that began them."""
    if not carried:
        return
    rows: list[tuple[int, str, str, str, int]] = []
    for index, line in carried.items():
        matches.outcome[index] = CODE[line.outcome]
        matches.notes[index] = f"resumed: planned by run {line.run_id or 'unknown'}"
        rows.extend((index, p.kind, p.id, p.number, p.pennies) for p in line.payments)
    resumed = pd.DataFrame(rows, columns=list(ALLOCATION_COLUMNS))
    matches.allocations = pd.concat([matches.allocations, resumed], ignore_index=True).sort_values(
        "line", kind="stable"
    )


def preview_record(line: PlannedLine) -> dict[str, object]:
    """One line as ``billops bank preview --format jsonl`` prints it."""
    return {
        "line": line.line,
        "date": line.date.isoformat(),
        "amount": str(line.amount),
        "class": line.klass,
        "references": line.references,
        "matches": [
            {"number": a.number, "id": a.id, "kind": a.kind, "amount": str(pounds(a.pennies))}
            for a in line.allocations
        ],
        "outcome": line.outcome,
        "suggestions": [{"number": n, "confidence": c} for n, c in line.suggestions],
        "payer": line.payer,
        "reference": line.reference,
        "key": line.key,
        "note": line.note,
    }


def is_customer_credit(line: PlannedLine) -> bool:
    """A customer's money in (recorded or not)."""
    return line.klass == CUSTOMER_PAYMENT and line.amount > 0
