"""The quick ways to dictionary-encode a column give what Arrow's ``dictionary_encode`` gives (the
same dictionary, in the same order, and the same indices): runs found from the bytes of texts of
one length (``_runs``), and a column of few values looked up among those of its first rows
(``_kernels._encoded_few``); each falls back where it cannot be sure."""

from __future__ import annotations

import random

import pyarrow as pa
import pyarrow.compute as pc
import pytest

from tasks.bank_payments import _kernels
from tasks.bank_payments._kernels import encoded, encoded_by_runs, per_value
from tasks.bank_payments._runs import run_starts


def _in_runs(seed: int, width: int, count: int) -> list[str]:
    """Texts of one length in runs, neighbouring runs often differing in one byte only (at the
    start, the middle or the end: each word of the comparison must see it)."""
    rng = random.Random(seed)
    base = "".join(rng.choice("0123456789/") for _ in range(width))
    texts: list[str] = []
    while len(texts) < count:
        at = rng.randrange(width)
        text = base[:at] + rng.choice("0123456789/") + base[at + 1 :]
        texts.extend([text] * rng.randint(1, 9))
        base = text
    return texts[:count]


@pytest.mark.parametrize("width", [1, 7, 8, 9, 10, 15, 16, 17, 24, 31, 32, 33, 40])
@pytest.mark.parametrize("seed", range(3))
def test_runs_are_found_from_the_bytes_as_neighbours_compare(width: int, seed: int) -> None:
    texts = _in_runs(seed, width, 3_000)
    for values in (pa.array(texts, pa.string()), pa.array(texts, pa.string()).slice(5, 2_000)):
        starts = run_starts(values)
        wanted = [
            i for i, t in enumerate(values.to_pylist()) if i == 0 or t != values[i - 1].as_py()
        ]
        if 8 <= width <= 32:
            assert starts is not None
            assert starts.tolist() == wanted
        else:
            assert starts is None
        assert encoded_by_runs(values).equals(values.dictionary_encode())


def test_columns_not_of_one_length_or_with_nulls_go_to_arrow() -> None:
    mixed = pa.array(["02/11/2026"] * 50 + ["2/11/2026"] + ["02/11/2026"] * 50)
    assert run_starts(mixed) is None
    assert encoded_by_runs(mixed).equals(mixed.dictionary_encode())
    with_null = pa.array(["02/11/2026"] * 50 + [None] + ["03/11/2026"] * 50)
    assert run_starts(with_null) is None
    assert encoded_by_runs(with_null).equals(with_null.dictionary_encode())
    assert run_starts(pa.array(["02/11/2026"])) is None
    assert run_starts(pa.array(["02/11/2026"] * 9, pa.large_string())) is None
    # not in runs: every row a run of its own, encoded as a whole
    scattered = pa.array([f"{n % 97:010d}" for n in range(1_000)])
    assert encoded_by_runs(scattered).equals(scattered.dictionary_encode())


def _few(seed: int, count: int, values: list[str], late: str | None = None) -> list[str]:
    rng = random.Random(seed)
    texts = [rng.choice(values) for _ in range(count)]
    if late is not None:
        texts[rng.randrange(count // 2, count)] = late
    return texts


CASES = [
    ("a few values", _few(1, 2_000, ["FASTER PAYMENT", "CHIP AND PIN", "BACS", ""])),
    ("one value", ["CARD"] * 1_000),
    ("a value only after the first rows", _few(2, 2_000, ["A", "B"], late="C")),
    ("many values", [f"PAYER {n}" for n in range(1_500)]),
    ("non-ASCII", _few(3, 2_000, ["Café", "CAFÉ", "Cafe", "café "])),
]


@pytest.mark.parametrize(("kind", "texts"), CASES, ids=[c[0] for c in CASES])
def test_a_column_of_few_values_encodes_as_arrow_does(
    kind: str, texts: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(_kernels, "SAMPLE", 128)
    monkeypatch.setattr(_kernels, "FEW", 8)
    for values in (pa.array(texts, pa.string()), pa.array(texts, pa.string()).slice(3)):
        assert encoded(values).equals(values.dictionary_encode()), kind
        few = _kernels._encoded_few(values)
        if few is not None:
            assert few.equals(values.dictionary_encode())
    assert (_kernels._encoded_few(pa.array(texts, pa.string())) is not None) == (
        kind in ("a few values", "one value", "non-ASCII")
    )


def test_columns_the_look_up_cannot_answer_are_encoded_as_a_whole(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    monkeypatch.setattr(_kernels, "SAMPLE", 128)
    short = pa.array(["A", "B"] * 100)  # fewer rows than four samples
    with_null = pa.array(["A", None] * 400)
    large = pa.array(["A", "B"] * 400, pa.large_string())
    for values in (short, with_null, large):
        assert _kernels._encoded_few(values) is None
        assert encoded(values).equals(values.dictionary_encode())


def test_per_value_results_keep_their_rows() -> None:
    values = pa.array(_few(4, 3_000, [" a ", "b", "'c", ""]))
    result = per_value(values, pc.utf8_trim_whitespace)
    assert result.to_pylist() == pc.utf8_trim_whitespace(values).to_pylist()
    result.validate(full=True)
