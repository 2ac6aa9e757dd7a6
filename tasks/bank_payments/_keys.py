"""A stable key for every statement line, so a line is recorded once whichever file brings it.

The bank's transaction id where it gives one (with the account): ``id:<account>:<id>``.
Otherwise a 64-bit digest of the account, date, amount and text (payer, reference, description;
upper case, runs of spaces as one), plus the line's occurrence among identical lines of the
file: two identical coffees on one day are ``<digest>-0`` and ``<digest>-1``. A file dropped
twice gives the same keys; a file overlapping an earlier one gives the earlier lines the same
keys and only the new ones new keys (per identical group, by count: a third identical coffee is
``<digest>-2``).

The digest must never change (keys are kept in the ledger), so it is spelled out here rather
than borrowed from a library's internals (pandas' hashing, for one, is not promised to stay the
same): each distinct text's UTF-8 bytes are hashed with 64-bit FNV-1a, the parts of a line are
folded with the same FNV-1a step, and the result goes through the splitmix64 finaliser — all by
whole arrays with numpy. ``tests/bank_payments`` pins known keys.
"""

from __future__ import annotations

import binascii

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc

from tasks.bank_payments._bytes import with_other_whitespace
from tasks.bank_payments._kernels import encoded, mask, strings

_FNV_OFFSET = np.uint64(0xCBF29CE484222325)
_FNV_PRIME = np.uint64(0x100000001B3)
KEY_PARTS = ("account", "payer", "reference", "text")
HEX_BLOCK = 1 << 16  # digests turned into hex at a time
ID_PREFIX = "id:"  # keys made of the bank's transaction id; the others are digests


def fnv1a(texts: pa.Array) -> np.ndarray:
    """64-bit FNV-1a of each text's UTF-8 bytes, for all texts at once: the texts are walked
    byte by byte together, longest first, so each step touches only those still going."""
    texts = texts.cast(pa.large_string()) if not pa.types.is_large_string(texts.type) else texts
    if texts.offset:
        texts = pa.concat_arrays([texts])  # buffers from position 0
    offsets = np.frombuffer(texts.buffers()[1], dtype=np.int64)[: len(texts) + 1]
    data = texts.buffers()[2]
    buffer = np.frombuffer(data, dtype=np.uint8) if data is not None else np.zeros(0, np.uint8)
    lengths = np.diff(offsets)
    longest = int(lengths.max(initial=0))
    # Longest first, ties in order. Lengths as 16-bit numbers where they fit: numpy sorts those
    # by radix (a third of the time of sorting them as 64-bit numbers), to the same order.
    shortfall = longest - lengths
    order = np.argsort(
        shortfall.astype(np.uint16) if longest < 1 << 16 else shortfall, kind="stable"
    )
    starts = offsets[:-1][order]
    going = np.searchsorted(-lengths[order], -np.arange(longest), "left")
    state = np.full(len(texts), _FNV_OFFSET, dtype=np.uint64)
    with np.errstate(over="ignore"):
        for step, count in enumerate(going):
            state[:count] = (state[:count] ^ buffer[starts[:count] + step]) * _FNV_PRIME
    digests = np.empty_like(state)
    digests[order] = state
    return digests


def _text_digests(values: pa.Array) -> np.ndarray | np.uint64:
    """FNV-1a of each distinct canonical text, one per row (see the module docstring); one
    number for a column with one text on every line."""
    codes = encoded(values)
    canonical = pc.utf8_trim_whitespace(_single_spaced(pc.utf8_upper(codes.dictionary)))
    digests = fnv1a(canonical)
    if len(digests) == 1 and not codes.indices.null_count:
        return np.uint64(digests[0])  # one text on every line (no such column)
    if not codes.indices.null_count:
        # Arrow's take reads the 32-bit indices as they are (numpy widened them to 64 bits
        # first): half the time for a million lines.
        taken: np.ndarray = pc.take(pa.array(digests), codes.indices).to_numpy()
        return taken
    by_row: np.ndarray = digests[
        np.asarray(codes.indices.to_numpy(zero_copy_only=False), dtype=np.int64)
    ]
    return by_row


# A run of whitespace that is not one plain space: two or more whitespace characters, or one
# that is not a space. The texts without one are those replacing ``\s+`` by " " leaves as
# they are (it uses RE2's own ``\s``, so both agree on what whitespace is).
_OTHER_WHITESPACE = r"\s\s|[^\S ]"


def _single_spaced(texts: pa.Array) -> pa.Array:
    """Each run of whitespace as one space. Only the few texts with such a run are rewritten:
    a regex replace over every distinct text cost more than the rest of a text's digest. They
    are found from the bytes (``_bytes``; perhaps with a few more that the rewrite leaves as
    they were), where a regex search over every text cost a third of the digest."""
    found = with_other_whitespace(texts)
    if found is None:
        needs = pc.match_substring_regex(texts, _OTHER_WHITESPACE)
        if not pc.any(needs).as_py():
            return texts
    elif not found.any():
        return texts
    else:
        needs = pa.array(found)
    rewritten = pc.replace_substring_regex(texts.filter(needs), pattern=r"\s+", replacement=" ")
    return pc.replace_with_mask(texts, needs, rewritten)


def _fold(state: np.ndarray, word: np.ndarray | np.uint64) -> np.ndarray:
    """One FNV-1a step of every line's state with its word, in place (a fresh array per step
    of a million lines cost as much as the step)."""
    np.bitwise_xor(state, word, out=state)
    np.multiply(state, _FNV_PRIME, out=state)
    return state


