"""Which customers a bank line's payer may be, by name, for every distinct payer at once.

A payer is compared as banks and people write names: upper case, no punctuation, no legal or
filler words (``LTD``/``LIMITED``, ``PLC``, ``THE``, ``&``/``AND``...). Then, cheapest first:

- the same key as a customer's: score 100;
- the start of a customer's key, at least 8 characters long (the bank cut the name at 18
  characters): score 95;
- otherwise ``rapidfuzz``'s token-set ratio (cut-off 70) against the customers sharing the
  payer's rarest distinctive word (words in more than 1 % of the names, or 50 of them, do not
  count: they would put every customer in every block). Payers sharing that word are scored in
  one ``process.cdist`` call; the pairs of all small blocks together in one ``process.cpdist``.

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

NAME_CUTOFF = 70
CUSTOMERS_PER_PAYER = 3
MIN_PREFIX = 8
SMALL_BLOCK = 64  # pairs of payers and customers; smaller blocks are scored together
_FILLER = r"\b(LIMITED|LTD|PLC|LLP|LLC|INC|CO|COMPANY|THE|AND|UK|GROUP|HOLDINGS|SERVICES?)\b"


def name_keys(names: pa.Array) -> list[str]:
    """Each name as compared (see the module docstring), by whole arrays."""
    text = pc.utf8_upper(names)
    text = pc.replace_substring(text, "&", " AND ")
    text = pc.replace_substring_regex(text, r"[^A-Z0-9 ]+", " ")
    text = pc.replace_substring_regex(text, _FILLER, " ")
    # Only letters, digits and plain spaces are left: each run of spaces becomes one by a
    # split on runs and a join (the ends trimmed after), no regex (a replace of ``\s+`` over
    # every text cost more than all the rest together).
    text = pc.binary_join(pc.ascii_split_whitespace(text), " ")
    text = pc.utf8_trim_whitespace(text)
    return [str(t) for t in text.to_pylist()]


@dataclass(frozen=True)
class _Words:
    """The distinctive words of the customers' keys (3 characters or more, in at most 1 % of
    the names or 50 of them), each with the customers that have it, in customer order:
    ``members[start[w] : start[w] + count[w]]`` for the word of code ``w``."""

    words: pa.Array
    rank: np.ndarray  # each word's place in sorted order (ties of rarity go to the first)
    members: np.ndarray
    start: np.ndarray
    count: np.ndarray

    @classmethod
    def of(cls, keys: list[str]) -> _Words:
        # By whole arrays: a Python dict of lists over every customer's words made as many
        # objects as there are customers, and the collector then walked them all again.
        owner, flat = _split_words(keys)
        codes = encoded(flat)
        word = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        # Each word once per name: sorted, then the repeats dropped (np.unique hashes first,
        # and cost five times as much).
        pair = np.sort(word * max(len(keys), 1) + owner)
        pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else pair
        word, owner = pair // max(len(keys), 1), pair % max(len(keys), 1)
        count = np.bincount(word, minlength=len(codes.dictionary))
        common = max(50, len(keys) // 100)
        kept = np.flatnonzero(count <= common)
        inside = (count <= common)[word]
        code_of = np.full(len(count), -1, dtype=np.int64)
        code_of[kept] = np.arange(len(kept))
        words = codes.dictionary.take(pa.array(kept))
        rank = np.empty(len(kept), dtype=np.int64)
        rank[np.asarray(pc.sort_indices(words).to_numpy(), dtype=np.int64)] = np.arange(len(kept))
        kept_count = count[kept]
        start = np.r_[0, np.cumsum(kept_count)[:-1]].astype(np.int64)
        members = owner[inside]  # sorted by word code, then customer: kept codes keep that order
        return cls(words, rank, members, start, kept_count)

    def rarest(self, keys: list[str], among: np.ndarray) -> np.ndarray:
        """For each of the keys at ``among``: the code of its rarest word (fewest customers,
        then the first in sorted order), -1 for a key with none."""
        found = np.full(len(among), -1, dtype=np.int64)
        if len(among) == 0 or len(self.words) == 0:
            return found
        owner, flat = _split_words([keys[i] for i in among])
        code = pc.index_in(flat, value_set=self.words)
        known = np.flatnonzero(mask(pc.is_valid(code)))
        code_np = np.asarray(pc.fill_null(code, 0).to_numpy(zero_copy_only=False), np.int64)
        owner, code_np = owner[known], code_np[known]
        if len(owner) == 0:
            return found
        order = np.lexsort((self.rank[code_np], self.count[code_np], owner))
        owner, code_np = owner[order], code_np[order]
        first = np.r_[True, owner[1:] != owner[:-1]]
        found[owner[first]] = code_np[first]
        return found


def _split_words(keys: list[str]) -> tuple[np.ndarray, pa.Array]:
    """The words of 3 characters or more of each key, and the index of the key each is of."""
    words = pc.split_pattern(pa.array(keys, pa.string()), " ")
    flat = pc.list_flatten(words)
    owner = np.asarray(pc.list_parent_indices(words).to_numpy(), dtype=np.int64)
    long = np.flatnonzero(mask(pc.greater_equal(pc.utf8_length(flat), 3)))
    return owner[long], flat.take(pa.array(long))


class _Customers:
    """The customers' keys, looked up by prefix and by word."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        array = np.array(keys, dtype=str)
        self.sorted = np.argsort(array, kind="stable")
        self.sorted_keys = array[self.sorted]
        self.words = _Words.of(keys)

    def starting_with(self, keys: list[str]) -> tuple[np.ndarray, np.ndarray]:
        """For each key (8 characters or more), the customers whose key starts with it (at most
        :data:`CUSTOMERS_PER_PAYER`): (index into ``keys``, customer) pairs, by key and then
        in sorted order of the customers' keys."""
        none = np.zeros(0, dtype=np.int64)
        if not keys or len(self.sorted_keys) == 0:
            return none, none
        wanted = np.array(keys, dtype=str)
        long_enough = np.strings.str_len(wanted) >= MIN_PREFIX
        first = np.searchsorted(self.sorted_keys, wanted)
        run = long_enough  # still a run of matches from ``first``
        found_key, found_customer = [], []
        for step in range(CUSTOMERS_PER_PAYER):
            position = np.minimum(first + step, len(self.sorted_keys) - 1)
            inside = first + step < len(self.sorted_keys)
            run = run & inside & np.strings.startswith(self.sorted_keys[position], wanted)
            hit = np.flatnonzero(run)
            found_key.append(hit)
            found_customer.append(self.sorted[position[hit]])
        key, customer = np.concatenate(found_key), np.concatenate(found_customer)
        order = np.argsort(key, kind="stable")  # steps were concatenated in order
        return key[order], customer[order].astype(np.int64)


