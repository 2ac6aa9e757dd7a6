"""Questions answered from texts' bytes (``tasks/bank_payments/_bytes.py``) give what their
patterns give, block by block: empty texts, non-ASCII text, texts across the blocks' edges,
sliced arrays."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tasks.bank_payments import _bytes

ALPHABET = ["a", "Z", "7", " ", "  ", "\t", "\n", "é", "£", "\u00a0", "-", "0"]


def _texts(seed: int, count: int) -> list[str]:
    rng = random.Random(seed)
    return ["".join(rng.choice(ALPHABET) for _ in range(rng.randint(0, 9))) for _ in range(count)]


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 22])
def test_a_digit_is_found_as_the_pattern_finds_it(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bytes, "BLOCK_BYTES", block)
    values = pa.array(_texts(block, 2_000), pa.string()).slice(3)

    found = _bytes.with_digit(values)

    assert found is not None
    assert found.tolist() == pc.match_substring_regex(values, "[0-9]").to_pylist()


@pytest.mark.parametrize("block", [1, 7, 64, 1 << 22])
def test_odd_whitespace_is_found_wherever_the_pattern_finds_it(
    block: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_bytes, "BLOCK_BYTES", block)
    values = pa.array(_texts(block + 1, 2_000), pa.string()).slice(5)

    found = _bytes.with_other_whitespace(values)

    assert found is not None
    wanted = pc.match_substring_regex(values, r"\s\s|[^\S ]").to_pylist()
    assert all(f for f, w in zip(found.tolist(), wanted, strict=True) if w)  # never one less


def test_arrays_the_bytes_cannot_answer_go_to_the_pattern() -> None:
    assert _bytes.with_digit(pa.array(["1", None], pa.string())) is None
    assert _bytes.with_digit(pa.array(["1"], pa.large_string())) is None
    assert _bytes.with_digit(pa.array([], pa.string())).tolist() == []
