"""Finding document numbers by one extraction per text must find exactly what marking every
number and splitting the text finds, on texts built to be awkward: several numbers, adjacent
numbers sharing a separator, words inside words, too many digits, the mark character itself."""

from __future__ import annotations

import random

import pandas as pd
import pyarrow as pa
import pytest

from tasks.bank_payments._references import (
    _separable,
    alias_table,
    find_numbers,
    marked_numbers,
)

PIECES = (
    "INV", "inv", "Invoice", "INVOICE NO.", "inv#", "Inv.", "invioce", "INVC", "PR", "pr",
    "payment  request", "Payment Request", "PAYREQ", "REF", "SPRING", "PRINV", "INVINV", "§",
    "42", "0042", "7", "0", "000000000123", "1234567890", "123456789", " ", "  ", "-", "/", ",",
    ".", "#", ":", "\t", "ACME", "LTD", "NUMBER", "NO", "é",
)  # fmt: skip


def _texts(count: int, seed: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(PIECES) for _ in range(rng.randint(1, 7))) for _ in range(count)]


def _rows(frame: pd.DataFrame) -> list[tuple[int, str, int]]:
    return sorted((int(r.line), str(r.key), int(r.order)) for r in frame.itertuples())


@pytest.mark.parametrize(
    ("aliases", "separable"),
    [
        (alias_table(["INV", "PR"]), True),
        (alias_table(["INV"], {"INV": ["BILL"]}), True),
        (alias_table(["INV", "PR"], {"PR": ["REQUEST FOR", "FOR"]}), False),
    ],
    ids=["default", "extra word", "overlapping words"],
)
def test_one_extraction_finds_what_marking_finds(
    aliases: dict[str, list[str]], separable: bool
) -> None:
    assert _separable(aliases) is separable  # else every text is marked, and this shows nothing
    texts = pa.array(_texts(20_000, seed=len(aliases)), pa.string())
    found = find_numbers(texts, aliases)
    assert len(found) > 1_000  # the texts do name numbers
    assert _rows(found) == _rows(marked_numbers(texts, aliases))
