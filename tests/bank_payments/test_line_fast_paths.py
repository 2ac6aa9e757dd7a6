"""Whole-array shortcuts over a statement's lines give what the general way gives: rows' lengths
from the offsets buffers, classes looked up for the credits only, dates refused without a
format per line, the running balance read once, outcomes by arithmetic on the masks, keys'
heads, digests, crowded buckets and hex made in blocks."""

from __future__ import annotations

import binascii
import random
from datetime import date

import numpy as np
import pandas as pd
import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tasks.bank_payments import StatementRefused, _bytes, _keys, find_profile, read_statement_bytes
from tasks.bank_payments._classify import CLASSES, ClassifyRules, _hits, class_codes, classify
from tasks.bank_payments._dedup import _heads
from tasks.bank_payments._match import CODE, DUPLICATE, NOT_APPLICABLE, UNMATCHED, match_lines
from tasks.bank_payments._owed import items_frame
from tasks.bank_payments._raw import _row_lengths
from tasks.bank_payments._read import balance_issues
from tasks.bank_payments._statement import SCHEMA, Statement

TODAY = date(2026, 11, 24)
WORDS = ["ACME", "ADFIN", "ADFIN-PO-7", "REFUND", "INTEREST", "inv-42", "", "  ", "Café", "TFR"]


def _texts(rng: random.Random, count: int, nulls: bool = False) -> pa.Array:
    values: list[str | None] = [
        " ".join(rng.choice(WORDS) for _ in range(rng.randint(0, 3))) for _ in range(count)
    ]
    if nulls:
        values = [None if rng.random() < 0.1 else v for v in values]
    return pa.array(values, pa.string())


@pytest.mark.parametrize("seed", range(4))
def test_row_lengths_from_the_offsets_are_those_arrow_measures(seed: int) -> None:
    rng = random.Random(seed)
    columns = [_texts(rng, 600).slice(seed, 500) for _ in range(5)]
    wanted = np.sum([np.asarray(pc.binary_length(c)) for c in columns], axis=0)
    found = _row_lengths(columns)
    assert found.tolist() == wanted.tolist()
    with_nulls = [*columns[:4], _texts(rng, 500, nulls=True)]
    general = _row_lengths(with_nulls)
    lengths = [np.asarray(pc.fill_null(pc.binary_length(c), 0)) for c in with_nulls]
    assert general.tolist() == np.sum(lengths, axis=0).tolist()


def _lines(seed: int, count: int, nulls: bool = False) -> pa.Table:
    rng = random.Random(seed)
    amounts = [rng.choice([-500, -1, 0, 1, 250, 99_999]) for _ in range(count)]
    columns = {
        "line": pa.array(range(2, count + 2), pa.int64()),
        "account": pa.array([""] * count).dictionary_encode(),
        "date": pa.array([date(2026, 11, 1 + n % 20) for n in range(count)], pa.date32()),
        "amount": pa.array(amounts, pa.int64()),
        "payer": _texts(rng, count, nulls).dictionary_encode(),
        "reference": _texts(rng, count, nulls).dictionary_encode(),
        "text": _texts(rng, count, nulls).dictionary_encode(),
        "type": pa.array(
            [rng.choice(["TFR", "FP", " INT "]) for _ in range(count)]
        ).dictionary_encode(),
        "txn_id": pa.array([""] * count).dictionary_encode(),
        "balance": pa.nulls(count, pa.int64()),
    }
    return pa.table(columns, schema=SCHEMA)


def _classes_for_every_line(lines: pa.Table, rules: ClassifyRules) -> np.ndarray:
    """The classes as they were decided before only the credits were looked up: every line's
    patterns, then debits by amount."""
    every = np.arange(lines.num_rows)
    amount = np.asarray(lines.column("amount").to_numpy())
    found = _hits(
        lines.column("payer"),
        every,
        payout=[rules.payout_payers, rules.payout_references],
        other=[rules.other_credit_text],
    )
    for name in ("reference", "text"):
        found = found | _hits(
            lines.column(name),
            every,
            payout=[rules.payout_references],
            other=[rules.other_credit_text],
        )
    kind = pc.utf8_trim_whitespace(lines.column("type").combine_chunks().dictionary_decode())
    found = found | _hits(kind, every, payout=[], other=[rules.other_credit_types])
    codes = np.zeros(len(amount), dtype=np.int8)
    codes[((found & 2) > 0) | (amount == 0)] = CLASSES.index("other_credit")
    codes[(found & 1) > 0] = CLASSES.index("provider_payout")
    codes[amount < 0] = CLASSES.index("debit")
    return codes


