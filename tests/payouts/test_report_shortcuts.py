"""The shortcuts of reading a year's report give what the general ways give: the payment ids on
more than one line found from 64-bit hashes of the ids (only lines sharing a hash compared as
texts) against one dictionary encode of every id; the hashes themselves (equal texts, equal
hashes, wherever the texts sit in their buffers); the search for a lone CR a stretch of bytes
at a time against a plain definition; and the amounts of a column too varied to look for runs
in against the same column parsed whole."""

from __future__ import annotations

import random

import numpy as np
import pyarrow as pa
import pytest

from tasks.common.finance_files import table as table_module
from tasks.payouts import _values
from tasks.payouts._payout_lines import Payments
from tasks.payouts._text import HASHED_BYTES, text_hashes
from tasks.payouts._values import _pennies_of, pennies_column


def _ids(rng: random.Random, count: int, *, width: tuple[int, int] = (0, 30)) -> list[str]:
    """Ids of any length in ``width`` (empty among them), some on several lines."""
    alphabet = "ab-_0123456789é£"
    made = ["".join(rng.choice(alphabet) for _ in range(rng.randint(*width))) for _ in range(count)]
    for _ in range(count // 10):  # repeats, near and far
        made[rng.randrange(count)] = made[rng.randrange(count)]
    return made


def _same(found: Payments, expected: Payments) -> None:
    assert found.rows.tolist() == expected.rows.tolist()
    assert found.ids == expected.ids
    # Each repeated line's payment number: equal exactly where the ids are equal.
    pairs = {(int(a), int(b)) for a, b in zip(found.codes, expected.codes, strict=True)}
    assert len({a for a, _ in pairs}) == len({b for _, b in pairs}) == len(pairs)


ID_COLUMNS = {
    "mixed": _ids(random.Random(1), 3_000),
    "one-width": _ids(random.Random(2), 3_000, width=(11, 11)),
    "eight": _ids(random.Random(3), 500, width=(8, 8)),
    "long": _ids(random.Random(4), 500, width=(HASHED_BYTES - 2, HASHED_BYTES + 2)),
    "all-empty": [""] * 50,
    "one": ["pay-1"],
    "none": [],
    "repeated-only": ["pay-1", "pay-2", "pay-1", "", "", "pay-2", "pay-2"],
}


@pytest.mark.parametrize("name", list(ID_COLUMNS))
def test_repeated_payments_by_hashes_are_those_of_one_encode(name: str) -> None:
    values = pa.array(ID_COLUMNS[name], pa.string())
    for part in (values, values.slice(7, 400), values.slice(len(values) // 2)):
        _same(Payments(part), Payments.by_encoding(part))
        assert "" not in Payments(part).ids


def test_ids_with_nulls_or_of_another_type_go_the_general_way() -> None:
    assert text_hashes(pa.array(["a", None, "a"], pa.string())) is None
    assert text_hashes(pa.array(["a", "b"], pa.large_string())) is None
    assert text_hashes(pa.array(["x" * (HASHED_BYTES + 1)], pa.string())) is None
    values = pa.array(["a", "b", "a", "c"], pa.large_string())
    _same(Payments(values), Payments.by_encoding(values))


def test_equal_texts_hash_equal_wherever_they_sit() -> None:
    """A text's hash is its own bytes' (not its neighbours', past its end, nor its place in the
    buffer); different texts of a year's kind hash apart."""
    rng = random.Random(5)
    texts = _ids(rng, 2_000, width=(0, HASHED_BYTES // 2))  # é and £ are two bytes
    shuffled = texts[:]
    rng.shuffle(shuffled)
    first = text_hashes(pa.array(texts, pa.string()))
    again = text_hashes(pa.array(["padding" * 3, *shuffled], pa.string()).slice(1))
    assert first is not None and again is not None
    by_text = dict(zip(texts, first.tolist(), strict=True))
    assert [by_text[t] for t in shuffled] == again.tolist()
    assert len(set(first.tolist())) == len(set(texts))


def _lone_cr(data: bytes, start: int) -> bool:
    """The plain definition: a CR after ``start`` not followed by a line feed."""
    return any(
        data[i] == 13 and (i + 1 == len(data) or data[i + 1] != 10) for i in range(start, len(data))
    )


def test_a_lone_carriage_return_is_found_in_any_stretch(monkeypatch: pytest.MonkeyPatch) -> None:
    """Short stretches, so that a CR falls at a stretch's end, its line feed in the next."""
    monkeypatch.setattr(table_module, "CR_STRETCH", 5)
    rng = random.Random(6)
    cases = [b"a\r\nb\r\n", b"a\r\nb\r", b"a\rb\n", b"\r", b"abc", b"abcd\r\n\r\n", b"abcd\r\r\n"]
    cases += [bytes(rng.choice(b"ab\r\n") for _ in range(rng.randint(1, 40))) for _ in range(500)]
    for data in cases:
        for start in {0, 1, len(data) // 2}:
            if start < len(data):
                assert table_module._lone_carriage_return(data, start) is _lone_cr(data, start)


def test_amounts_too_varied_for_runs_are_parsed_whole_the_same() -> None:
    """A column whose first values differ from line to line is parsed whole without looking for
    runs, giving what the runs gave, even when runs come later in it."""
    rng = random.Random(7)
    varied = [f"{rng.randint(0, 99_999) / 100:.2f}" for _ in range(_values.RUN_SAMPLE)]
    values = pa.array(varied + ["£1,234.50"] * 3_000 + ["x"] * 900 + ["12.50"] * 3_000)
    assert not _values._may_run(values)
    assert _values.runs(values) is not None  # the runs the shortcut did not look for
    found, expected = pennies_column(values), _pennies_of(values)
    assert np.array_equal(found[0], expected[0]) and np.array_equal(found[1], expected[1])
    assert found[2] == expected[2] and len(found[2]) == 900
    in_runs = pa.array(["10.00"] * 5_000 + ["x"] * 5)
    assert _values._may_run(in_runs)
