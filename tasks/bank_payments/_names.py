"""Which customers a bank line's payer may be, by name, for every distinct payer at once.

A payer is compared as banks and people write names: upper case, no punctuation, no legal or
filler words (``LTD``/``LIMITED``, ``PLC``, ``THE``, ``&``/``AND``...). Then, cheapest first:

- the same key as a customer's: score 100;
- the start of a customer's key, at least 8 characters long (the bank cut the name at 18
  characters): score 95;
- otherwise ``rapidfuzz``'s token-set ratio (cut-off 70) against the customers sharing the
  payer's rarest distinctive word (words in more than 1 % of the names, or 50 of them, do not
  count: they would put every customer in every block). Payers sharing that word are scored in
  one ``process.cdist`` call.

At most 3 customers per payer are kept, best first.
"""

from __future__ import annotations

from collections import defaultdict

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
from rapidfuzz import fuzz, process

NAME_CUTOFF = 70
CUSTOMERS_PER_PAYER = 3
MIN_PREFIX = 8
_FILLER = r"\b(LIMITED|LTD|PLC|LLP|LLC|INC|CO|COMPANY|THE|AND|UK|GROUP|HOLDINGS|SERVICES?)\b"


def name_keys(names: pa.Array) -> list[str]:
    """Each name as compared (see the module docstring), by whole arrays."""
    text = pc.utf8_upper(names)
    text = pc.replace_substring(text, "&", " AND ")
    text = pc.replace_substring_regex(text, r"[^A-Z0-9 ]+", " ")
    text = pc.replace_substring_regex(text, _FILLER, " ")
    text = pc.utf8_trim_whitespace(pc.replace_substring_regex(text, r"\s+", " "))
    return [str(t) for t in text.to_pylist()]


def _word_index(keys: list[str]) -> dict[str, list[int]]:
    index: defaultdict[str, list[int]] = defaultdict(list)
    for number, key in enumerate(keys):
        for word in set(key.split()):
            if len(word) >= 3:
                index[word].append(number)
    common = max(50, len(keys) // 100)
    return {word: found for word, found in index.items() if len(found) <= common}


class _Customers:
    """The customers' keys, looked up by prefix and by word."""

    def __init__(self, keys: list[str]) -> None:
        self.keys = keys
        array = np.array(keys, dtype=str)
        self.sorted = np.argsort(array, kind="stable")
        self.sorted_keys = array[self.sorted]
        self.words = _word_index(keys)

    def starting_with(self, keys: list[str]) -> list[list[int]]:
        """For each key (8 characters or more), the customers whose key starts with it."""
        found: list[list[int]] = [[] for _ in keys]
        if not keys or len(self.sorted_keys) == 0:
            return found
        wanted = np.array(keys, dtype=str)
        long_enough = np.strings.str_len(wanted) >= MIN_PREFIX
        first = np.searchsorted(self.sorted_keys, wanted)
        for step in range(CUSTOMERS_PER_PAYER):
            position = np.minimum(first + step, len(self.sorted_keys) - 1)
            inside = (first + step < len(self.sorted_keys)) & long_enough
            hit = inside & np.strings.startswith(self.sorted_keys[position], wanted)
            for index in np.flatnonzero(hit):
                if step == len(found[index]):  # still a run of matches from ``first``
                    found[index].append(int(self.sorted[position[index]]))
        return found

    def rarest_word(self, key: str) -> str | None:
        present = [w for w in set(key.split()) if w in self.words]
        return min(present, key=lambda w: (len(self.words[w]), w)) if present else None


def name_matches(payers: pa.Array, customers: pa.Array) -> pd.DataFrame:
    """``payer`` (index into ``payers``), ``customer`` (index into ``customers``), ``score``
    (0-100), best first per payer."""
    known = _Customers(name_keys(customers))
    payer_keys = name_keys(payers)
    exact = _exact(payer_keys, known.keys)
    rows: list[tuple[int, int, float]] = []
    blocks: defaultdict[str, list[tuple[int, str]]] = defaultdict(list)
    matched = set(exact["payer"].tolist())
    rest = [n for n, key in enumerate(payer_keys) if key and n not in matched]
    prefixes = known.starting_with([payer_keys[n] for n in rest])
    for number, prefix in zip(rest, prefixes, strict=True):
        key = payer_keys[number]
        if prefix:
            rows.extend((number, c, 95.0) for c in prefix)
            continue
        word = known.rarest_word(key)
        if word is not None:
            blocks[word].append((number, key))
    for word, queries in blocks.items():
        rows.extend(_fuzzy(queries, known.words[word], known.keys))
    found = pd.DataFrame(rows, columns=["payer", "customer", "score"])
    both = pd.concat([exact, found], ignore_index=True)
    return both.astype({"payer": "int64", "customer": "int64", "score": "float64"})


def _exact(payer_keys: list[str], customer_keys: list[str]) -> pd.DataFrame:
    """Payers whose key is a customer's (score 100), by a join of the two lists."""
    payers = pd.DataFrame({"key": payer_keys, "payer": np.arange(len(payer_keys))})
    customers = pd.DataFrame({"key": customer_keys, "customer": np.arange(len(customer_keys))})
    joined = payers[payers["key"] != ""].merge(customers, on="key")
    joined = joined.groupby("payer", sort=False).head(CUSTOMERS_PER_PAYER)
    return joined.assign(score=100.0)[["payer", "customer", "score"]]


def _fuzzy(
    queries: list[tuple[int, str]], block: list[int], keys: list[str]
) -> list[tuple[int, int, float]]:
    scores = process.cdist(
        [key for _n, key in queries],
        [keys[c] for c in block],
        scorer=fuzz.token_set_ratio,
        score_cutoff=NAME_CUTOFF,
        dtype=np.uint8,
    )
    best = np.argsort(-scores.astype(np.int16), axis=1, kind="stable")[:, :CUSTOMERS_PER_PAYER]
    rows: list[tuple[int, int, float]] = []
    for (number, _key), row, columns in zip(queries, scores, best, strict=True):
        rows.extend(
            (number, block[int(i)], float(row[i])) for i in columns if row[i] >= NAME_CUTOFF
        )
    return rows
