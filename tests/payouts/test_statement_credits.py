"""The payout job's own reading of a statement (for its credits only, composed by its flow)
gives the payout credits and coverage that the bank import's lines, classes and keys give
(:func:`payout_credits`)."""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

import pytest

from flows.payouts import statement_credits
from tasks.bank_payments import (
    ClassifyRules,
    classify,
    line_keys,
    read_statement,
    read_statement_credits,
)
from tasks.payouts._credits import payout_credits

TODAY = date(2026, 11, 24)


def _statement(path: Path, seed: int) -> None:
    rng = random.Random(seed)
    rows = ["Date,Type,Counterparty,Reference,Amount,Balance"]
    for n in range(300):
        day = date(2026, 1, 1) + timedelta(days=n // 3)
        if rng.random() < 0.1:
            payer, reference, amount = "ADFIN", f"ADFIN-PO-{rng.randint(0, 3)}", 1000
        else:
            payer, reference = f"PAYEE {rng.randint(0, 9)}", f"REF {n}"
            amount = rng.choice([-250, 0, 1000, 4321])
        rows.append(f"{day.isoformat()},BACS,{payer},{reference},{amount / 100:.2f},")
        if rng.random() < 0.1:
            rows.append(rows[-1])  # the same line twice: its keys count the two
    path.write_text("\n".join(rows) + "\n", encoding="utf-8")


@pytest.mark.parametrize("seed", range(3))
@pytest.mark.parametrize("rules", [None, ClassifyRules(payout_payers=r"^PAYEE [0-4]")])
def test_the_payout_jobs_reading_gives_the_bank_imports_credits(
    tmp_path: Path, seed: int, rules: ClassifyRules | None
) -> None:
    path = tmp_path / "statement.csv"
    _statement(path, seed)
    statement = read_statement(path, today=TODAY)
    lines = statement.lines
    wanted = payout_credits(lines, classify(lines, rules), line_keys(lines), statement.sha256)
    found = statement_credits(read_statement_credits(path, today=TODAY), rules)
    assert found == wanted
    assert len(found[0]) > 10