def name_matches(payers: pa.Array, customers: pa.Array) -> pd.DataFrame:
    """``payer`` (index into ``payers``), ``customer`` (index into ``customers``), ``score``
    (0-100), best first per payer."""
    known = _Customers(name_keys(customers))
    payer_keys = name_keys(payers)
    exact = _exact(payer_keys, known.keys)
    matched = set(exact["payer"].tolist())
    rest = np.array(
        [n for n, key in enumerate(payer_keys) if key and n not in matched], dtype=np.int64
    )
    at, customer = known.starting_with([payer_keys[n] for n in rest])
    with_prefix = np.zeros(len(rest), dtype=bool)
    with_prefix[at] = True
    others = rest[~with_prefix]
    found = pd.DataFrame({"payer": rest[at], "customer": customer, "score": np.full(len(at), 95.0)})
    fuzzy = _fuzzy(payer_keys, others, known)
    both = pd.concat([exact, found, fuzzy], ignore_index=True)
    return both.astype({"payer": "int64", "customer": "int64", "score": "float64"})


def _exact(payer_keys: list[str], customer_keys: list[str]) -> pd.DataFrame:
    """Payers whose key is a customer's (score 100): for each payer in order, the first
    :data:`CUSTOMERS_PER_PAYER` customers with its key, in customer order (what an inner join
    of the two lists gives), by whole arrays: the customers grouped by key code, each payer's
    key looked up among the distinct keys."""
    codes = pa.array(customer_keys, pa.string()).dictionary_encode()
    code = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    by_key = np.argsort(code, kind="stable")
    count = np.bincount(code, minlength=len(codes.dictionary))
    start = np.r_[0, np.cumsum(count)[:-1]].astype(np.int64)
    keys = pa.array(payer_keys, pa.string())
    found = pc.index_in(keys, value_set=codes.dictionary)
    payer = np.flatnonzero(mask(pc.and_(pc.is_valid(found), pc.not_equal(keys, ""))))
    key = np.asarray(pc.fill_null(found, 0).to_numpy(zero_copy_only=False), np.int64)[payer]
    per_payer = np.minimum(count[key], CUSTOMERS_PER_PAYER)
    step = np.arange(int(per_payer.sum())) - np.repeat(np.cumsum(per_payer) - per_payer, per_payer)
    customer = by_key[np.repeat(start[key], per_payer) + step]
    return pd.DataFrame(
        {
            "payer": np.repeat(payer, per_payer),
            "customer": customer,
            "score": np.full(len(customer), 100.0),
        }
    )


