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

Everything past the names is whole-array numpy: a line is a column of its (at most 3)
customers' windows of 5 candidates one above the other, its best 3 are taken down the column.
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

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
CHUNK = 8192  # lines whose candidates are scored together
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

    @cached_property
    def search_key(self) -> np.ndarray:
        """Each place's customer code above its due pennies (sorted: dues are sorted within each
        customer's range), for one binary search of every range at once (:func:`_windows`)."""
        codes = np.repeat(np.arange(len(self.start), dtype=np.int64), self.count)
        return (codes << SHIFT) + self.due

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
    """For each customer (slots × lines, ``NONE`` for none) and its line's amount: the first row
    of the customer's ``WINDOW`` items whose due amounts are nearest, and the row after the
    customer's last item (:func:`_candidates`); both 0 (no rows) for none."""
    known = customer != NONE
    start = np.where(known, items.start[customer], 0)
    count = np.where(known, items.count[customer], 0)
    # A customer with at most WINDOW items has them all as the window: only the others search.
    # Dues are sorted within each customer's range: search each range at once by offsetting
    # every due by its customer's position (a composite key), as one global binary search.
    first = start.copy()
    large = np.flatnonzero(count > WINDOW)
    if len(large):
        start, count = start.reshape(-1), count.reshape(-1)
        line_amount = amount[large % customer.shape[1]]
        wanted = (customer.reshape(-1)[large].astype(np.int64) << SHIFT) + line_amount
        found = np.searchsorted(items.search_key, wanted)
        first.reshape(-1)[large] = np.clip(
            found - WINDOW // 2, start[large], start[large] + count[large] - WINDOW
        )
        start, count = start.reshape(customer.shape), count.reshape(customer.shape)
    return first, start + count


def _candidates(first: np.ndarray, end: np.ndarray) -> np.ndarray:
    """The ``WINDOW`` rows from each ``first`` (``NONE`` from ``end`` on), along a new axis
    after the first (``first`` is (slots, lines): the result (slots, ``WINDOW``, lines))."""
    rows: np.ndarray = first[:, None, :] + np.arange(WINDOW)[None, :, None]
    np.copyto(rows, NONE, where=rows >= end[:, None, :])
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
    """Confidence of each candidate (``-1`` where there is none): ``rows`` the candidates, a
    line's in its column (column-major, see :func:`suggest`), ``amount`` the line's, ``name``
    (slots × lines) the name score of each ``WINDOW`` of them."""
    # In place where it can be: every step is over a chunk's candidates (a hundred thousand),
    # and a fresh array per step cost as much as the arithmetic. The values are those of
    # ``0.5 * name + 0.35 * clip(1 - gap, 0, 1)`` in float32, step for step (1 - gap is never
    # above 1: the gap is never negative, so only the lower clip can bite).
    due = np.take(items.due, rows)  # NONE (-1) reads the last item: overwritten below
    difference = due - amount[None, :]
    np.abs(difference, out=difference)
    np.maximum(due, 1, out=due)
    # The gap: divided in float64 and stored as float32, as ``.astype`` of the quotient
    # gives it, without the float64 array.
    score = np.empty(rows.shape, dtype=np.float32)
    np.true_divide(difference, due, out=score, casting="unsafe")
    np.subtract(np.float32(1), score, out=score)
    np.maximum(score, np.float32(0), out=score)  # closeness: 1 when equal
    np.multiply(score, np.float32(0.35), out=score)
    by_window = score.reshape(-1, WINDOW, rows.shape[1])
    np.add(by_window, (0.5 * name).astype(np.float32)[:, None, :], out=by_window)
    np.copyto(score, np.float32(-1), where=rows == NONE)
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
    line, customer, name = _slots(wanted, payer_codes, pairs, len(payer.dictionary))
    with_digit = np.zeros(lines.num_rows, dtype=bool)
    with_digit[wanted] = _with_digit(lines, wanted)
    named = np.zeros(lines.num_rows, dtype=bool)
    named[line] = True
    # An exact amount is worth a look only for a line no customer's name matches, and only
    # when its text has a digit: with no name score, amount (at most 0.35) and number (at
    # most 0.15) reach MIN_CONFIDENCE only together, and the number score needs a digit.
    unknown = wanted[~named[wanted] & with_digit[wanted]]
    named_lines, size = len(line), len(line) + len(unknown)
    if len(unknown):  # no customer: no window
        customer = np.concatenate([customer, np.full((CUSTOMERS_PER_PAYER, len(unknown)), NONE)], 1)
        name = np.concatenate([name, np.zeros((CUSTOMERS_PER_PAYER, len(unknown)))], 1)
        line = np.concatenate([line, unknown])
    same = _same_amount(owed, amounts[unknown]).T if len(unknown) else None
    amount = amounts[line]
    numbers = _numbers(lines, owed) if with_digit[line].any() else None
    # The candidates column-major: one column per line, its customers' windows one above the
    # other (CUSTOMERS_PER_PAYER × WINDOW places), the unknown lines' columns after the named
    # lines'. Every step runs along the lines (long rows): a line's best is a max across a few
    # rows, where a max along each short row was a loop. And a chunk of lines at a time: the
    # candidates' arrays (a dozen, each 15 numbers a line) are reused from one chunk to the
    # next and stay in cache, where whole-statement ones were fresh pages each time (the
    # kernel's page faults cost as much as the arithmetic).
    top_rows = np.empty((size, KEEP), dtype=np.int64)
    top_scores = np.empty((size, KEEP), dtype=np.float32)
    for begin in range(0, size, CHUNK):
        stop = min(begin + CHUNK, size)
        first, end = _windows(owed, customer[:, begin:stop], amount[begin:stop])
        rows = _candidates(first, end).reshape(CUSTOMERS_PER_PAYER * WINDOW, stop - begin)
        if same is not None and stop > named_lines:
            at = max(begin, named_lines)
            rows[:WINDOW, at - begin :] = same[:, at - named_lines : stop - named_lines]
        scores = _scores(owed, rows, amount[begin:stop], name[:, begin:stop])
        if numbers is not None:
            _add_number_scores(numbers, line[begin:stop], rows, scores, with_digit)
        top_rows[begin:stop], top_scores[begin:stop] = _top(rows, scores)
    return _keep_best(line, top_rows, top_scores, owed, outcome)


