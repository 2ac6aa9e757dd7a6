"""Suggestions for customer payments no reference matched: which open items they may pay, with a
confidence. A suggestion is never applied without a person's approval.

Bounded so a platform's night stays fast, by blocking before anything is scored:

1. names: each distinct payer is compared with the customers once, not per line (``_names``:
   exact and cut-short names at once, ``rapidfuzz`` only within blocks of shared words);
2. candidates: for each line and each (at most 3) customer its payer may be, the customer's
   open items whose due amounts are nearest the line's (a window of 5 in the customer's items
   ordered by due amount, found by binary search: never every item of a large customer); for a
   payer no customer resembles, the items due exactly the line's amount where few are (only
   for a line whose text has a digit: without a name, nothing else can reach 0.5);
3. confidence (0-1): name 50 %, amount 35 % (1 when equal, falling with the difference), and
   15 % for how much of the item's number the line's text holds — computed only for lines whose
   text has a digit. The best 3 at 0.5 or more are kept.

Everything past the names is whole-array numpy: a line is a row of its (at most 3) customers'
windows of 5 candidates side by side, its best 3 are taken along the row.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz

from tasks.bank_payments import _bytes
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
    """Open items ordered by customer, then due amount (``order``: each place's row of the
    open items as given; the items themselves are not reordered, only the few picked are
    looked up); where each customer's start."""

    items: pd.DataFrame
    order: np.ndarray
    customers: pa.Array  # each customer's name, by code
    start: np.ndarray
    count: np.ndarray
    due: np.ndarray

    @property
    def frame(self) -> pd.DataFrame:
        """The open items in this order (a copy of every column: only for a look at them)."""
        return self.items.iloc[self.order].reset_index(drop=True)

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
        codes = customer[order]
        start = np.flatnonzero(np.r_[True, codes[1:] != codes[:-1]])
        count = np.diff(np.r_[start, len(codes)])
        names = pa.array(customers.astype(str), pa.string())
        return cls(items, order, names, start, count, due[order])