@pytest.mark.parametrize("nulls", [False, True])
@pytest.mark.parametrize("seed", range(3))
def test_classes_looked_up_for_credits_are_those_of_every_line(seed: int, nulls: bool) -> None:
    lines = _lines(seed, 2_000, nulls)
    rules = ClassifyRules()
    assert class_codes(classify(lines, rules)).tolist() == (
        _classes_for_every_line(lines, rules).tolist()
    )


@pytest.mark.parametrize("seed", range(3))
def test_outcomes_by_arithmetic_are_those_by_masks(seed: int) -> None:
    lines = _lines(seed, 1_000)
    classes = classify(lines)
    skip = np.random.default_rng(seed).random(lines.num_rows) < 0.3
    matches = match_lines(lines, classes, items_frame([]), skip=skip)
    wanted = np.full(lines.num_rows, CODE[NOT_APPLICABLE], dtype=np.int8)
    wanted[skip] = CODE[DUPLICATE]
    wanted[(class_codes(classes) == CLASSES.index("customer_payment")) & ~skip] = CODE[UNMATCHED]
    assert matches.outcome.dtype == np.int8
    assert matches.outcome.tolist() == wanted.tolist()


def _balance_issues_as_before(table: pa.Table) -> list[tuple[int, str]]:
    """The running-balance check as it was, every mask made for every line."""
    accounts = np.asarray(
        table.column("account").combine_chunks().indices.to_numpy(zero_copy_only=False),
        dtype=np.int64,
    )
    balance_col = table.column("balance")
    known = np.asarray(pc.is_valid(balance_col).to_numpy(zero_copy_only=False), dtype=bool)
    balance = np.asarray(pc.fill_null(balance_col, 0).to_numpy(), dtype=np.int64)
    amount = np.asarray(table.column("amount").to_numpy(), dtype=np.int64)
    same = (accounts[1:] == accounts[:-1]) & known[1:] & known[:-1]
    ascending = same & (balance[1:] - balance[:-1] != amount[1:])
    descending = same & (balance[:-1] - balance[1:] != amount[:-1])
    wrong, oldest_first = (
        (ascending, True) if ascending.sum() <= descending.sum() else (descending, False)
    )
    lines = table.column("line").to_pylist()
    return [(lines[i + 1 if oldest_first else i], "") for i in np.flatnonzero(wrong)]


@pytest.mark.parametrize("accounts", [1, 3])
@pytest.mark.parametrize("missing", [False, True])
@pytest.mark.parametrize("newest_first", [False, True])
def test_the_running_balance_is_checked_as_before(
    accounts: int, missing: bool, newest_first: bool
) -> None:
    rng = np.random.default_rng(accounts * 4 + missing * 2 + newest_first)
    n = 3_000
    amount = rng.integers(-10_000, 10_000, n)
    balance = np.cumsum(amount)
    balance[rng.random(n) < 0.01] += 7  # a few that do not add up
    if newest_first:
        amount, balance = amount[::-1].copy(), balance[::-1].copy()
    mask = rng.random(n) < 0.05 if missing else None
    names = [f"acct {min(i * accounts // n, accounts - 1)}" for i in range(n)]
    table = _lines(0, n).set_column(1, "account", pa.array(names).dictionary_encode())
    table = table.set_column(3, "amount", pa.array(amount, pa.int64()))
    table = table.set_column(9, "balance", pa.array(balance, pa.int64(), mask=mask))
    statement = Statement("s.csv", "", find_profile("starling"), "", "utf-8", table)
    found = [(b.line, "") for b in balance_issues(statement)]
    assert found == _balance_issues_as_before(table)
    assert found  # some do not add up


