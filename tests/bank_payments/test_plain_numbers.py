"""Numbers written plainly are read by trimming (``_plain_numbers``) exactly as the regex
extraction reads them: the same texts named, the same keys, for the aliases it takes, and the
aliases it cannot take are left to the extraction."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tasks.bank_payments._plain_numbers import plain_numbers
from tasks.bank_payments._references import alias_table
from tasks.bank_payments._single_numbers import _extracted, _single_numbers

PARTS = [
    *("INV", "INVOICE", "inv", "Invc", "PR", "PAYREQ", "CN", "CRN", "CREDITNOTE", "INVNO"),
    *("NO", "NUM", "REF", "PAYMENT REQUEST", "X", "§", "é"),
    *("-", "_", "/", "#", ":", ".", " ", "  ", "\t"),
    *("0", "00", "7", "12345", "123456789", "1234567890"),
]
ALIASES = [
    alias_table(["INV-1"]),
    alias_table(["INV-1", "PR-2"]),
    alias_table(["INV-1", "PR-2", "CN-3"], {"CN": ["CREDITNOTE", "CRN"]}),
]


def _texts(seed: int) -> pa.Array:
    rng = random.Random(seed)
    texts = ["".join(rng.choice(PARTS) for _ in range(rng.randint(0, 4))) for _ in range(400)]
    return pc.utf8_upper(pa.array(texts, pa.string()))


def _rows(frame: object) -> list[tuple[int, str]]:
    return [(int(line), str(key)) for line, key in zip(frame["line"], frame["key"], strict=True)]  # type: ignore[index]


@pytest.mark.parametrize("seed", range(5))
@pytest.mark.parametrize("aliases", ALIASES, ids=["inv", "inv+pr", "inv+pr+cn"])
def test_trimming_reads_what_the_extraction_reads(seed: int, aliases: dict[str, list[str]]) -> None:
    upper = _texts(seed)
    assert plain_numbers(upper, aliases) is not None
    assert _rows(_single_numbers(upper, aliases)) == _rows(_extracted(upper, aliases))


def test_plain_forms_and_their_keys() -> None:
    upper = pa.array(["INV-0042", "INVOICE 7", "INV000", "PR#12", "INV1234567890", "INV-4 X"])
    shaped, keys = plain_numbers(upper, alias_table(["INV-1", "PR-2"])) or (None, None)
    assert shaped is not None and keys is not None
    assert shaped.tolist() == [True, True, True, True, True, False]
    assert keys.to_pylist() == ["INV-42", "INV-7", "INV-0", "PR-12", None]


def test_a_word_that_is_another_and_no_is_left_to_the_extraction() -> None:
    # "INVNO 12" could be INV, then "NO", then 12: the extraction decides such aliases.
    aliases = alias_table(["INV-1"], {"INV": ["INVNO"]})
    assert plain_numbers(pa.array(["INVNO 12"]), aliases) is None
    assert _rows(_single_numbers(pa.array(["INVNO 12"]), aliases)) == [(0, "INV-12")]