def _windows(
    items: _Items, customer: np.ndarray, amount: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """For each (customer, amount): the first row of the customer's ``WINDOW`` items whose due
    amounts are nearest, and the row after the customer's last item (:func:`_candidates`)."""
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
    return first, start + count


def _candidates(first: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The ``WINDOW`` rows from each ``first`` (``NONE`` from ``end`` on), along a new last
    axis."""
    rows: np.ndarray = first[..., None] + np.arange(WINDOW)
    rows[rows >= end[..., None]] = NONE
    return rows


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
    """Confidence of each candidate (``-1`` where there is none): ``rows`` a line's candidates
    per row, ``amount`` the line's, ``name`` the name score of each ``WINDOW`` of them."""
    # In place where it can be: every step is over all candidates (millions), and a fresh
    # array per step cost as much as the arithmetic. The values are those of
    # ``0.5 * name + 0.35 * clip(1 - gap, 0, 1)`` in float32, step for step (1 - gap is never
    # above 1: the gap is never negative, so only the lower clip can bite).
    due = items.due[rows]  # NONE (-1) reads the last item: any due, overwritten below
    difference = due - amount[:, None]
    np.abs(difference, out=difference)
    np.maximum(due, 1, out=due)
    # The gap: divided in float64 and stored as float32, as ``.astype`` of the quotient
    # gives it, without the float64 array.
    score = np.empty(rows.shape, dtype=np.float32)
    np.true_divide(difference, due, out=score, casting="unsafe")
    np.subtract(np.float32(1), score, out=score)
    np.maximum(score, np.float32(0), out=score)  # closeness: 1 when equal
    np.multiply(score, np.float32(0.35), out=score)
    by_window = score.reshape(len(rows), -1, WINDOW)
    np.add(by_window, (0.5 * name).astype(np.float32)[:, :, None], out=by_window)
    score[rows == NONE] = -1
    return score


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
    first, end = _windows(owed, customer, amounts[line])
    named = np.zeros(lines.num_rows, dtype=bool)
    named[line] = True
    with_digit = np.zeros(lines.num_rows, dtype=bool)
    with_digit[wanted] = _with_digit(lines, wanted)
    # An exact amount is worth a look only for a line no customer's name matches, and only
    # when its text has a digit: with no name score, amount (at most 0.35) and number (at
    # most 0.15) reach MIN_CONFIDENCE only together, and the number score needs a digit.
    unknown = wanted[~named[wanted] & with_digit[wanted]]
    # One row per line, its pairs' windows side by side (CUSTOMERS_PER_PAYER × WINDOW
    # columns), the unknown lines' rows after the named lines': each pair's window is placed
    # by its start and end (a few numbers per pair), and the candidates are made in place.
    line, slot = _per_line(line)
    size = len(line) + len(unknown)
    starts = np.zeros(size * CUSTOMERS_PER_PAYER, dtype=np.int64)
    ends = np.zeros(size * CUSTOMERS_PER_PAYER, dtype=np.int64)  # no pair: no candidate
    names = np.zeros(size * CUSTOMERS_PER_PAYER)
    starts[slot], ends[slot], names[slot] = first, end, name
    rows = _candidates(starts, ends).reshape(size, CUSTOMERS_PER_PAYER * WINDOW)
    if len(unknown):
        rows[len(line) :, :WINDOW] = _same_amount(owed, amounts[unknown])
        line = np.concatenate([line, unknown])
    scores = _scores(owed, rows, amounts[line], names.reshape(size, CUSTOMERS_PER_PAYER))
    _add_number_scores(lines, line, rows, scores, owed, with_digit)
    return _keep_best(line, rows, scores, owed, outcome)


def _per_line(line: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Each line once, and each pair's slot among its line's ``CUSTOMERS_PER_PAYER``, flat
    (the line's place × ``CUSTOMERS_PER_PAYER`` + the pair's place among the line's pairs);
    ``line`` comes grouped (pairs of a line adjacent)."""
    if len(line) == 0:
        return line, np.zeros(0, dtype=np.int64)
    first = np.r_[True, line[1:] != line[:-1]]
    starts = np.flatnonzero(first)
    group = np.cumsum(first) - 1
    return line[starts], group * CUSTOMERS_PER_PAYER + np.arange(len(line)) - starts[group]


def _line_pairs(
    wanted: np.ndarray, payer_codes: np.ndarray, pairs: pd.DataFrame
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(line, customer, name score 0-1) for every wanted line and customer its payer may be:
    the lines in order, each line's customers in the order of ``pairs`` (as an inner join of
    the lines with ``pairs`` on the payer gives them), repeated by whole arrays (no join)."""
    if pairs.empty:
        empty = np.array([], dtype=np.int64)
        return empty, empty, np.array([], dtype=np.float64)
    payer = pairs["payer"].to_numpy(np.int64)
    by_payer = np.argsort(payer, kind="stable")
    count = np.bincount(payer, minlength=int(payer_codes.max(initial=0)) + 1)
    start = np.r_[0, np.cumsum(count)[:-1]]
    codes = payer_codes[wanted]
    per_line = count[codes]
    line = np.repeat(wanted, per_line)
    step = np.arange(len(line)) - np.repeat(np.cumsum(per_line) - per_line, per_line)
    at = by_payer[np.repeat(start[codes], per_line) + step]
    return (
        line,
        pairs["customer"].to_numpy(np.int64)[at],
        pairs["score"].to_numpy(np.float64)[at] / 100,
    )


def _keep_best(
    line: np.ndarray, rows: np.ndarray, scores: np.ndarray, owed: _Items, outcome: np.ndarray
) -> pd.DataFrame:
    """The best ``KEEP`` candidates of each line at ``MIN_CONFIDENCE`` or more (``scores`` is
    used up)."""
    top_rows, top_scores = _top(rows, scores)
    flat_line = np.repeat(line, KEEP)
    flat_row, flat_score = top_rows.ravel(), top_scores.ravel()
    good = flat_score >= MIN_CONFIDENCE
    flat_line, flat_row, flat_score = flat_line[good], flat_row[good], flat_score[good]
    picked = pa.array(owed.order[flat_row])
    result = pd.DataFrame(
        {
            "line": flat_line,
            "number": _arrow_column(owed.items["number"], picked),
            "id": _arrow_column(owed.items["id"], picked),
            "confidence": np.round(flat_score.astype(np.float64), 2),
        }
    )
    outcome[flat_line] = CODE[SUGGESTED]
    return result


def _top(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``KEEP`` best columns of each row, best first: ``KEEP`` passes of a row-wise argmax
    (cheaper than sorting every short row). ``scores`` is used up (each pick is set to -inf)."""
    base = np.arange(0, scores.size, max(scores.shape[1], 1))
    # Picked through flat positions (row start + column): one gather each, where indexing
    # by (row, column) pairs computed every position from two index arrays.
    flat_rows, flat_scores = rows.reshape(-1), scores.reshape(-1)
    picked_rows, picked_scores = [], []
    for _ in range(KEEP):
        at = base + scores.argmax(axis=1)
        picked_rows.append(flat_rows[at])
        picked_scores.append(flat_scores[at])
        flat_scores[at] = -np.inf
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


def _with_digit(lines: pa.Table, among: np.ndarray) -> np.ndarray:
    """Whether the reference or description of each line ``among`` has a digit: looked for
    once in each distinct text those lines have (not in every text of the statement)."""
    found = np.zeros(len(among), dtype=bool)
    for name in ("reference", "text"):
        codes = encoded(lines.column(name))
        if codes.indices.null_count:  # never in a normalised statement; null has no digit
            found |= mask(per_value(codes, lambda v: pc.match_substring_regex(v, "[0-9]")))[among]
            continue
        texts = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)[among]
        used = np.flatnonzero(np.bincount(texts, minlength=len(codes.dictionary)))
        by_text = np.zeros(len(codes.dictionary), dtype=bool)
        texts_used = codes.dictionary.take(pa.array(used))
        digits = _bytes.with_digit(texts_used)
        if digits is None:
            digits = mask(pc.match_substring_regex(texts_used, "[0-9]"))
        by_text[used] = digits
        found |= by_text[texts]
    return found


def _add_number_scores(
    lines: pa.Table,
    line: np.ndarray,
    rows: np.ndarray,
    scores: np.ndarray,
    owed: _Items,
    with_digit: np.ndarray,
) -> None:
    """Up to 15 % more (in ``scores``, in place) for candidates whose number the line's text
    (nearly) holds; only lines whose reference or description has a digit (``with_digit``,
    by line)."""
    chosen = np.flatnonzero(with_digit[line])
    if len(chosen) == 0:
        return
    texts = pc.binary_join_element_wise(
        strings(lines.column("reference")), strings(lines.column("text")), " "
    )
    numbers = owed.items["number"].astype(str).str.upper().to_numpy()[owed.order]
    for pair in chosen:
        text = str(texts[int(line[pair])].as_py()).upper()
        for column in np.flatnonzero(rows[pair] != NONE):
            ratio = fuzz.partial_ratio(numbers[rows[pair, column]], text) / 100
            scores[pair, column] += 0.15 * ratio