def _slots(
    wanted: np.ndarray, payer_codes: np.ndarray, pairs: pd.DataFrame, payers: int
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Each wanted line whose payer may be a customer (in order), its payer's customers in
    ``CUSTOMERS_PER_PAYER`` slots (``NONE`` in a slot with none) and their name scores (0-1),
    as (slots × lines): the customers of each payer in the order of ``pairs`` (as an inner join
    of the lines with ``pairs`` on the payer gives them), looked up in a table by payer."""
    payer = pairs["payer"].to_numpy(np.int64)
    by_payer = np.argsort(payer, kind="stable")
    count = np.bincount(payer, minlength=payers)
    start = np.r_[0, np.cumsum(count)[:-1]].astype(np.int64)
    slot = np.arange(len(payer)) - start[payer[by_payer]]
    customer = np.full((CUSTOMERS_PER_PAYER, payers), NONE, dtype=np.int64)
    name = np.zeros((CUSTOMERS_PER_PAYER, payers))
    customer[slot, payer[by_payer]] = pairs["customer"].to_numpy(np.int64)[by_payer]
    name[slot, payer[by_payer]] = pairs["score"].to_numpy(np.float64)[by_payer] / 100
    codes = payer_codes[wanted]
    named = count[codes] > 0
    codes = codes[named]
    # np.take along the lines' axis: fancy indexing of a middle axis ran five times slower.
    return wanted[named], np.take(customer, codes, axis=1), np.take(name, codes, axis=1)


def _keep_best(
    line: np.ndarray,
    top_rows: np.ndarray,
    top_scores: np.ndarray,
    owed: _Items,
    outcome: np.ndarray,
) -> pd.DataFrame:
    """Of each line's best ``KEEP`` candidates (lines × ``KEEP``, best first), those at
    ``MIN_CONFIDENCE`` or more."""
    # Picked by flat position (a line's place × KEEP + its rank): one array each, no repeat of
    # every line; the frame is built on these arrays as they are (a consolidating copy of
    # each column cost as much as making it).
    good = np.flatnonzero(top_scores.reshape(-1) >= MIN_CONFIDENCE)
    flat_line = line[good // KEEP]
    picked = pa.array(owed.order[top_rows.reshape(-1)[good]])
    confidence = top_scores.reshape(-1)[good].astype(np.float64)
    np.round(confidence, 2, out=confidence)
    result = pd.DataFrame(
        {
            "line": flat_line,
            "number": _arrow_column(owed.items["number"], picked),
            "id": _arrow_column(owed.items["id"], picked),
            "confidence": confidence,
        },
        copy=False,
    )
    outcome[flat_line] = CODE[SUGGESTED]
    return result


def _top(rows: np.ndarray, scores: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """The ``KEEP`` best candidates of each line (a column), best first, the first place first
    among equal scores (what an argmax down each column gives), as (lines × ``KEEP``); below 0
    (no candidate) the order is any, such picks are never kept.

    ``KEEP`` passes of a max across the places, over whole rows (an argmax down each short
    column was a loop per line): each candidate is one int64, its float32 score's bits (in the
    order of the scores for those of 0 or more, all negative ones below them) above its place
    counted from the last, so the max gives both the best score and its first place."""
    places, size = scores.shape
    bits = max(places - 1, 1).bit_length()
    key = scores.view(np.int32).astype(np.int64)
    key <<= bits
    key |= (places - 1 - np.arange(places, dtype=np.int64))[:, None]
    flat_rows, flat_key = rows.reshape(-1), key.reshape(-1)
    lines = np.arange(size, dtype=np.int64)
    low = (1 << bits) - 1
    picked_rows, picked_scores = [], []
    for _ in range(KEEP):
        best = key.max(axis=0)
        at = (places - 1 - (best & low)) * size + lines
        picked_rows.append(flat_rows[at])
        picked_scores.append((best >> bits).astype(np.int32).view(np.float32))
        flat_key[at] = np.iinfo(np.int64).min
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


def _numbers(lines: pa.Table, owed: _Items) -> tuple[pa.Array, np.ndarray]:
    """What the number scores read: each line's reference and description, and the open items'
    numbers (upper case, in ``owed``'s order)."""
    texts = pc.binary_join_element_wise(
        strings(lines.column("reference")), strings(lines.column("text")), " "
    )
    return texts, owed.items["number"].astype(str).str.upper().to_numpy()[owed.order]


def _add_number_scores(
    numbers: tuple[pa.Array, np.ndarray],
    line: np.ndarray,
    rows: np.ndarray,
    scores: np.ndarray,
    with_digit: np.ndarray,
) -> None:
    """Up to 15 % more (in ``scores``, in place) for candidates whose number the line's text
    (nearly) holds; only lines whose reference or description has a digit (``with_digit``,
    by line); ``numbers`` from :func:`_numbers`."""
    texts, number = numbers
    for pair in np.flatnonzero(with_digit[line]):
        text = str(texts[int(line[pair])].as_py()).upper()
        for place in np.flatnonzero(rows[:, pair] != NONE):
            ratio = fuzz.partial_ratio(number[rows[place, pair]], text) / 100
            scores[place, pair] += 0.15 * ratio