def _finalise(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser, in place (``x`` is used up)."""
    work = np.empty_like(x)
    for shift, factor in ((30, 0xBF58476D1CE4E5B9), (27, 0x94D049BB133111EB)):
        np.right_shift(x, np.uint64(shift), out=work)
        np.bitwise_xor(x, work, out=x)
        np.multiply(x, np.uint64(factor), out=x)
    np.right_shift(x, np.uint64(31), out=work)
    np.bitwise_xor(x, work, out=x)
    return x


def line_digests(lines: pa.Table) -> np.ndarray:
    """The 64-bit digest of each line's content (identical lines share it)."""
    n = lines.num_rows
    days = np.asarray(lines.column("date").cast(pa.int32()).to_numpy(), dtype=np.int64)
    amount = np.asarray(lines.column("amount").to_numpy(), dtype=np.int64)
    with np.errstate(over="ignore"):
        # The account is one text in most files: its step is then one number's, the same for
        # every line, and the lines' states start from it.
        account = _text_digests(lines.column("account"))
        state = np.full(n, _FNV_OFFSET, dtype=np.uint64)
        if isinstance(account, np.ndarray):
            _fold(state, account)
        else:
            state[:] = (_FNV_OFFSET ^ account) * _FNV_PRIME
        # int64 to uint64 keeps the bits (two's complement), as the cast did.
        _fold(state, days.view(np.uint64))
        _fold(state, amount.view(np.uint64))
        for name in KEY_PARTS[1:]:
            _fold(state, _text_digests(lines.column(name)))
        return _finalise(state)


def _repeated(digests: np.ndarray) -> np.ndarray:
    """Which digests occur more than once. A digest alone in its bucket of low bits is unique
    for sure; those sharing one are bucketed again by higher bits (equal digests share every
    bucket), and only the few still sharing are compared exactly."""
    shared = np.flatnonzero(_crowded(digests))
    shared = shared[_crowded(digests[shared] >> np.uint64(32))]
    repeated = np.zeros(len(digests), dtype=bool)
    repeated[shared] = pd.Series(digests[shared]).duplicated(keep=False).to_numpy()
    return repeated


def _crowded(values: np.ndarray) -> np.ndarray:
    """Whether each value's bucket of low bits (counted by one ``bincount``) holds another.
    About two buckets per value: four left fewer values crowded (22 % of a million digests,
    not 39 %) but cost more than they saved, counting in a table twice the size."""
    bits = int(np.clip(np.ceil(np.log2(max(len(values), 1))) + 1, 10, 22))
    bucket = (values & np.uint64((1 << bits) - 1)).astype(np.intp)
    # Which buckets hold more than one, as bytes: gathering from that (4 MB at most) per
    # value is far kinder to the cache than gathering from the counts themselves (32 MB).
    crowded = np.bincount(bucket, minlength=1 << bits) > 1
    by_value: np.ndarray = crowded[bucket]
    return by_value


def _occurrences(digests: np.ndarray) -> np.ndarray:
    """Each line's count of earlier identical lines (0 for most)."""
    repeated = _repeated(digests)
    occurrence = np.zeros(len(digests), dtype=np.int64)
    if repeated.any():
        chosen = np.flatnonzero(repeated)
        same = digests[chosen]
        occurrence[chosen] = pd.Series(same).groupby(same, sort=False).cumcount().to_numpy()
    return occurrence


def _digest_keys(digests: np.ndarray, occurrence: np.ndarray) -> pa.Array:
    """``<16 hex digits>-<occurrence>`` for every line, built from whole buffers."""
    n = len(digests)
    # Big-endian bytes straight to hex bytes: hexlify reads the array's buffer (no str, no
    # re-encoding), and it is the same 16 lower-case digits as ``format(d, "016x")``.
    big_endian = digests.astype(">u8") if np.little_endian else digests
    if occurrence.max(initial=0) < 10:
        # One 18-byte record per key: the 16 digits, then "-" and the digit as one 2-byte
        # little-endian number ("-" in the low byte): two field copies fill the records,
        # where byte columns of a 2-D array took three strided ones.
        cells = np.empty(n, dtype=[("hex", "S16"), ("tail", "<u2")])
        hexed = cells["hex"]
        # A block of digits at a time: each block's hex (1 MB) is copied while in cache, and
        # the next block's reuses its memory, where the whole (16 MB) was a fresh allocation.
        for start in range(0, n, HEX_BLOCK):
            block = big_endian[start : start + HEX_BLOCK]
            hexed[start : start + len(block)] = np.frombuffer(
                binascii.hexlify(block.data), dtype="S16"
            )
        cells["tail"] = (occurrence.astype(np.uint16) + ord("0")) << 8 | ord("-")
        offsets = np.arange(0, 18 * n + 1, 18, dtype=np.int32)
        return pa.StringArray.from_buffers(n, pa.py_buffer(offsets), pa.py_buffer(cells))
    hexed = np.frombuffer(binascii.hexlify(big_endian.data), dtype="S16")
    return pc.binary_join_element_wise(
        pa.array(hexed).cast(pa.string()), pc.cast(pa.array(occurrence), pa.string()), "-"
    )


def line_keys(lines: pa.Table) -> pa.Array:
    """One key per line (see the module docstring), by whole columns."""
    if lines.num_rows == 0:
        return pa.array([], pa.string())
    digests = line_digests(lines)
    hashed = _digest_keys(digests, _occurrences(digests))
    txn = encoded(lines.column("txn_id"))
    with_id = pc.not_equal(pc.utf8_trim_whitespace(txn.dictionary), "")
    if not pc.any(with_id).as_py():  # no line has one (most banks): nothing to look at by line
        return hashed
    has_id = mask(pc.take(with_id, txn.indices))
    by_id = pc.binary_join_element_wise(
        ID_PREFIX[:-1], strings(lines.column("account")), strings(txn), ":"
    )
    return pc.if_else(pa.array(has_id), by_id, hashed)
