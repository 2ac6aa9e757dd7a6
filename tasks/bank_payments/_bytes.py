"""Questions about texts answered from their bytes at once: whether each has a digit, whether
each has whitespace that is not one plain space. A regex of one character class runs once per
text; these read Arrow's buffer in one numpy pass (``tasks/common/arrow_text.py``) and give
what the regex gives (RE2's classes are ASCII, and the bytes of a UTF-8 character past ASCII
are never ASCII ones).

Each returns None for an array that is not plain strings without nulls: the caller's regex
then decides, as before.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pyarrow as pa

from tasks.common.arrow_text import string_parts

BLOCK_BYTES = 1 << 22  # the bytes of the texts looked at together


def _texts_with(values: pa.Array, picked: Callable[[np.ndarray], np.ndarray]) -> np.ndarray | None:
    """Whether each text holds a byte ``picked`` marks (given the bytes of consecutive texts, in
    order, it marks each). A block of texts at a time (about ``BLOCK_BYTES`` of their bytes), so
    the marks and ``picked``'s temporaries stay a few bytes per byte of one block, not of the
    whole column; each text's marks are reduced where it starts (empty texts hold none), or,
    when marks are few, each mark's text is found by its position (3.3 ms down to 0.3 ms for the
    odd whitespace of a statement's 99,000 references)."""
    if not pa.types.is_string(values.type) or values.null_count:
        return None
    offsets, raw = string_parts(values)
    found = np.zeros(len(values), dtype=bool)
    begin = 0
    while begin < len(values):
        end = int(np.searchsorted(offsets, offsets[begin] + BLOCK_BYTES, side="right")) - 1
        end = min(max(end, begin + 1), len(values))
        starts = offsets[begin:end]
        filled = np.flatnonzero(offsets[begin + 1 : end + 1] > starts)
        if len(filled):
            marks = picked(raw[offsets[begin] : offsets[end]])
            if np.count_nonzero(marks) * 8 < len(filled):
                # Few marks (odd whitespace is rare): each one's text found by a binary
                # search, where a reduction reads every text's marks.
                at = np.flatnonzero(marks) + offsets[begin]
                texts = np.searchsorted(offsets[begin : end + 1], at, side="right") - 1
                found[begin + texts] = True
            else:
                starts_filled = starts[filled] - offsets[begin]
                found[begin + filled] = np.logical_or.reduceat(marks, starts_filled)
        begin = end
    return found


def with_digit(values: pa.Array) -> np.ndarray | None:
    """What ``match_substring_regex(values, "[0-9]")`` gives (see the module docstring)."""
    return _texts_with(values, lambda raw: (raw - np.uint8(48)) < 10)


def with_other_whitespace(values: pa.Array) -> np.ndarray | None:
    r"""What ``match_substring_regex(values, r"\s\s|[^\S ]")`` gives, or more: true for each
    text with two whitespace characters in a row or one that is not a space, and perhaps for a
    text ending in whitespace before one starting with it (the bytes of a block of texts are
    read as one run). Only for finding the texts a whitespace rewrite may change: one it leaves
    as it was can be among them."""

    def picked(raw: np.ndarray) -> np.ndarray:
        # RE2's \s is tab, newline, form feed, carriage return (9, 10, 12, 13: not the
        # vertical tab, 11) and the space: compared for, not looked up in a table per byte
        # (each look-up a gather; the comparisons are whole-array passes).
        marked: np.ndarray = (raw - np.uint8(9)) < 5
        marked &= raw != 11
        space = marked | (raw == 32)
        marked[:-1] |= space[:-1] & space[1:]
        return marked

    return _texts_with(values, picked)
