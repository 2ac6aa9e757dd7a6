"""Suggestions for customer payments no reference matched: which open items they may pay, with a
confidence. A suggestion is never applied without a person's approval.

Bounded so a platform's night stays fast, by blocking before anything is scored:

1. names: each distinct payer is compared with the customers once, not per line (``_names``:
   exact and cut-short names at once, ``rapidfuzz`` only within blocks of shared words);
2. candidates: for each line and each (at most 3) customer its payer may be, the customer's
   open items whose due amounts are nearest the line's (a window of 5 in the customer's items
   ordered by due amount, found by binary search: never every item of a large customer); for a
   payer no customer resembles, the items due exactly the line's amount where few are;
3. confidence (0-1): name 50 %, amount 35 % (1 when equal, falling with the difference), and
   15 % for how much of the item's number the line's text holds — computed only for lines whose
   text has a digit. The best 3 at 0.5 or more are kept.

Everything past the names is whole-array numpy: a (line, customer) pair is a row of 5 candidate
columns, its best 3 are taken along the row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz

from tasks.bank_payments._kernels import encoded, mask, per_value, strings
from tasks.bank_payments._match import CODE, SUGGESTED, UNMATCHED, Matches
from tasks.bank_payments._names import CUSTOMERS_PER_PAYER, name_matches

WINDOW = 5
KEEP = 3
MIN_CONFIDENCE = 0.5
NONE = -1
SHIFT = 40  # a customer's number above the due pennies (2**40 pennies: £10bn, over any due)


@dataclass(frozen=True)
class _Items:
    """Open items ordered by customer, then due amount; where each customer's start."""

    frame: pd.DataFrame
    customers: pa.Array  # each customer's name, by code
    start: np.ndarray
    count: np.ndarray
    due: np.ndarray

    @classmethod
    def of(cls, items: pd.DataFrame) -> _Items:
        # Sorted by integer codes (a customer's code in sorted order, above the due pennies) in
        # place of a sort of text columns: the same order, by whole arrays; the number decides
        # only between items of one customer due the same, where there are any.
        customer, customers = pd.factorize(items["customer"].astype(str), sort=True)
        due = items["due"].to_numpy(np.int64)
        key = (customer.astype(np.int64) << SHIFT) + due
        order = np.argsort(key, kind="stable")
        inside = len(due) == 0 or (due.min() >= 0 and due.max() < 1 << SHIFT)
        if not inside or (key[order][1:] == key[order][:-1]).any():
            number = pd.factorize(items["number"].astype(str), sort=True)[0]
            order = np.lexsort((number, due, customer))
        ordered = items.iloc[order].reset_index(drop=True)
        codes = customer[order]
        start = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        count = np.diff(np.r_[start, len(codes)])
        names = pa.array(customers.astype(str), pa.string())
        return cls(ordered, names, start, count, due[order])


def _nearest(items: _Items, customer: np.ndarray, amount: np.ndarray) -> np.ndarray:
    """For each (customer, amount): the rows of the customer's ``WINDOW`` items whose due amounts
    are nearest, as a (pairs × WINDOW) array (``NONE`` where the customer has fewer)."""
    start, count = items.start[customer], items.count[customer]
    # A customer with at most WINDOW items has them all as the window: only the others search.
    # Dues are sorted within each customer's range: search each range at once by offsetting
    # every due by its customer's position (a composite key), as one global binary search.
    first = start.copy()
    large = np.flatnonzero(count > WINDOW)
    if len(large):
        codes = np.repeat(np.arange(len(items.start), dtype=np.int64), items.count)
        key = (codes << SHIFT) + items.due
        wanted = (customer[large].astype(np.int64) << SHIFT) + amount[large]
        found = np.searchsorted(key, wanted)
        first[large] = np.clip(
            found - WINDOW // 2, start[large], start[large] + count[large] - WINDOW
        )
    rows = first[:, None] + np.arange(WINDOW)[None, :]
    return np.where(rows < (start + count)[:, None], rows, NONE)


