"""Which customers a bank line's payer may be, by name, for every distinct payer at once.

A payer is compared as banks and people write names: upper case, no punctuation, no legal or
filler words (``LTD``/``LIMITED``, ``PLC``, ``THE``, ``&``/``AND``...). Then, cheapest first:

- the same key as a customer's: score 100;
- the start of a customer's key, at least 8 characters long (the bank cut the name at 18
  characters): score 95;
- otherwise ``rapidfuzz``'s token-set ratio (cut-off 70) against the customers sharing the
  payer's rarest distinctive word (words in more than 1 % of the names, or 50 of them, do not
  count: they would put every customer in every block). Only the pairs that can be among a
  payer's best are scored (each pair's score is bounded first, ``_name_bound``), in
  ``process.cpdist`` calls.

At most 3 customers per payer are kept, best first.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz, process

from tasks.bank_payments._kernels import encoded, mask
from tasks.bank_payments._name_bound import Words, token_set_bound
from tasks.common.arrow_text import string_parts

NAME_CUTOFF = 70
CUSTOMERS_PER_PAYER = 3
MIN_PREFIX = 8
# Whole words only, as the filler pattern ``\b(LIMITED|LTD|...|SERVICES?)\b`` removed them.
_FILLER = pa.array(
    ["LIMITED", "LTD", "PLC", "LLP", "LLC", "INC", "CO", "COMPANY", "THE", "AND", "UK", "GROUP"]
    + ["HOLDINGS", "SERVICE", "SERVICES"]
)
# Each byte of a name as compared: letters and digits kept, any other byte a space.
_AS_COMPARED = np.arange(256, dtype=np.uint8)
_AS_COMPARED[[b for b in range(256) if not (48 <= b <= 57 or 65 <= b <= 90)]] = 32


def name_keys(names: pa.Array) -> list[str]:
    """Each name as compared (see the module docstring)."""
    return _Keys.of(names).text


@dataclass(frozen=True)
class _Keys:
    """Names as compared, as Arrow strings and as Python ones (what ``rapidfuzz`` reads), with
    their words of 3 characters or more (in key order; ``owner``: the index of each one's key).
    The words are those the keys were joined from: nothing splits a key again."""

    array: pa.Array
    text: list[str]
    words: pa.Array
    owner: np.ndarray

    @classmethod
    def of(cls, names: pa.Array) -> _Keys:
        """The words (runs of letters and digits) of each upper-cased name, less the filler
        words, one space between, by whole arrays.

        No regex: what ``[^A-Z0-9 ]+`` replaced by a space is read from the bytes (every byte of
        a character past ASCII is past ASCII too, and a run of spaces splits as one), an ``&``
        (once `` AND ``) is a space like any other sign, and the filler words are dropped as
        words of the split (the two regexes cost more than all the rest together)."""
        text = pc.utf8_upper(names)
        if not pa.types.is_string(text.type):
            text = text.cast(pa.string())
        validity, offsets, data = text.buffers()
        raw = np.frombuffer(data, np.uint8) if data is not None else np.zeros(0, np.uint8)
        mapped = pa.py_buffer(_AS_COMPARED[raw])
        text = pa.StringArray.from_buffers(
            len(text), offsets, mapped, validity, text.null_count, text.offset
        )
        split = pc.split_pattern(text, " ")
        flat = pc.list_flatten(split)
        owner = np.asarray(pc.list_parent_indices(split).to_numpy(), dtype=np.int64)
        kept = mask(pc.and_(pc.not_equal(flat, ""), pc.invert(pc.is_in(flat, value_set=_FILLER))))
        owner, flat = owner[kept], flat.filter(pa.array(kept))
        ends = pa.array(np.r_[0, np.cumsum(np.bincount(owner, minlength=len(text)))], pa.int32())
        keys = pc.binary_join(pa.ListArray.from_arrays(ends, flat, mask=text.is_null()), " ")
        listed = [str(t) for t in keys.to_pylist()]
        if keys.null_count:  # a null name's key is "None", as it always was: its words from it
            keys = pa.array(listed, pa.string())
            owner, flat = _split_words(keys)
            return cls(keys, listed, flat, owner)
        # All ASCII now: a word's bytes are its characters.
        long = np.flatnonzero(mask(pc.greater_equal(pc.binary_length(flat), 3)))
        return cls(keys, listed, flat.take(pa.array(long)), owner[long])

    def words_of(self, among: np.ndarray) -> tuple[np.ndarray, pa.Array]:
        """The words of the keys at ``among`` (distinct indices), with each one's place in
        ``among``; in key order (not ``among``'s)."""
        place = np.full(len(self.text), -1, dtype=np.int64)
        place[among] = np.arange(len(among))
        owner = place[self.owner]
        inside = np.flatnonzero(owner >= 0)
        return owner[inside], self.words.take(pa.array(inside))


@dataclass(frozen=True)
class _Words:
    """The distinctive words of the customers' keys (3 characters or more, in at most 1 % of
    the names or 50 of them), each with the customers that have it, in customer order:
    ``members[start[w] : start[w] + count[w]]`` for the word of code ``w``."""

    words: pa.Array
    members: np.ndarray
    start: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, keys: _Keys) -> _Words:
        # By whole arrays: a Python dict of lists over every customer's words made as many
        # objects as there are customers, and the collector then walked them all again.
        size = max(len(keys.text), 1)
        codes = encoded(keys.words)
        word = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        # Each word once per name: sorted, then the repeats dropped (np.unique hashes first,
        # and cost five times as much).
        pair = np.sort(word * size + keys.owner)
        pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else pair
        word, owner = pair // size, pair % size
        count = np.bincount(word, minlength=len(codes.dictionary))
        common = max(50, len(keys.text) // 100)
        kept = np.flatnonzero(count <= common)
        inside = (count <= common)[word]
        words = codes.dictionary.take(pa.array(kept))
        kept_count = count[kept]
        start = np.r_[0, np.cumsum(kept_count)[:-1]].astype(np.int64)
        members = owner[inside]  # sorted by word code, then customer: kept codes keep that order
        return cls(words, members, start, kept_count)

    def rarest(self, keys: _Keys, among: np.ndarray) -> np.ndarray:
        """For each of the keys at ``among``: the code of its rarest word (fewest customers,
        then the first in sorted order), -1 for a key with none."""
        found = np.full(len(among), -1, dtype=np.int64)
        if len(among) == 0 or len(self.words) == 0:
            return found
        owner, flat = keys.words_of(among)
        code = pc.index_in(flat, value_set=self.words)
        known = np.flatnonzero(mask(pc.is_valid(code)))
        code_np = np.asarray(pc.fill_null(code, 0).to_numpy(zero_copy_only=False), np.int64)
        owner, code_np = owner[known], code_np[known]
        if len(owner) == 0:
            return found
        # Ties of rarity go to the first word in sorted order: only the words met here are
        # ranked (their order among themselves is their order among all; sorting every
        # customer word cost more than the rest of this lookup).
        met = np.flatnonzero(np.bincount(code_np, minlength=len(self.words)))
        rank = np.zeros(len(self.words), dtype=np.int64)
        order = np.asarray(pc.sort_indices(self.words.take(pa.array(met))).to_numpy(), np.int64)
        rank[met[order]] = np.arange(len(met))
        # A key's words in any order: equal (count, rank) is one word, the same code.
        order = np.lexsort((rank[code_np], self.count[code_np], owner))
        owner, code_np = owner[order], code_np[order]
        first = np.r_[True, owner[1:] != owner[:-1]]
        found[owner[first]] = code_np[first]
        return found


def _split_words(keys: pa.Array) -> tuple[np.ndarray, pa.Array]:
    """The words of 3 characters or more of each key, and the index of the key each is of."""
    words = pc.split_pattern(keys, " ")
    flat = pc.list_flatten(words)
    owner = np.asarray(pc.list_parent_indices(words).to_numpy(), dtype=np.int64)
    long = np.flatnonzero(mask(pc.greater_equal(pc.utf8_length(flat), 3)))
    return owner[long], flat.take(pa.array(long))


class _Customers:
    """The customers' keys, looked up by prefix and by word."""

    def __init__(self, keys: _Keys) -> None:
        self.keys = keys
        array = _fixed(keys.array)
        self.sorted = np.argsort(array, kind="stable")
        self.sorted_keys = array[self.sorted]
        self.words = _Words.of(keys)

    def starting_with(self, keys: pa.Array) -> tuple[np.ndarray, np.ndarray]:
        """For each key (8 characters or more), the customers whose key starts with it (at most
        :data:`CUSTOMERS_PER_PAYER`): (index into ``keys``, customer) pairs, by key and then
        in sorted order of the customers' keys."""
        none = np.zeros(0, dtype=np.int64)
        long = np.flatnonzero(mask(pc.greater_equal(pc.binary_length(keys), MIN_PREFIX)))
        if len(long) == 0 or len(self.sorted_keys) == 0:
            return none, none
        wanted = _fixed(keys.take(pa.array(long)))
        # One width for both (numpy would cut the wider to the other's).
        width = max(wanted.dtype.itemsize, self.sorted_keys.dtype.itemsize)
        wanted, sorted_keys = wanted.astype(f"S{width}"), self.sorted_keys.astype(f"S{width}")
        first = np.searchsorted(sorted_keys, wanted)
        run = np.ones(len(wanted), dtype=bool)  # still a run of matches from ``first``
        found_key, found_customer = [], []
        for step in range(CUSTOMERS_PER_PAYER):
            position = np.minimum(first + step, len(sorted_keys) - 1)
            inside = first + step < len(sorted_keys)
            run = run & inside & np.strings.startswith(sorted_keys[position], wanted)
            hit = np.flatnonzero(run)
            found_key.append(long[hit])
            found_customer.append(self.sorted[position[hit]])
        key, customer = np.concatenate(found_key), np.concatenate(found_customer)
        order = np.argsort(key, kind="stable")  # steps were concatenated in order
        return key[order], customer[order].astype(np.int64)


def _fixed(keys: pa.Array) -> np.ndarray:
    """Keys (ASCII, as :class:`_Keys` makes them) as numpy bytes of the longest one's width,
    from one copy of Arrow's buffer padded with NULs: numpy pads with NULs too, so they sort and
    compare as the strings do (numpy unicode made from a Python string per key cost more than
    the lookups)."""
    width = max(int(pc.max(pc.binary_length(keys)).as_py() or 0), 1)
    offsets, data = string_parts(pc.utf8_rpad(keys, width, padding="\0"))
    return data[offsets[0] : offsets[-1]].view(f"S{width}")


def name_matches(payers: pa.Array, customers: pa.Array) -> pd.DataFrame:
    """``payer`` (index into ``payers``), ``customer`` (index into ``customers``), ``score``
    (0-100), best first per payer."""
    known = _Customers(_Keys.of(customers))
    keys = _Keys.of(payers)
    exact = _exact(keys.array, known.keys.array)
    matched = np.zeros(len(keys.text), dtype=bool)
    matched[exact[0]] = True
    rest = np.flatnonzero(mask(pc.not_equal(keys.array, "")) & ~matched)  # in payer order
    at, customer = known.starting_with(keys.array.take(pa.array(rest)))
    with_prefix = np.zeros(len(rest), dtype=bool)
    with_prefix[at] = True
    found = (rest[at], customer, np.full(len(at), 95.0))
    fuzzy = _fuzzy(keys, rest[~with_prefix], known)
    # One frame of the three parts' arrays (a frame per part, concatenated, cost more).
    payer, customer, score = (np.concatenate(p) for p in zip(exact, found, fuzzy, strict=True))
    return pd.DataFrame(
        {
            "payer": payer.astype(np.int64),
            "customer": customer.astype(np.int64),
            "score": score.astype(np.float64),
        }
    )


def _exact(keys: pa.Array, customer_keys: pa.Array) -> tuple[np.ndarray, ...]:
    """Payers whose key is a customer's (score 100): for each payer in order, the first
    :data:`CUSTOMERS_PER_PAYER` customers with its key, in customer order (what an inner join
    of the two lists gives), by whole arrays: the customers grouped by key code, each payer's
    key looked up among the distinct keys."""
    codes = customer_keys.dictionary_encode()
    code = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    by_key = np.argsort(code, kind="stable")
    count = np.bincount(code, minlength=len(codes.dictionary))
    start = np.r_[0, np.cumsum(count)[:-1]].astype(np.int64)
    found = pc.index_in(keys, value_set=codes.dictionary)
    payer = np.flatnonzero(mask(pc.and_(pc.is_valid(found), pc.not_equal(keys, ""))))
    key = np.asarray(pc.fill_null(found, 0).to_numpy(zero_copy_only=False), np.int64)[payer]
    per_payer = np.minimum(count[key], CUSTOMERS_PER_PAYER)
    step = np.arange(int(per_payer.sum())) - np.repeat(np.cumsum(per_payer) - per_payer, per_payer)
    customer = by_key[np.repeat(start[key], per_payer) + step]
    return np.repeat(payer, per_payer), customer, np.full(len(customer), 100.0)


def _fuzzy(keys: _Keys, payers: np.ndarray, known: _Customers) -> tuple[np.ndarray, ...]:
    """The payers (indices into ``keys``) scored against the customers sharing their rarest
    word, each payer's row of them in customer order (rows of one word together, in the order
    the word is first met); the best :data:`CUSTOMERS_PER_PAYER` at :data:`NAME_CUTOFF` or more
    per payer (ties: customer order)."""
    words = known.words
    word = words.rarest(keys, payers)
    payers, word = payers[word >= 0], word[word >= 0]
    if len(payers) == 0:
        return payers, payers, np.zeros(0)
    # Rows in the order their word is first met, each word's payers in their order.
    first_met = np.full(len(words.count), len(payers), dtype=np.int64)
    np.minimum.at(first_met, word, np.arange(len(payers)))
    order = np.lexsort((np.arange(len(payers)), first_met[word]))
    payers, word = payers[order], word[order]
    width = words.count[word]  # customers each payer is scored against
    offset = np.r_[0, np.cumsum(width)].astype(np.int64)
    row = np.repeat(np.arange(len(payers), dtype=np.int64), width)
    customer = words.members[words.start[word[row]] + np.arange(len(row)) - offset[row]]
    scores = np.zeros(len(row), dtype=np.uint8)
    # Most pairs cannot be among their payer's best (nearly all of a block's customers share
    # only the block's word), and scoring was most of this pass: each pair gets an upper bound
    # of its score first (``_name_bound``), whole-array. The pairs of each row's best bounds
    # are scored; a row's third best score is then one to beat, and only its pairs whose bound
    # reaches it (or the cut-off) are scored too. A pair left out scores below three scored
    # pairs of its row (or below the cut-off): the best 3 are those scoring all pairs gives.
    queries = np.array([keys.text[n] for n in payers.tolist()], dtype=object)
    choices = np.array(known.keys.text, dtype=object)
    both = pa.concat_arrays([keys.array.take(pa.array(payers)), known.keys.array])
    bound = token_set_bound(Words.of(both), row, len(payers) + customer)
    limit = np.minimum(np.ceil(bound + 1e-6), 255).astype(np.int64)  # float error, inf
    picked = _best_per_row(limit, offset)
    top = picked[(picked >= 0) & (limit[np.maximum(picked, 0)] >= NAME_CUTOFF)]
    _score(scores, top, queries[row[top]], choices[customer[top]])
    third = np.where(picked >= 0, scores[np.maximum(picked, 0)].astype(np.int64), 0).min(axis=0)
    beat = np.maximum(third, NAME_CUTOFF)[row]
    rest = np.flatnonzero(limit >= beat)
    rest = rest[~np.isin(rest, top, assume_unique=True)]
    _score(scores, rest, queries[row[rest]], choices[customer[rest]])
    # Best first within each payer's row, the earlier customer first among equal scores.
    picked = _best_per_row(scores.astype(np.int64), offset)
    hit = picked.T.reshape(-1)
    found = np.where(hit >= 0, scores[np.maximum(hit, 0)].astype(np.int64), -1)
    keep = np.flatnonzero(found >= NAME_CUTOFF)  # by payer, then best first
    return payers[keep // CUSTOMERS_PER_PAYER], customer[hit[keep]], found[keep].astype(np.float64)


def _best_per_row(value: np.ndarray, offset: np.ndarray) -> np.ndarray:
    """The places of the :data:`CUSTOMERS_PER_PAYER` largest non-negative ``value`` (below 2**31)
    of each row (rows from ``offset``, none empty), largest first, the first place among equal
    ones; -1 where a row has no more (CUSTOMERS_PER_PAYER × rows). Passes of a max over each row
    (one ragged reduce; a sort of every pair cost more than all the rest here): each place is
    one int64, its value above its place counted down, so a row's max is its largest value at
    its first place."""
    last = np.int64(0xFFFFFFFF)
    key = (value << 32) | (last - np.arange(len(value), dtype=np.int64))
    picked = []
    for _ in range(CUSTOMERS_PER_PAYER):
        best = np.maximum.reduceat(key, offset[:-1])
        place = np.where(best >= 0, last - (best & last), -1)  # -1: the row is used up
        key[place[place >= 0]] = -1
        picked.append(place)
    return np.stack(picked)


def _score(
    scores: np.ndarray, places: np.ndarray, queries: np.ndarray, choices: np.ndarray
) -> None:
    """Into ``scores`` at ``places``: each query's score against its choice (one list of pairs)."""
    if len(places):
        scores[places] = process.cpdist(
            queries.tolist(),
            choices.tolist(),
            scorer=fuzz.token_set_ratio,
            score_cutoff=NAME_CUTOFF,
            dtype=np.uint8,
        )