def test_dates_all_in_one_format_are_refused_by_line_only_when_they_should_be() -> None:
    profile = find_profile("generic")
    header = "Date,Type,Counterparty,Reference,Amount,Balance\n"
    second_format = "".join(f"0{n}/11/2026,T,A,R,1.00,\n" for n in range(1, 8))
    statement = read_statement_bytes(
        (header + second_format).encode(), where="g.csv", profile=profile, today=TODAY
    )
    assert statement.count == 7 and not statement.bad_lines
    mixed = second_format + "2026-11-08,T,A,R,1.00,\n" + "31/11/2026,T,A,R,1.00,\n"
    statement = read_statement_bytes(
        (header + mixed).encode(), where="g.csv", profile=profile, today=TODAY,
        on_bad_lines="skip",
    )  # fmt: skip
    assert [(b.line, b.reason.split(" (")[0]) for b in statement.bad_lines] == [
        (9, "the date is written differently from the rest of the file"),
        (10, "date '31/11/2026' is not a valid date"),
    ]
    with pytest.raises(StatementRefused):
        read_statement_bytes((header + mixed).encode(), where="g.csv", profile=profile, today=TODAY)


def test_heads_of_keys_of_one_length_are_the_general_heads() -> None:
    rng = random.Random(5)
    keys = pa.array([f"{rng.getrandbits(64):016x}-{rng.randrange(10)}" for _ in range(2_000)])
    mixed = pa.array([*keys.to_pylist(), "id:acct:TX1"])  # one of another length
    fixed = _heads(keys)
    general = _heads(mixed)[:-1]
    assert fixed.tolist() == general.tolist()


def _fnv(text: str) -> int:
    state = 0xCBF29CE484222325
    for byte in text.encode():
        state = ((state ^ byte) * 0x100000001B3) % (1 << 64)
    return state


def test_digests_are_fnv1a_of_each_text_whatever_its_length() -> None:
    rng = random.Random(6)
    texts = ["", "a", "Café", *(rng.choice(WORDS) * rng.randint(1, 9) for _ in range(300))]
    texts.append("x" * 70_000)  # longer than a 16-bit length
    digests = _keys.fnv1a(pa.array(texts))
    assert digests.tolist() == [_fnv(t) for t in texts]
    short = _keys.fnv1a(pa.array(texts[:-1]))  # lengths sorted as 16-bit numbers
    assert short.tolist() == [_fnv(t) for t in texts[:-1]]


@pytest.mark.parametrize("block", [1, 7, 1 << 16])
def test_keys_made_in_blocks_are_the_digits_and_the_occurrence(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_keys, "HEX_BLOCK", block)
    rng = np.random.default_rng(block)
    digests = rng.integers(0, 1 << 63, 1_000, dtype=np.int64).astype(np.uint64) * np.uint64(3)
    occurrence = rng.integers(0, 10, 1_000)
    keys = _keys._digest_keys(digests, occurrence)
    assert keys.to_pylist() == [
        f"{int(d):016x}-{int(o)}" for d, o in zip(digests, occurrence, strict=True)
    ]
    assert binascii.unhexlify(keys[0].as_py()[:16]) == int(digests[0]).to_bytes(8, "big")


@pytest.mark.parametrize("count", [1, 50, 5_000, 300_000])
def test_repeated_digests_are_found_exactly(count: int) -> None:
    rng = np.random.default_rng(count)
    digests = rng.integers(0, 1 << 62, count, dtype=np.int64).astype(np.uint64)
    copies = rng.integers(0, count, count // 20 + 1)
    digests[rng.integers(0, count, len(copies))] = digests[copies]
    # same low bits, different digests: crowded buckets that hold no repeat
    digests[: count // 10] = (digests[: count // 10] & np.uint64(0xFFFF)) | np.uint64(1 << 40)
    wanted = pd.Series(digests).duplicated(keep=False).to_numpy()
    assert _keys._repeated(digests).tolist() == wanted.tolist()


@pytest.mark.parametrize("block", [3, 64, 1 << 22])
def test_rare_odd_whitespace_is_found_where_the_pattern_finds_it(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bytes, "BLOCK_BYTES", block)
    rng = random.Random(block)
    texts = [f"PAYER {n} LTD" for n in range(3_000)]
    for at in rng.sample(range(3_000), 12):  # rare: the marks' texts are found by position
        texts[at] = rng.choice(["A  B", "A\tB", "C\r\n", " D ", "E\x0bF", "\u00a0G\nH", ""])
    values = pa.array(texts).slice(1)
    found = _bytes.with_other_whitespace(values)
    assert found is not None
    wanted = pc.match_substring_regex(values, r"\s\s|[^\S ]").to_pylist()
    assert all(f for f, w in zip(found.tolist(), wanted, strict=True) if w)  # never one less
    assert sum(found.tolist()) <= sum(wanted) + 2  # and only texts next to one more
