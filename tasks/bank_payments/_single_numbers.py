"""The one number of each text that holds at most one prefix word (nearly every payer,
reference and description that names a number): read by trimming where it is written plainly
(``_plain_numbers``), else by one RE2 extraction; and the patterns both this and marking every
number (``_references.mark_numbers``) are made of. Split from ``_references``, which decides
which texts are read so and spreads what they name to the lines.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._plain_numbers import plain_numbers
from tasks.common.arrow_text import mask

MARK = "\u00a7"  # § marks a number found in the text; never in a bank's character set


def _alternatives(words: Iterable[str]) -> str:
    return "|".join(re.escape(w).replace("\\ ", r"\s+") for w in words)


def _number_pattern(words: str) -> str:
    """A prefix word (``words``: an alternation, or groups of them), what people put between it
    and the number, and the number (at most 9 digits after leading zeros)."""
    return (
        rf"(^|[^A-Z0-9{MARK}])(?:{words})\s*(?:NO\.?|NUMBER|NUM|REF)?\s*"
        rf"[-_/#:.]?\s*0*([0-9]{{1,9}})($|[^0-9])"
    )


def _single_numbers(
    upper: pa.Array,
    aliases: Mapping[str, list[str]],
    plain: tuple[np.ndarray, pa.Array] | None = None,
) -> pd.DataFrame:
    """The one number of each text (upper case) that has at most one prefix word: the texts
    that are a number written plainly read by trimming (``_plain_numbers``; ``plain``, what
    it gives for ``upper``, where already known), the others by :func:`_extracted`; by text,
    in order."""
    if plain is None:
        plain = plain_numbers(upper, aliases)
    if plain is None:
        return _extracted(upper, aliases)
    shaped, keys = plain
    rest = np.flatnonzero(~shaped)
    others = _extracted(upper.take(pa.array(rest)), aliases)
    named = mask(pc.is_valid(keys))
    line = np.concatenate(
        [np.flatnonzero(shaped)[named], rest[others["line"].to_numpy(dtype=np.int64)]]
    )
    extracted = pa.array(others["key"], pa.string())
    if isinstance(extracted, pa.ChunkedArray):  # one chunk as _extracted makes it; else joined
        extracted = extracted.combine_chunks()
    key = pa.concat_arrays([keys.filter(pa.array(named)), extracted])
    order = np.argsort(line, kind="stable")
    return pd.DataFrame(
        {
            "line": line[order],
            "key": pd.arrays.ArrowExtensionArray(key.take(pa.array(order))),
            "order": np.zeros(len(line), dtype=np.int64),
        }
    )


def _extracted(upper: pa.Array, aliases: Mapping[str, list[str]]) -> pd.DataFrame:
    """The one number of each text (upper case) that has at most one prefix word: one RE2
    extraction with a group per prefix, in place of marking and splitting."""
    prefixes = list(aliases)
    groups = "|".join(f"(?P<p{i}>{_alternatives(aliases[p])})" for i, p in enumerate(prefixes))
    pattern = _number_pattern(groups)
    pattern = pattern.replace("(^|", "(?:^|", 1).replace("($|", "(?:$|", 1)
    pattern = pattern.replace("([0-9]{1,9})", "(?P<n>[0-9]{1,9})", 1)
    found = pc.extract_regex(upper, pattern)
    hit = np.flatnonzero(mask(found.is_valid()))
    found = found.take(pa.array(hit))
    prefix: pa.Array = pa.nulls(len(hit), pa.string())
    for i, name in enumerate(prefixes):
        prefix = pc.if_else(pc.not_equal(pc.struct_field(found, f"p{i}"), ""), name, prefix)
    keys = pc.binary_join_element_wise(prefix, pc.struct_field(found, "n"), "-")
    return pd.DataFrame(
        {
            "line": hit,
            "key": pd.arrays.ArrowExtensionArray(keys),
            "order": np.zeros(len(hit), dtype=np.int64),
        }
    )


def _one_word_at_most(upper: pa.Array, aliases: Mapping[str, list[str]]) -> np.ndarray:
    """Whether each text (upper case) holds at most one prefix word (the words are letters,
    :func:`_separable`). Each word found starts at a letter that begins some word, a different
    one each time: a text with at most one such letter holds at most one word, which plain
    letter counts show. Only the other texts (few) are counted with the regex."""
    words = [w for ws in aliases.values() for w in ws]
    at_most_one = np.ones(len(upper), dtype=bool)
    if upper.null_count:  # never for a dictionary's texts; the regex count says for nulls
        unsure = np.arange(len(upper))
    else:
        starts = np.zeros(len(upper), dtype=np.int64)
        for letter in sorted({w[0] for w in words}):
            starts += np.asarray(pc.count_substring(upper, letter).to_numpy(zero_copy_only=False))
        unsure = np.flatnonzero(starts > 1)
    if len(unsure):
        pattern = _alternatives(sorted(words, key=len)[::-1])
        counts = pc.count_substring_regex(upper.take(pa.array(unsure)), pattern)
        at_most_one[unsure] = mask(pc.less_equal(counts, 1))
    return at_most_one