def _same_amount(items: _Items, amount: np.ndarray) -> np.ndarray:
    """For each amount: the rows of the items due exactly that much, when at most ``WINDOW``
    are (``NONE`` elsewhere), as a (lines × WINDOW) array."""
    order = np.argsort(items.due, kind="stable")
    values, first, count = np.unique(items.due[order], return_index=True, return_counts=True)
    position = np.minimum(np.searchsorted(values, amount), len(values) - 1)
    hit = (values[position] == amount) & (count[position] <= WINDOW)
    columns = np.arange(WINDOW)[None, :]
    rows = first[position][:, None] + columns
    inside = hit[:, None] & (columns < count[position][:, None])
    return np.where(inside, order[np.minimum(rows, len(order) - 1)], NONE)


def _scores(items: _Items, rows: np.ndarray, amount: np.ndarray, name: np.ndarray) -> np.ndarray:
    """Confidence of each candidate (``-1`` where there is none)."""
    due = items.due[np.maximum(rows, 0)]
    wanted = amount[:, None]
    gap = (np.abs(due - wanted) / np.maximum(due, 1)).astype(np.float32)
    closeness = np.clip(1 - gap, 0, 1)  # 1 when equal
    score = (0.5 * name[:, None]).astype(np.float32) + np.float32(0.35) * closeness
    return np.where(rows == NONE, np.float32(-1), score)


