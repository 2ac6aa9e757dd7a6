"""Matching customer payments to what is owed, consuming it as it goes.

Exact matches come from the document numbers and references a line names (``_references``):

- a line naming one open item for exactly its due amount, and the only line naming it, is a
  ``full`` payment: decided by whole columns, which is most lines;
- everything else is allocated in booking order (date, then line): a line's amount goes to the
  items it names in the order it names them, then by due date, each taking at most what is
  still due after earlier lines. Money left once every named item is paid is an
  ``overpayment`` (the due part is recorded; the rest waits for a person), an item left with money
  due is ``partial``. Two lines paying one invoice each take what is still due.
- a payment request (not an invoice) can only be marked paid in full: anything else waits.
- a named number whose amount differs from what is due is trusted only when the payer's name
  resembles the customer's (a mistyped number must not pay someone else's invoice), and only
  when no other open item of that customer is due exactly the line's amount (a mistyped number
  of the customer's other invoice); otherwise it becomes a suggestion.

Lines with no usable reference get suggestions (``_suggest``); a suggestion is never applied
without a person's approval. The result is columnar (:class:`Matches`): a statement of a million
lines makes no Python object per line.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz, process

from tasks.bank_payments._classify import CLASSES, CUSTOMER_PAYMENT, class_codes
from tasks.bank_payments._kernels import encoded, strings
from tasks.bank_payments._references import MIN_REFERENCE, alias_table, references_by_line

FULL, PARTIAL, OVERPAYMENT = "full", "partial", "overpayment"
UNMATCHED, SUGGESTED, DUPLICATE, NOT_APPLICABLE = "unmatched", "suggested", "duplicate", "n/a"
OUTCOMES = (FULL, PARTIAL, OVERPAYMENT, UNMATCHED, SUGGESTED, DUPLICATE, NOT_APPLICABLE)
CODE = {name: np.int8(index) for index, name in enumerate(OUTCOMES)}
NO_DUE_DATE = 10**9  # sorts after every real due date
NAME_TRUST = 60  # rapidfuzz token-set score from which a payer "is" the customer
ALLOCATION_COLUMNS = ("line", "kind", "id", "number", "pennies")


@dataclass(frozen=True)
class Allocation:
    """Money of one line going to one open item."""

    kind: str
    id: str
    number: str
    pennies: int


@dataclass
class Matches:
    """What matching decided, by line index into the statement table.

    ``outcome``: one of :data:`OUTCOMES` per line, as its index (:data:`CODE`);
    ``references``: what each line names (``line``, ``order``, ``key``); ``allocations``: money
    going to open items (``line``, ``kind``, ``id``, ``number``, ``pennies``, in the order it is
    recorded); ``unallocated``: pennies of an overpayment left for a person; ``notes``: why,
    where it needs saying.
    """

    outcome: np.ndarray
    references: pd.DataFrame
    allocations: pd.DataFrame
    unallocated: dict[int, int] = field(default_factory=dict)
    notes: dict[int, str] = field(default_factory=dict)

    def allocations_of(self, index: int) -> list[Allocation]:
        """The allocations of one line (for the few lines shown one by one)."""
        rows = self.allocations[self.allocations["line"] == index]
        return [
            Allocation(str(r.kind), str(r.id), str(r.number), int(r.pennies))
            for r in rows.itertuples(index=False)
        ]

    def references_of(self, index: int) -> list[str]:
        keys = self.references.loc[self.references["line"] == index, "key"]
        return list(dict.fromkeys(str(k) for k in keys))


def empty_allocations() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "line": pd.Series([], dtype="int64"),
            "kind": pd.Series([], dtype=object),
            "id": pd.Series([], dtype=object),
            "number": pd.Series([], dtype=object),
            "pennies": pd.Series([], dtype="int64"),
        }
    )


def item_keys(items: pd.DataFrame) -> pd.DataFrame:
    """Each open item under every key a line may name it by (canonical number, plain reference)."""
    numbers = items[items["key"] != ""]
    refs = items[items["ref_key"].str.len() >= MIN_REFERENCE].assign(key=lambda f: f["ref_key"])
    return pd.concat([numbers, refs], ignore_index=True)


def found_references(
    lines: pa.Table,
    items: pd.DataFrame,
    wanted: np.ndarray,
    aliases: dict[str, list[str]] | None = None,
) -> pd.DataFrame:
    """Numbers and references the ``wanted`` lines name: ``line``, ``order``, ``key``."""
    table = aliases if aliases is not None else alias_table(_prefixes(items))
    texts = [lines.column(name) for name in ("payer", "reference", "text")]
    references = items.loc[items["ref_key"].str.len() >= MIN_REFERENCE, "reference"]
    return references_by_line(texts, table, references.unique().tolist(), wanted)


def _prefixes(items: pd.DataFrame) -> list[str]:
    """The number prefixes the open items use (``INV``, ``PR``); both when nothing is open."""
    if items.empty:
        return ["INV", "PR"]  # a preview without a biller still finds numbers
    # Keys are canonical (``INV-42``: letters, a hyphen, digits): the prefix is what is left
    # once the digits and the hyphen are trimmed off the end.
    keys = pa.array(items["key"], pa.string())
    found = pc.unique(pc.utf8_rtrim(keys, characters="-0123456789"))
    return [str(p) for p in found.to_pylist() if p]


def match_lines(
    lines: pa.Table,
    classes: pa.Array,
    items: pd.DataFrame,
    *,
    skip: np.ndarray | None = None,
    aliases: dict[str, list[str]] | None = None,
) -> Matches:
    """The outcome of every line (see the module docstring); ``skip`` marks duplicates."""
    n = lines.num_rows
    skip = np.zeros(n, dtype=bool) if skip is None else np.asarray(skip, dtype=bool)
    payable = (class_codes(classes) == CLASSES.index(CUSTOMER_PAYMENT)) & ~skip
    # n/a, duplicate where skipped, unmatched where payable (never both): by arithmetic on the
    # masks as 0/1 bytes, where assigning through each mask (random, a quarter of the lines
    # true) took 4.6 ms of branching for a million lines.
    outcome = payable.view(np.int8) * np.int8(CODE[UNMATCHED] - CODE[NOT_APPLICABLE])
    outcome += skip.view(np.int8) * np.int8(CODE[DUPLICATE] - CODE[NOT_APPLICABLE])
    outcome += CODE[NOT_APPLICABLE]
    found = found_references(lines, items, payable, aliases) if payable.any() else None
    matches = Matches(outcome, found if found is not None else _no_refs(), empty_allocations())
    if found is None or found.empty or items.empty:
        return matches
    keyed = item_keys(items)
    ids = _codes(keyed["id"])
    left, row = _joined(found, keyed, ids)
    if len(row) == 0:
        return matches
    amounts = np.asarray(lines.column("amount").to_numpy(), dtype=np.int64)
    line = found["line"].to_numpy(dtype=np.int64)[left]
    item = ids[row]
    due = keyed["due"].to_numpy(dtype=np.int64)[row]
    per_line = np.bincount(line)[line]
    per_item = np.bincount(item)[item]
    simple = (per_line == 1) & (per_item == 1) & (amounts[line] == due)
    outcome[line[simple]] = CODE[FULL]
    direct = keyed[["kind", "id", "number"]].iloc[row[simple]].reset_index(drop=True)
    direct.insert(0, "line", line[simple])
    direct["pennies"] = due[simple]
    candidates = (
        keyed.iloc[row[~simple]]
        .reset_index(drop=True)
        .assign(
            line=line[~simple],
            order=found["order"].to_numpy(dtype=np.int64)[left[~simple]],
            amount=amounts[line[~simple]],
        )
    )
    ordered = _allocate_in_order(lines, candidates, items, matches)
    matches.allocations = pd.concat([direct, ordered], ignore_index=True).sort_values(
        "line", kind="stable"
    )
    return matches


def _joined(
    found: pd.DataFrame, keyed: pd.DataFrame, ids: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """The (found row, open item row) pairs of equal keys, in the order of ``found`` and then of
    ``keyed`` (as an inner join gives them), each line and item once (the first pair): by whole
    integer arrays, not a join of text columns."""
    # The items' keys and the found ones encoded together (one hashing of each text): the
    # items' distinct keys come first, so a found key's code is its item key's, and a code past
    # them is a key no open item has.
    together = pa.concat_arrays(
        [_plain_strings(keyed["key"]), _plain_strings(found["key"])]
    ).dictionary_encode()
    indices = together.indices
    codes = np.asarray(indices[: len(keyed)].to_numpy(zero_copy_only=False), dtype=np.int64)
    known = int(codes.max(initial=-1)) + 1
    wanted = np.asarray(
        pc.fill_null(indices[len(keyed) :], -1).to_numpy(zero_copy_only=False), dtype=np.int64
    )
    wanted[wanted >= known] = -1
    count = np.bincount(codes, minlength=known)
    by_key = np.argsort(codes, kind="stable")
    start = np.r_[0, np.cumsum(count)[:-1]]
    named = np.flatnonzero(wanted >= 0)
    per_found = count[wanted[named]]
    left = np.repeat(named, per_found)
    step = np.arange(len(left)) - np.repeat(np.cumsum(per_found) - per_found, per_found)
    right = by_key[np.repeat(start[wanted[named]], per_found) + step]
    line = found["line"].to_numpy(dtype=np.int64)[left]
    first = ~pd.Index(line * (len(keyed) + 1) + ids[right]).duplicated()
    return left[first], right[first]


def _plain_strings(values: pd.Series) -> pa.Array:
    """A text column as one Arrow string array."""
    array = pa.array(values, pa.string())
    return array.combine_chunks() if isinstance(array, pa.ChunkedArray) else array


def _codes(values: pd.Series) -> np.ndarray:
    """Each value's index among the distinct values (Arrow's hashing, not Python strings)."""
    codes = encoded(pa.array(values, pa.string())).indices
    return np.asarray(codes.to_numpy(zero_copy_only=False), dtype=np.int64)


def _no_refs() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "line": pd.Series([], dtype="int64"),
            "order": pd.Series([], dtype="int64"),
            "key": pd.Series([], dtype=object),
        }
    )


@dataclass
class _Ledger:
    """What is still due on each item while lines are allocated in booking order."""

    remaining: dict[str, int] = field(default_factory=dict)

    def due(self, item_id: str, initially: int) -> int:
        return self.remaining.get(item_id, initially)


def _allocate_in_order(
    lines: pa.Table, candidates: pd.DataFrame, items: pd.DataFrame, matches: Matches
) -> pd.DataFrame:
    if candidates.empty:
        return empty_allocations()
    dates = np.asarray(lines.column("date").cast(pa.int32()).to_numpy(), dtype=np.int64)
    numbers = np.asarray(lines.column("line").to_numpy(), dtype=np.int64)
    payers = strings(lines.column("payer"))
    people = _People(items)
    ordered = candidates.assign(
        _date=dates[candidates["line"].to_numpy()],
        _line=numbers[candidates["line"].to_numpy()],
        _due_date=[d.toordinal() if d else NO_DUE_DATE for d in candidates["due_date"]],
    ).sort_values(["_date", "_line", "order", "_due_date"], kind="stable")
    owed = _Ledger()
    rows: list[tuple[int, str, str, str, int]] = []
    for line, group in ordered.groupby("line", sort=False):
        index = int(line)
        amount = int(group["amount"].iloc[0])
        payer = str(payers[index].as_py() or "")
        due = sum(owed.due(r.id, int(r.due)) for r in group.itertuples())
        customers = group["customer"].astype(str).tolist()
        if amount != due:
            doubt = _doubt(payer, customers, group, amount, people)
            if doubt:
                matches.outcome[index] = CODE[SUGGESTED]
                matches.notes[index] = doubt
                continue
        rows.extend(_take(index, amount, group, owed, matches))
    return pd.DataFrame(rows, columns=list(ALLOCATION_COLUMNS))


class _People:
    """The customers of the open items, and which of them are owed a given amount: what a line
    naming an item for a different amount is checked against (few such lines)."""

    def __init__(self, items: pd.DataFrame) -> None:
        self.names = sorted(set(items["customer"].astype(str)))
        self.owed: dict[int, set[str]] = {}
        for customer, due in zip(items["customer"], items["due"], strict=True):
            self.owed.setdefault(int(due), set()).add(str(customer))

    def best(self, payer: str) -> tuple[str, float] | None:
        """The customer the payer looks most like, and how much (0-100)."""
        found = process.extractOne(
            payer.upper(), [n.upper() for n in self.names], scorer=fuzz.token_set_ratio
        )
        return (self.names[found[2]], float(found[1])) if found else None


def _doubt(
    payer: str,
    customers: list[str],
    group: pd.DataFrame,
    amount: int,
    people: _People,
) -> str:
    """Why a line naming items for a different amount than is due must not be trusted ('' when
    it may be): the payer does not look like their customer, or looks more like another one,
    or an open item of a customer like the payer is due exactly the line's amount (the number
    mistyped)."""
    named = ", ".join(group["number"])
    if payer.strip():
        scores = [fuzz.token_set_ratio(payer.upper(), c.upper()) for c in customers]
        best = people.best(payer)
        if max(scores) < NAME_TRUST or (best is not None and best[1] > max(scores)):
            return (
                f"names {named} but the amount differs from what is due and the payer does not "
                "look like its customer"
            )
    alike = [c for c in people.owed.get(amount, set()) if _alike(payer, c)]
    if len(group) == 1 and alike:
        return (
            f"names {named} but the amount is exactly what is due on an open item of "
            f"{alike[0]} (a mistyped number?)"
        )
    return ""


def _alike(payer: str, customer: str) -> bool:
    return not payer.strip() or fuzz.token_set_ratio(payer.upper(), customer.upper()) >= NAME_TRUST


def _take(
    index: int, amount: int, group: pd.DataFrame, owed: _Ledger, matches: Matches
) -> list[tuple[int, str, str, str, int]]:
    """Allocate one line's money over the items it names (see the module docstring)."""
    left, short = amount, False
    rows = []
    for row in group.itertuples():
        due = owed.due(row.id, int(row.due))
        take = min(left, due)
        if take <= 0:
            continue
        if row.kind == "payment_request" and take < due:
            short = True
            continue
        rows.append((index, str(row.kind), str(row.id), str(row.number), take))
        owed.remaining[row.id] = due - take
        left -= take
        short = short or owed.remaining[row.id] > 0
    if not rows:
        matches.outcome[index] = CODE[UNMATCHED]
        matches.notes[index] = "the items it names are already paid, or cannot take part payments"
    elif left > 0:
        matches.outcome[index] = CODE[OVERPAYMENT]
        matches.unallocated[index] = left
    else:
        matches.outcome[index] = CODE[PARTIAL] if short else CODE[FULL]
    return rows
