"""What ``bench/bench_bank.py`` measures, pinned on generated statements, so that making the
read, keys, dedup, matching or suggestions faster cannot change a single result.

Each run reads a generated statement (``generated_statement.py``), classifies, keys, takes every
tenth line as recorded by an earlier file, matches and suggests, exactly as the benchmark does;
the counts are what the code gave before the speed work on them, and the digest covers every
line's class, key, outcome, named references, allocations, overpaid pennies, notes and
suggestions (any change to any of them changes it).
"""

from __future__ import annotations

import hashlib
from collections import Counter
from datetime import date
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from tasks.bank_payments import read_statement
from tasks.bank_payments._classify import CLASSES, class_codes, classify
from tasks.bank_payments._dedup import duplicates
from tasks.bank_payments._keys import line_keys
from tasks.bank_payments._match import OUTCOMES, match_lines
from tasks.bank_payments._owed import OpenItem, items_frame
from tasks.bank_payments._suggest import suggest
from tests.bank_payments.generated_statement import generate, generate_varied

TODAY = date(2026, 12, 31)


def measured(path: Path, owed: list[OpenItem]) -> dict[str, Any]:
    """The benchmark's steps over one file, summed up (see the module docstring)."""
    items = items_frame(owed)
    statement = read_statement(path, today=TODAY)
    lines = statement.lines
    classes = classify(lines)
    keys = line_keys(lines)
    done = keys.to_pylist()[::10]
    matches = match_lines(lines, classes, items, skip=duplicates(keys, done))
    matched = int(matches.allocations["line"].nunique())
    suggestions = suggest(lines, matches, items)
    codes = class_codes(classes)
    digest = hashlib.sha256()
    for part in (
        lines.column("line").to_numpy().tobytes(),
        codes.tobytes(),
        "\n".join(keys.to_pylist()).encode(),
        matches.outcome.tobytes(),
        matches.references[["line", "order", "key"]].to_csv(index=False).encode(),
        matches.allocations[["line", "kind", "id", "number", "pennies"]]
        .to_csv(index=False)
        .encode(),
        repr(sorted(matches.unallocated.items())).encode(),
        repr(sorted(matches.notes.items())).encode(),
        suggestions[["line", "number", "id", "confidence"]].to_csv(index=False).encode(),
    ):
        digest.update(hashlib.sha256(part).digest())
    return {
        "lines": lines.num_rows,
        "classes": dict(sorted(Counter(CLASSES[c] for c in codes).items())),
        "outcomes": {OUTCOMES[o]: int(n) for o, n in enumerate(np.bincount(matches.outcome)) if n},
        "matched": matched,
        "allocated": (len(matches.allocations), int(matches.allocations["pennies"].sum())),
        "overpaid": sum(matches.unallocated.values()),
        "notes": len(matches.notes),
        "suggested": (int(suggestions["line"].nunique()), len(suggestions)),
        "digest": digest.hexdigest()[:16],
    }


def test_a_varied_statement_gives_the_results_pinned(tmp_path: Path) -> None:
    path = tmp_path / "statement.csv"
    owed = generate_varied(path, 30_000, 3_000)
    assert measured(path, owed) == {
        "lines": 30575,
        "classes": {
            "customer_payment": 8556,
            "debit": 21384,
            "other_credit": 33,
            "provider_payout": 602,
        },
        "outcomes": {
            "full": 2730,
            "partial": 84,
            "overpayment": 36,
            "unmatched": 322,
            "suggested": 4519,
            "duplicate": 3058,
            "n/a": 19826,
        },
        "matched": 2850,
        "allocated": (2966, 667173208),
        "overpaid": 44424,
        "notes": 63,
        "suggested": (4488, 12847),
        "digest": "7ad0d9e84f5af945",
    }


@pytest.mark.slow
def test_the_benchmarks_statement_gives_the_counts_it_prints(tmp_path: Path) -> None:
    """The benchmark's own file (about a minute: generating it is per-line Python)."""
    path = tmp_path / "statement.csv"
    owed = generate(path, 1_000_000, 100_000)
    assert measured(path, owed) == {
        "lines": 1_000_000,
        "classes": {"customer_payment": 266854, "debit": 713005, "provider_payout": 20141},
        "outcomes": {
            "full": 81008,
            "unmatched": 10120,
            "suggested": 148954,
            "duplicate": 100000,
            "n/a": 659918,
        },
        "matched": 81008,
        "allocated": (81008, 20286717961),
        "overpaid": 0,
        "notes": 0,
        "suggested": (148954, 432290),
        "digest": "802af9595f441c48",
    }