def _fuzzy(payer_keys: list[str], payers: np.ndarray, known: _Customers) -> pd.DataFrame:
    """The payers (indices into ``payer_keys``) scored against the customers sharing their
    rarest word: one ``cdist`` per word, its payers in the order first met; the best
    :data:`CUSTOMERS_PER_PAYER` at :data:`NAME_CUTOFF` or more per payer (ties: customer order)."""
    words = known.words
    word = words.rarest(payer_keys, payers)
    payers, word = payers[word >= 0], word[word >= 0]
    if len(payers) == 0:
        return pd.DataFrame({"payer": payers, "customer": payers, "score": np.zeros(0)})
    # Blocks in the order their word is first met, each block's payers in their order.
    first_met = np.full(len(words.count), len(payers), dtype=np.int64)
    np.minimum.at(first_met, word, np.arange(len(payers)))
    order = np.lexsort((np.arange(len(payers)), first_met[word]))
    payers, word = payers[order], word[order]
    width = words.count[word]  # customers each payer is scored against
    offset = np.r_[0, np.cumsum(width)].astype(np.int64)
    scores = np.zeros(int(offset[-1]), dtype=np.uint8)
    blocks = np.flatnonzero(np.r_[True, word[1:] != word[:-1]])
    ends = np.r_[blocks[1:], len(word)]
    customer_keys = np.array(known.keys, dtype=object)
    query_keys = np.array(payer_keys, dtype=object)[payers]
    # A small block (a payer or a customer alone, a few of each) leaves cdist little to reuse,
    # and its call cost more than its scores: all such blocks' pairs are scored by one
    # ``cpdist`` (the same scorer on each pair), the other blocks by one ``cdist`` each.
    alone = (ends - blocks) * width[blocks] <= SMALL_BLOCK
    _score_pairs(
        scores,
        np.flatnonzero(np.repeat(alone, ends - blocks)),
        offset,
        word,
        words,
        query_keys,
        customer_keys,
    )
    for begin, end in zip(blocks[~alone].tolist(), ends[~alone].tolist(), strict=True):
        code = int(word[begin])
        block = words.members[words.start[code] : words.start[code] + words.count[code]]
        scores[offset[begin] : offset[end]] = process.cdist(
            query_keys[begin:end].tolist(),
            customer_keys[block].tolist(),
            scorer=fuzz.token_set_ratio,
            score_cutoff=NAME_CUTOFF,
            dtype=np.uint8,
        ).ravel()
    # Best first within each payer's row, the earlier customer first among equal scores: only
    # the scores at the cut-off or more (few) are ranked, the rest being 0 and never kept.
    hit = np.flatnonzero(scores >= NAME_CUTOFF)
    query = np.searchsorted(offset, hit, side="right") - 1
    column = hit - offset[query]
    ranked = np.lexsort((column, -scores[hit].astype(np.int16), query))
    hit, query, column = hit[ranked], query[ranked], column[ranked]
    first = np.flatnonzero(np.r_[True, query[1:] != query[:-1]])
    place = np.arange(len(query)) - np.repeat(first, np.diff(np.r_[first, len(query)]))
    keep = place < CUSTOMERS_PER_PAYER
    hit, query, column = hit[keep], query[keep], column[keep]
    customer = words.members[words.start[word[query]] + column]
    return pd.DataFrame(
        {
            "payer": payers[query],
            "customer": customer,
            "score": scores[hit].astype(np.float64),
        }
    )


def _score_pairs(
    scores: np.ndarray,
    queries: np.ndarray,
    offset: np.ndarray,
    word: np.ndarray,
    words: _Words,
    query_keys: np.ndarray,
    customer_keys: np.ndarray,
) -> None:
    """Into ``scores`` (each query's row from ``offset``): the ``queries`` scored against every
    customer of their word's block, as one list of pairs."""
    if len(queries) == 0:
        return
    width = words.count[word[queries]]
    step = np.arange(int(width.sum())) - np.repeat(np.cumsum(width) - width, width)
    customer = words.members[np.repeat(words.start[word[queries]], width) + step]
    scores[np.repeat(offset[queries], width) + step] = process.cpdist(
        query_keys[np.repeat(queries, width)].tolist(),
        customer_keys[customer].tolist(),
        scorer=fuzz.token_set_ratio,
        score_cutoff=NAME_CUTOFF,
        dtype=np.uint8,
    )
