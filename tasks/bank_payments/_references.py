"""Document numbers as people type them on a bank transfer, found by whole columns.

The biller's own numbering is learned from what is open (``INV-0042``, ``PR-98``: a prefix and a
number). A line's payer, reference and description are searched for each prefix, or a word
people write for it (``Invoice``, ``Inv.``, common misspellings such as ``Invioce``; settings add
more), in any case, with or without a hyphen, spaces or leading zeros: ``inv 42``,
``INV0042``, ``Invoice no. 42`` all become the canonical ``INV-42``. Several numbers in one line
are all found, in the order they appear. A number the bank cut short (Faster Payments keeps 18
characters) is simply a different number, and so not an exact match: suggestions take over.

The biller's free-text references on payment requests (``ACME-JUNE``) match a line's word, or two
adjacent words, compared without case or punctuation.

Both searches run once per distinct payer, reference and description (the columns are
dictionary-encoded) and are spread back to the lines (:func:`references_by_line`); numbers are
looked for only in texts that hold a digit.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments import _bytes
from tasks.bank_payments._kernels import encoded, mask
from tasks.bank_payments._plain_numbers import plain_numbers
from tasks.bank_payments._single_numbers import (
    MARK,
    _alternatives,
    _number_pattern,
    _one_word_at_most,
    _single_numbers,
)

MIN_REFERENCE = 4  # a biller's free-text reference shorter than this would match common words
_NUMBER = re.compile(r"^([A-Za-z]+)[-_ /.#]*0*([0-9]+)$")
DEFAULT_ALIASES: Mapping[str, tuple[str, ...]] = {
    "INV": ("INVOICE", "INVIOCE", "INVOCIE", "INOVICE", "INVOCE", "INVOIC", "INVC", "INV"),
    "PR": ("PAYMENT REQUEST", "PAYREQ", "PR"),
}


def canonical(number: str) -> str | None:
    """``INV-0042`` → ``INV-42``; None for a number without a letter prefix."""
    found = _NUMBER.match(number.strip())
    if found is None:
        return None
    return f"{found.group(1).upper()}-{int(found.group(2))}"


def canonical_numbers(numbers: pa.Array) -> pa.Array:
    """:func:`canonical` of every number at once (empty where there is none)."""
    text = pc.utf8_trim_whitespace(numbers)
    ok = pc.match_substring_regex(text, r"^[A-Za-z]+[-_ /.#]*[0-9]+$")
    prefix = pc.utf8_upper(pc.replace_substring_regex(text, r"^([A-Za-z]+).*$", r"\1"))
    digits = pc.replace_substring_regex(text, r"^[A-Za-z]+[-_ /.#]*0*([0-9]+)$", r"\1")
    return pc.if_else(pc.fill_null(ok, False), pc.binary_join_element_wise(prefix, digits, "-"), "")


def plain_texts(texts: pa.Array) -> pa.Array:
    """:func:`plain` of every text at once."""
    return pc.replace_substring_regex(pc.utf8_upper(texts), r"[^A-Z0-9]", "")


def plain(text: str) -> str:
    """Letters and digits only, upper case (``acme-june`` → ``ACMEJUNE``)."""
    return re.sub(r"[^A-Z0-9]", "", text.upper())


def alias_table(
    numbers: Iterable[str], extra: Mapping[str, Iterable[str]] | None = None
) -> dict[str, list[str]]:
    """Prefix → the words that stand for it, for the prefixes the open items use
    (``numbers`` in canonical form, ``INV-42``, or the prefixes themselves)."""
    prefixes = {c.split("-")[0] for c in numbers if c}
    table: dict[str, list[str]] = {}
    for prefix in sorted(prefixes):
        words = {prefix, *DEFAULT_ALIASES.get(prefix, ())}
        words.update(w.upper() for w in (extra or {}).get(prefix, ()))
        table[prefix] = sorted(words, key=lambda w: (-len(w), w))
    return table


def mark_numbers(texts: pa.Array, aliases: Mapping[str, list[str]]) -> pa.Array:
    """The texts with each number found replaced by `` §PREFIX-N ``."""
    marked = pc.utf8_upper(texts)
    for prefix, words in aliases.items():
        pattern = _number_pattern(_alternatives(words))
        replacement = rf"\1 {MARK}{prefix}-\2 \3"
        # Twice: adjacent numbers share the character between them, which one pass consumes.
        marked = pc.replace_substring_regex(marked, pattern=pattern, replacement=replacement)
        marked = pc.replace_substring_regex(marked, pattern=pattern, replacement=replacement)
    return marked


def _no_numbers() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "line": pd.Series([], dtype="int64"),
            "key": pd.Series([], dtype=object),
            "order": pd.Series([], dtype="int64"),
        }
    )


def marked_numbers(texts: pa.Array, aliases: Mapping[str, list[str]]) -> pd.DataFrame:
    """:func:`find_numbers` by marking every number (:func:`mark_numbers`) and splitting the
    texts into words: any number of numbers per text."""
    words = pc.split_pattern_regex(mark_numbers(texts, aliases), pattern=r"\s+")
    flat = pc.list_flatten(words)
    parents = pc.list_parent_indices(words)
    chosen = pc.starts_with(flat, MARK)
    keys = pc.utf8_slice_codeunits(pc.filter(flat, chosen), 1)
    frame = pd.DataFrame(
        {
            "line": np.asarray(pc.filter(parents, chosen).to_numpy(), dtype=np.int64),
            "key": keys.to_numpy(zero_copy_only=False),
        }
    )
    frame["order"] = frame.groupby("line").cumcount()
    return frame.drop_duplicates(["line", "key"])


def _separable(aliases: Mapping[str, list[str]]) -> bool:
    """Whether counting the prefix words in a text bounds how many numbers it holds: every word
    letters (and single spaces), in one prefix only, and no word starting where another word's
    later part starts (``PAYMENT REQUEST`` and a word ``REQUEST...``): then every number found
    has a word of its own that a count of the words sees."""
    words = [w for ws in aliases.values() for w in ws]
    if len(set(words)) < len(words):
        return False
    if not all(re.fullmatch(r"[A-Z]+(?: [A-Z]+)*", w) for w in words):
        return False
    tails = [" ".join(w.split()[i:]) for w in words for i in range(1, len(w.split()))]
    return not any(t.startswith(o) or o.startswith(t) for t in tails for o in words)


def find_numbers(texts: pa.Array, aliases: Mapping[str, list[str]]) -> pd.DataFrame:
    """Every number found: ``line`` (index into ``texts``), ``order`` (position), ``key``.

    Nearly every text names one number: where the prefix words cannot hide a second one
    (:func:`_separable`), texts with at most one prefix word (and no ``§`` of their own) take
    one extraction; the rest are marked and split (:func:`marked_numbers`)."""
    if not aliases or len(texts) == 0:
        return _no_numbers()
    if not _separable(aliases):
        return marked_numbers(texts, aliases)
    upper = pc.utf8_upper(texts)
    plain = plain_numbers(upper, aliases)
    # A text that is a number written plainly (nearly every reference) is a prefix word, a
    # separator and digits: one word and no mark, so its words are not counted.
    counted = np.arange(len(texts)) if plain is None else np.flatnonzero(~plain[0])
    single = np.ones(len(texts), dtype=bool)
    if len(counted):
        some = upper if len(counted) == len(texts) else upper.take(pa.array(counted))
        single[counted] = _one_word_at_most(some, aliases) & ~mask(pc.match_substring(some, MARK))
    simple, rest = np.flatnonzero(single), np.flatnonzero(~single)
    frames = []
    if len(simple):
        every = len(simple) == len(texts)
        of_simple = None if plain is None else (plain[0][simple], plain[1])
        found = _single_numbers(
            upper if every else upper.take(pa.array(simple)), aliases, of_simple
        )
        found["line"] = simple[found["line"].to_numpy(dtype=np.int64)]
        frames.append(found)
    if len(rest):
        found = marked_numbers(texts.take(pa.array(rest)), aliases)
        found["line"] = rest[found["line"].to_numpy(dtype=np.int64)]
        frames.append(found)
    return pd.concat(frames, ignore_index=True) if len(frames) > 1 else frames[0]


def find_client_references(texts: pa.Array, references: Iterable[str]) -> pd.DataFrame:
    """Lines naming one of the biller's free-text references: ``line``, ``order``, ``key``
    (the reference in :func:`plain` form)."""
    wanted = {plain(r) for r in references if len(plain(r)) >= MIN_REFERENCE}
    if not wanted or len(texts) == 0:
        return pd.DataFrame(
            {
                "line": pd.Series([], dtype="int64"),
                "order": pd.Series([], dtype="int64"),
                "key": pd.Series([], dtype=object),
            }
        )
    words = pc.split_pattern_regex(pc.utf8_upper(texts), pattern=r"[^A-Z0-9]+", max_splits=None)
    flat = np.asarray(pc.list_flatten(words).to_numpy(zero_copy_only=False), dtype=object)
    parents = np.asarray(pc.list_parent_indices(words).to_numpy(), dtype=np.int64)
    pairs = np.empty(len(flat), dtype=object)
    if len(flat) > 1:
        same = parents[1:] == parents[:-1]
        pairs[:-1] = np.where(same, flat[:-1] + flat[1:], "")
    pairs[-1:] = ""
    wanted_array = pa.array(sorted(wanted))
    single = np.asarray(
        pc.is_in(pa.array(flat, pa.string()), wanted_array).to_numpy(zero_copy_only=False),
        dtype=bool,
    )
    double = np.asarray(
        pc.is_in(pa.array(pairs, pa.string()), wanted_array).to_numpy(zero_copy_only=False),
        dtype=bool,
    )
    hits = np.flatnonzero(single | double)
    keys = np.where(single[hits], flat[hits], pairs[hits])
    frame = pd.DataFrame({"line": parents[hits], "key": keys})
    frame["order"] = frame.groupby("line").cumcount() + 1000  # after numbers of the same line
    return frame.drop_duplicates(["line", "key"])


def _empty() -> pd.DataFrame:
    return pd.DataFrame(
        {
            "line": pd.Series([], dtype="int64"),
            "order": pd.Series([], dtype="int64"),
            "key": pd.Series([], dtype=object),
        }
    )


def _per_value(
    values: pa.Array, aliases: Mapping[str, list[str]], references: list[str]
) -> pd.DataFrame | None:
    """Numbers and references in each distinct text (``line`` is the value's index here); None
    when there are none (no empty frame made: most payers name nothing)."""
    frames = []
    words = "|".join(re.escape(w).replace("\\ ", r"\s+") for ws in aliases.values() for w in ws)
    # A number is a prefix word and digits: only texts with both are searched (the words
    # looked for only in the texts with a digit, found from their bytes where it can be).
    digits = _bytes.with_digit(values)
    if digits is None:
        digits = mask(pc.match_substring_regex(values, "[0-9]"))
    with_digit = np.flatnonzero(digits)
    with_digit = with_digit[
        mask(
            pc.match_substring_regex(
                values.take(pa.array(with_digit)), words or "$^", ignore_case=True
            )
        )
    ]
    if len(with_digit) and aliases:
        numbers = find_numbers(values.take(pa.array(with_digit)), aliases)
        numbers["line"] = with_digit[numbers["line"].to_numpy(dtype=np.int64)]
        frames.append(numbers)
    if references:  # (without any, an empty frame: not made, as it would be left out)
        frames.append(find_client_references(values, references))
    found = [f for f in frames if not f.empty]
    return pd.concat(found, ignore_index=True) if found else None


def _spread(
    found: pd.DataFrame, keys: np.ndarray, texts: np.ndarray, rows: np.ndarray
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """What each of ``rows`` names (``line``, ``order``, key code): the ``found`` entries of its
    text (``texts``: each row's text index, as ``line`` in ``found``; ``keys`` their key
    codes), repeated per row by whole arrays (no join)."""
    values = found["line"].to_numpy(dtype=np.int64)
    by_value = np.argsort(values, kind="stable")
    count = np.bincount(values, minlength=int(texts.max(initial=0)) + 1)
    start = np.r_[0, np.cumsum(count)[:-1]]
    per_row = count[texts]
    first = np.repeat(start[texts], per_row)
    step = np.arange(len(first)) - np.repeat(np.cumsum(per_row) - per_row, per_row)
    at = by_value[first + step]
    order = found["order"].to_numpy(dtype=np.int64)[at]
    return np.repeat(rows, per_row), order, keys[at]


def references_by_line(
    columns: Iterable[pa.Array | pa.ChunkedArray],
    aliases: Mapping[str, list[str]],
    references: Iterable[str],
    wanted: np.ndarray,
) -> pd.DataFrame:
    """What the lines in ``wanted`` name, over their texts in order: ``line``, ``order``,
    ``key`` — a number's canonical form (``INV-42``) or a reference's :func:`plain` form.

    Each distinct text is searched once; what it names is spread to its lines by index, with
    the keys as codes into the keys found (text is made once per line at the end)."""
    refs = list(references)
    named_by: list[tuple[pd.DataFrame, np.ndarray, np.ndarray, int]] = []
    chosen = np.flatnonzero(wanted)
    for position, column in enumerate(columns):
        codes = encoded(column)
        # Only the texts of the lines wanted (a statement's spending never pays an invoice):
        # each wanted line's text index, gathered once rather than masks over every line.
        texts = np.asarray(codes.indices.to_numpy(zero_copy_only=False))[chosen].astype(np.int64)
        used = np.flatnonzero(np.bincount(texts, minlength=len(codes.dictionary)))
        found = _per_value(codes.dictionary.take(pa.array(used)), aliases, refs)
        if found is None:
            continue
        found["line"] = used[found["line"].to_numpy(dtype=np.int64)]
        named = np.zeros(len(codes.dictionary), dtype=bool)
        named[found["line"].to_numpy(dtype=np.int64)] = True
        naming = named[texts]
        if naming.any():
            named_by.append((found, texts[naming], chosen[naming], position))
    if not named_by:
        return _empty()
    vocabulary = encoded(pa.chunked_array([pa.array(f["key"], pa.string()) for f, *_ in named_by]))
    key_codes = np.asarray(vocabulary.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    lines, orders, keys = [], [], []
    offset = 0
    for found, texts, rows, position in named_by:
        line, order, key = _spread(found, key_codes[offset : offset + len(found)], texts, rows)
        offset += len(found)
        lines.append(line)
        orders.append(order + position * 10_000)
        keys.append(key)
    line, order, key = np.concatenate(lines), np.concatenate(orders), np.concatenate(keys)
    # (line, order) is unique: each text's numbers are numbered, and each column is offset.
    ranked = np.lexsort((order, line))
    line, order, key = line[ranked], order[ranked], key[ranked]
    first = ~pd.Index(line * (len(vocabulary.dictionary) + 1) + key).duplicated()
    line, order, key = line[first], order[first], key[first]
    return pd.DataFrame(
        {
            "line": line,
            "key": pd.arrays.ArrowExtensionArray(vocabulary.dictionary.take(pa.array(key))),
            "order": order,
        }
    )
