"""Numbers written plainly: a prefix word, at most one separator, the digits and nothing else
(``INV-0042``, ``inv 42``, ``INVOICE0042``), as most references on a statement are. They are
read by trimming, not by a regex extraction with groups, which cost three quarters of finding
the numbers in a statement's references (``_references._single_numbers`` takes the rest).

What trimming reads is what the extraction reads, for such a text: the number pattern
(``_references._number_pattern``) can match it only from its start, where the word is; the
digits are all the digits, less leading zeros (a zero if all are), and there is no number when
more than 9 are left (the pattern's limit, at any start). The word's prefix decides the key:
the extraction could take a shorter word instead only when what is left of the text's word
is what the pattern allows between a word and its number (``NO``, ``NUMBER``, ``NUM``,
``REF``); aliases where a word is another plus one of those are not read here. Words of more
than one word (``PAYMENT REQUEST``) are left to the extraction: they cannot match such a text,
which has one run of letters.
"""

from __future__ import annotations

import re
from collections.abc import Mapping

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._kernels import mask

MAX_DIGITS = 9
_LETTERS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ"
_SEPARATORS = "-_/#:. "
_BETWEEN = ("NO", "NUMBER", "NUM", "REF")  # what may come between a word and its number


def _readable(words: list[str]) -> bool:
    """Whether texts of these one-word aliases can be read by trimming (see the module
    docstring)."""
    known = set(words)
    return bool(words) and not any(w + between in known for w in words for between in _BETWEEN)


def plain_numbers(
    upper: pa.Array, aliases: Mapping[str, list[str]]
) -> tuple[np.ndarray, pa.Array] | None:
    """Of ``upper`` (texts in upper case): which are numbers written plainly (a mask), and the
    key each names, ``PREFIX-N`` (null where it has more than 9 digits: no number); None
    when the aliases cannot be read so."""
    one_word = [(p, w) for p, ws in aliases.items() for w in ws if re.fullmatch("[A-Z]+", w)]
    words = [w for _, w in one_word]
    if not _readable(words):
        return None
    prefix_of = pa.array([p for p, _ in one_word], pa.string())
    alternatives = "|".join(sorted(words, key=lambda w: (-len(w), w)))
    shape = rf"^(?:{alternatives})[-_/#:. ]?[0-9]+$"  # one of _SEPARATORS at most
    plain = mask(pc.match_substring_regex(upper, shape))
    texts = upper.filter(pa.array(plain))
    # Such texts are ASCII (the shape says so): trimmed and measured by bytes. The word, the
    # separator and the leading zeros go in one trim (a word has no zero, and digits come last).
    number = pc.ascii_ltrim(texts, characters=_LETTERS + _SEPARATORS + "0")
    number = pc.if_else(pc.equal(number, ""), "0", number)
    word = pc.ascii_rtrim(texts, characters="0123456789" + _SEPARATORS)
    prefix = pc.take(prefix_of, pc.index_in(word, value_set=pa.array(words, pa.string())))
    key = pc.binary_join_element_wise(prefix, number, "-")
    too_long = pc.greater(pc.binary_length(number), MAX_DIGITS)
    return plain, pc.if_else(too_long, pa.scalar(None, pa.string()), key)
