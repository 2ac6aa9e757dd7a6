"""An upper bound of ``rapidfuzz``'s token-set ratio for many pairs of keys at once, by whole
arrays, so that pairs which cannot be among a payer's best customers are never scored.

``fuzz.token_set_ratio(a, b)`` (``rapidfuzz/fuzz_py.py``, the reference its C++ follows): with
``A`` and ``B`` the sets of words of ``a`` and ``b``, ``I = A & B``, ``DA = A - B``, ``DB = B - A``,
each joined in sorted order by single spaces (lengths ``s``, ``ab``, ``ba``):

- 100 when ``I`` is not empty and ``DA`` or ``DB`` is;
- else the largest of ``100 - 100 * indel(DA, DB) / (2s + 2[s > 0] + ab + ba)`` and, when
  ``s > 0``, ``100 - 100 * (1 + ab) / (2s + 1 + ab)`` and the same with ``ba``.

``indel(x, y) = |x| + |y| - 2 LCS(x, y)``, and the longest common subsequence has at most the
characters ``x`` and ``y`` share, counted with repeats: for each letter or digit, the smaller of
its counts in the words of ``A`` and of ``B`` (those of ``I`` are in both, so less theirs), plus
the smaller number of spaces. That in place of the LCS gives the first term or more; the two
others are exact. Keys are as ``_names`` makes them: ASCII, words separated by single spaces.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.common.arrow_text import string_parts

MAX_WORDS = 6  # a key with more distinct words is never bounded (its pairs are all scored)
CHUNK = 16384  # pairs bounded together
_BINS = 37  # A-Z, 0-9, anything else
_BIN = np.full(256, _BINS - 1, dtype=np.int64)
_BIN[65:91] = np.arange(26)
_BIN[48:58] = np.arange(26, 36)


@dataclass(frozen=True)
class Words:
    """Each key's distinct words (codes, ``MAX_WORDS`` rows × keys, -1 below its last), their
    lengths, how many there are and their characters in all, how many of each character they
    have (bins × keys), and whether a key cannot be bounded (too many words, a count past 255,
    a byte past ASCII)."""

    code: np.ndarray
    length: np.ndarray
    count: np.ndarray
    chars: np.ndarray
    histogram: np.ndarray
    unbounded: np.ndarray

    @classmethod
    def of(cls, keys: pa.Array) -> Words:
        split = pc.split_pattern(keys, " ")
        flat = pc.list_flatten(split)
        owner = np.asarray(pc.list_parent_indices(split).to_numpy(), dtype=np.int64)
        codes = flat.dictionary_encode()
        code = np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
        offsets, data = string_parts(codes.dictionary)
        size, words = len(keys), max(len(codes.dictionary), 1)
        lengths = np.diff(offsets).astype(np.int64)
        # Each word once per key (sets), an empty one (an empty key's) not at all.
        pair = np.sort(owner * words + code)
        pair = pair[np.r_[True, pair[1:] != pair[:-1]]] if len(pair) else pair
        owner, code = pair // words, pair % words
        keep = lengths[code] > 0
        owner, code = owner[keep], code[keep]
        count = np.bincount(owner, minlength=size)
        chars = np.bincount(owner, weights=lengths[code], minlength=size).astype(np.int64)
        place = np.arange(len(owner)) - np.repeat(np.cumsum(count) - count, count)
        rows = min(MAX_WORDS, int(count.max(initial=1)))
        inside = place < rows
        table = np.full((rows, size), words, dtype=np.int64)  # code ``words``: none (no chars)
        table[place[inside], owner[inside]] = code[inside]
        # Each distinct word's characters by bin (bins × words, and a last column of zeros for
        # none), then each key's as the sum of its words' (a few gathers of small columns). A
        # word past 255 characters (a count might be) or past ASCII leaves its keys unbounded.
        step = np.arange(int(lengths.sum())) - np.repeat(np.cumsum(lengths) - lengths, lengths)
        raw = data[np.repeat(offsets[:-1], lengths) + step]
        at = _BIN[raw] * (words + 1) + np.repeat(np.arange(len(lengths)), lengths)
        by_word = np.bincount(at, minlength=_BINS * (words + 1)).reshape(_BINS, words + 1)
        by_word = np.minimum(by_word, 255).astype(np.uint16)
        wide = np.zeros(words + 1, dtype=bool)
        # Past ASCII, or whitespace other than the space between words: rapidfuzz splits words
        # at any whitespace, this at spaces only (keys as ``_names`` makes them have neither).
        odd = (raw >= 128) | ((raw >= 9) & (raw <= 13)) | ((raw >= 28) & (raw <= 31))
        wide[np.repeat(np.arange(len(lengths)), lengths)[odd]] = True
        wide[: len(lengths)] |= lengths > 255
        histogram = np.zeros((_BINS, size), dtype=np.uint16)
        for column in table:
            histogram += np.take(by_word, column, axis=1)
        unbounded = (count > rows) | (histogram.max(axis=0, initial=0) > 255) | wide[table].any(0)
        length = np.append(lengths, 0)[table]
        table[table == words] = -1
        return cls(table, length, count, chars, histogram.astype(np.uint8), unbounded)


def token_set_bound(words: Words, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    """For each pair of keys (``a[i]``, ``b[i]``, indices into ``words``): a number never below
    ``fuzz.token_set_ratio`` of the two (see the module docstring), ``inf`` for a pair that cannot
    be bounded. A chunk of pairs at a time, along the last axis: every step is over many pairs
    at once, and its arrays stay in cache (whole ones were fresh pages each time)."""
    bound = np.empty(len(a))
    for begin in range(0, len(a), CHUNK):
        part = slice(begin, begin + CHUNK)
        bound[part] = _bound(words, a[part], b[part])
    return bound


def _bound(words: Words, a: np.ndarray, b: np.ndarray) -> np.ndarray:
    code_a, code_b = np.take(words.code, a, axis=1), np.take(words.code, b, axis=1)
    code_b[code_b < 0] = -2  # a missing word of one key never equals one of the other
    shared = np.zeros(code_a.shape, dtype=bool)
    for row in code_b:
        shared |= code_a == row
    shared_count = shared.sum(axis=0)
    shared_chars = (shared * np.take(words.length, a, axis=1)).sum(axis=0)
    only_a = words.count[a] - shared_count
    only_b = words.count[b] - shared_count
    s = np.where(shared_count > 0, shared_chars + shared_count - 1, 0)
    ab = np.where(only_a > 0, words.chars[a] - shared_chars + only_a - 1, 0)
    ba = np.where(only_b > 0, words.chars[b] - shared_chars + only_b - 1, 0)
    common = np.minimum(np.take(words.histogram, a, axis=1), np.take(words.histogram, b, axis=1))
    lcs = common.sum(axis=0, dtype=np.int64) - shared_chars + np.minimum(only_a, only_b) - 1
    lcs = np.minimum(lcs, np.minimum(ab, ba))
    with np.errstate(divide="ignore", invalid="ignore"):
        bound = 100 - 100 * (ab + ba - 2 * lcs) / (2 * s + 2 * (s > 0) + ab + ba)
        with_a = 100 - 100 * (1 + ab) / (2 * s + 1 + ab)
        with_b = 100 - 100 * (1 + ba) / (2 * s + 1 + ba)
    bound = np.where(s > 0, np.maximum(bound, np.maximum(with_a, with_b)), bound)
    bound[(shared_count > 0) & ((only_a == 0) | (only_b == 0))] = 100
    bound[(words.count[a] == 0) | (words.count[b] == 0)] = 0  # no words: rapidfuzz gives 0
    bound[words.unbounded[a] | words.unbounded[b]] = np.inf
    return bound