def suggest(lines: pa.Table, matches: Matches, items: pd.DataFrame) -> pd.DataFrame:
    """Suggestions for unmatched customer payments: ``line``, ``number``, ``id``,
    ``confidence`` (best first per line); lines with one become ``suggested``."""
    outcome = matches.outcome
    wanted = np.flatnonzero((outcome == CODE[UNMATCHED]) | (outcome == CODE[SUGGESTED]))
    if len(wanted) == 0 or items.empty:
        return _none()
    owed = _Items.of(items)
    amounts = np.asarray(lines.column("amount").to_numpy(), dtype=np.int64)
    payer = encoded(lines.column("payer"))
    payer_codes = np.asarray(payer.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    present = np.flatnonzero(np.bincount(payer_codes[wanted], minlength=len(payer.dictionary)))
    names = payer.dictionary.take(pa.array(present))
    pairs = name_matches(names, owed.customers)
    pairs["payer"] = present[pairs["payer"].to_numpy(dtype=np.int64)]
    line, customer, name = _line_pairs(wanted, payer_codes, pairs)
    pair_rows = _nearest(owed, customer, amounts[line])
    line, rows, scores = _per_line(line, pair_rows, _scores(owed, pair_rows, amounts[line], name))
    named = np.zeros(lines.num_rows, dtype=bool)
    named[line] = True
    unknown = wanted[~named[wanted]]  # an exact amount is worth a look only then
    if len(unknown):
        extra = _same_amount(owed, amounts[unknown])
        width = rows.shape[1]
        extra_rows = np.full((len(unknown), width), NONE)
        extra_rows[:, :WINDOW] = extra
        extra_scores = np.full((len(unknown), width), -1.0, dtype=np.float32)
        extra_scores[:, :WINDOW] = _scores(owed, extra, amounts[unknown], np.zeros(len(unknown)))
        line = np.concatenate([line, unknown])
        rows = np.concatenate([rows, extra_rows])
        scores = np.concatenate([scores, extra_scores])
    scores = _add_number_scores(lines, line, rows, scores, owed.frame)
    return _keep_best(line, rows, scores, owed, outcome)


def _per_line(
    line: np.ndarray, rows: np.ndarray, scores: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The (pair × WINDOW) candidates regrouped as one row per line (its pairs side by side:
    ``CUSTOMERS_PER_PAYER × WINDOW`` columns); ``line`` comes grouped (pairs of a line adjacent)."""
    width = CUSTOMERS_PER_PAYER * WINDOW
    if len(line) == 0:
        return line, np.full((0, width), NONE), np.full((0, width), -1.0, dtype=np.float32)
    first = np.r_[True, line[1:] != line[:-1]]
    group = np.cumsum(first) - 1
    starts = np.flatnonzero(first)
    slot = np.arange(len(line)) - starts[group]
    grouped_rows = np.full((len(starts), width), NONE)
    grouped_scores = np.full((len(starts), width), -1.0, dtype=np.float32)
    columns = slot[:, None] * WINDOW + np.arange(WINDOW)[None, :]
    grouped_rows[group[:, None], columns] = rows
    grouped_scores[group[:, None], columns] = scores
    return line[starts], grouped_rows, grouped_scores


def _line_pairs(
    wanted: np.ndarray, payer_codes: np.ndarray, pairs: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(line, customer, name score 0-1) for every wanted line and customer its payer may be."""
    if pairs.empty:
        empty = np.array([], dtype=np.int64)
        return empty, empty, np.array([], dtype=np.float64)
    joined = pd.DataFrame({"line": wanted, "payer": payer_codes[wanted]}).merge(pairs, on="payer")
    return (
        joined["line"].to_numpy(np.int64),
        joined["customer"].to_numpy(np.int64),
        joined["score"].to_numpy(np.float64) / 100,
    )


def _keep_best(
    line: np.ndarray, rows: np.ndarray, scores: np.ndarray, owed: _Items, outcome: np.ndarray
) -> pd.DataFrame:
    """The best ``KEEP`` candidates of each line at ``MIN_CONFIDENCE`` or more."""
    top_rows, top_scores = _top(rows, scores)
    flat_line = np.repeat(line, KEEP)
    flat_row, flat_score = top_rows.ravel(), top_scores.ravel()
    good = flat_score >= MIN_CONFIDENCE
    flat_line, flat_row, flat_score = flat_line[good], flat_row[good], flat_score[good]
    picked = pa.array(flat_row)
    result = pd.DataFrame(
        {
            "line": flat_line,
            "number": _arrow_column(owed.frame["number"], picked),
            "id": _arrow_column(owed.frame["id"], picked),
            "confidence": np.round(flat_score.astype(np.float64), 2),
        }
    )
    outcome[flat_line] = CODE[SUGGESTED]
    return result


def _top(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``KEEP`` best columns of each row, best first: ``KEEP`` passes of a row-wise argmax
    (cheaper than sorting every short row)."""
    work = scores.copy()
    every = np.arange(len(work))
    picked_rows, picked_scores = [], []
    for _ in range(KEEP):
        column = work.argmax(axis=1)
        picked_rows.append(rows[every, column])
        picked_scores.append(work[every, column])
        work[every, column] = -np.inf
    return np.stack(picked_rows, axis=1), np.stack(picked_scores, axis=1)


def _none() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "line": pd.Series([], dtype="int64"),
            "number": pd.Series([], dtype=object),
            "id": pd.Series([], dtype=object),
            "confidence": pd.Series([], dtype="float64"),
        }
    )


def _arrow_column(values: pd.Series, rows: pa.Array) -> pd.arrays.ArrowExtensionArray:
    """``values`` at ``rows`` as an Arrow-backed column (no Python string per row)."""
    column = pa.array(values.astype(str), pa.string())
    if isinstance(column, pa.ChunkedArray):
        column = column.combine_chunks()
    return pd.arrays.ArrowExtensionArray(column.take(rows))


def _add_number_scores(
    lines: pa.Table, line: np.ndarray, rows: np.ndarray, scores: np.ndarray, items: pd.DataFrame
) -> np.ndarray:
    """Up to 15 % more for candidates whose number the line's text (nearly) holds; only lines
    whose reference or description has a digit."""
    with_digit = np.zeros(lines.num_rows, dtype=bool)
    for name in ("reference", "text"):
        with_digit |= mask(
            per_value(lines.column(name), lambda v: pc.match_substring_regex(v, "[0-9]"))
        )
    chosen = np.flatnonzero(with_digit[line])
    if len(chosen) == 0:
        return scores
    texts = pc.binary_join_element_wise(
        strings(lines.column("reference")), strings(lines.column("text")), " "
    )
    numbers = items["number"].astype(str).str.upper().to_numpy()
    scores = scores.copy()
    for pair in chosen:
        text = str(texts[int(line[pair])].as_py()).upper()
        for column in np.flatnonzero(rows[pair] != NONE):
            ratio = fuzz.partial_ratio(numbers[rows[pair, column]], text) / 100
            scores[pair, column] += 0.15 * ratio
    return scores
