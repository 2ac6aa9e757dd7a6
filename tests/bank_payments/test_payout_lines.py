"""The payout job's reading of a statement (``_payouts``: every line checked, the credits' texts
read, the payout patterns run and the payouts keyed) gives what the bank import's reading,
classes and keys give: the same payout lines with the same keys, the same days and count, and
the same refusal of a broken file."""

from __future__ import annotations

import random
from datetime import date
from pathlib import Path

import numpy as np
import pyarrow as pa
import pytest

from tasks.bank_payments import (
    StatementRefused,
    UnknownLayout,
    classify,
    line_keys,
    payout_lines,
    read_statement_bytes,
    read_statement_credits,
)
from tasks.bank_payments._classify import CLASSES, PROVIDER_PAYOUT, ClassifyRules, class_codes
from tasks.bank_payments._payouts import PAYOUT_COLUMNS, statement_credits_of

TODAY = date(2026, 11, 24)
DATA = Path(__file__).resolve().parents[1] / "data" / "bank"
DEFAULT = ClassifyRules()
# Patterns that tell apart texts a line's key does not: spaces inside, and the empty text.
SPACED = ClassifyRules(payout_payers=r"^ACME  PAYOUTS", payout_references=r"ADFIN-PO-\w+")
EMPTY_TEXT = ClassifyRules(payout_payers=r"^$", payout_references=r"^$")
ANY_PAYER = ClassifyRules(payout_payers=r".", payout_references=r"INV")
RULES = [DEFAULT, SPACED, EMPTY_TEXT, ANY_PAYER]
PAYERS = ["ADFIN", "adfin ltd", "ADFIN  LTD", " ADFIN LTD ", "'ADFIN", "ACME  PAYOUTS"]
PAYERS += ["ACME PAYOUTS", "Acme  Payouts", "Café Nero", "REFUND DESK", "", "NORTH MILL"]
REFERENCES = ["ADFIN-PO-7QK2", "adfin-po-x1", "ADFIN-PO-", "INV 42", "", "  ", "x\ty"]


def _general(data: bytes, rules: ClassifyRules) -> tuple[tuple[object, ...], list[dict]]:
    """Read, classified and keyed by the bank import's functions, the payouts picked as the
    payout job picked them before it read statements itself."""
    statement = read_statement_bytes(data, where="s.csv", today=TODAY)
    lines = statement.lines
    classes, keys = classify(lines, rules), line_keys(lines)
    amount = np.asarray(lines.column("amount").to_numpy())
    chosen = (class_codes(classes) == CLASSES.index(PROVIDER_PAYOUT)) & (amount > 0)
    picked = lines.append_column("key", keys).filter(pa.array(chosen))
    dates = lines.column("date").to_pylist()
    days = (statement.sha256, min(dates), max(dates), lines.num_rows)
    return days, picked.select(list(PAYOUT_COLUMNS)).to_pylist()


def _fast(data: bytes, rules: ClassifyRules) -> tuple[tuple[object, ...], list[dict]]:
    statement = statement_credits_of(data, where="s.csv", today=TODAY)
    days = (statement.sha256, statement.first, statement.last, statement.count)
    return days, payout_lines(statement, rules).to_pylist()


def _same(data: bytes, rules: ClassifyRules) -> list[dict]:
    general = _general(data, rules)
    assert _fast(data, rules) == general
    return general[1]


def _generic(seed: int, count: int) -> bytes:
    """A generic-layout statement of few days and amounts, a third of its lines repeating an
    earlier one (as it is, or with another type, or its payer spaced or cased otherwise)."""
    rng = random.Random(seed)
    rows: list[list[str]] = []
    for _ in range(count):
        if rows and rng.random() < 0.35:
            row = list(rng.choice(rows))
            change = rng.random()
            if change < 0.3:
                row[1] = rng.choice(["BACS", "INT", " TFR "])
            elif change < 0.5:
                row[2] = rng.choice([row[2].lower(), row[2].replace(" ", "  "), f" {row[2]}"])
            rows.append(row)
            continue
        amount = rng.choice([-500, -1, 0, 1, 250, 250, 99_999, 1_234_567])
        rows.append(
            [
                f"2026-11-0{rng.randint(1, 4)}",
                rng.choice(["BACS", "FPI", "DD", "INT"]),
                rng.choice(PAYERS),
                rng.choice(REFERENCES),
                f"{amount / 100:.2f}",
                "",
            ]
        )
    body = "".join(",".join(f'"{c}"' if "\t" in c else c for c in r) + "\n" for r in rows)
    return ("Date,Type,Counterparty,Reference,Amount,Balance\n" + body).encode()


@pytest.mark.parametrize("rules", RULES, ids=["default", "spaced", "empty", "any"])
@pytest.mark.parametrize("seed", range(6))
def test_payouts_and_their_keys_are_the_bank_imports(seed: int, rules: ClassifyRules) -> None:
    found = _same(_generic(seed, 400), rules)
    if rules is not DEFAULT:  # the patterns find payouts, repeated ones among them
        keys = [row["key"] for row in found]
        assert keys and any(not key.endswith("-0") for key in keys)


def test_identical_lines_of_another_class_still_count_for_the_keys() -> None:
    # The key makes no difference of case, inner spaces or type; the patterns may: the second
    # line is no payout under SPACED, yet the third is its repeat, as the bank import keys it.
    lines = [
        "2026-11-02,BACS,ACME  PAYOUTS,X,10.00,",
        "2026-11-02,BACS,ACME PAYOUTS,X,10.00,",
        "2026-11-02,INT,acme  payouts,X,10.00,",
        "2026-11-02,BACS,ACME  PAYOUTS,X,10.01,",
    ]
    data = ("Date,Type,Counterparty,Reference,Amount,Balance\n" + "\n".join(lines)).encode()
    found = _same(data, SPACED)
    assert [row["line"] for row in found] == [2, 4, 5]
    assert [row["key"][-2:] for row in found] == ["-0", "-2", "-0"]


def _with_ids(seed: int, count: int) -> bytes:
    """A statement in a user's profile with transaction ids (some blank, some repeated) and
    accounts: a line with an id is keyed by it."""
    rng = random.Random(seed)
    rows = ["When,Kind,Who,Ref,Details,Value,TxnRef,Acct"]
    for n in range(count):
        txn = rng.choice(["", " ", f"T{n}", "T1"])
        payer, amount = rng.choice(PAYERS[:3] + ["SHOP"]), rng.choice([-100, 0, 500, 500, 700])
        details = rng.choice(["", "ADFIN-PO-9 payout", "coffee"])
        account = rng.choice(["12-34-56 1234", "", "99-99-99 42"])
        rows.append(f"2026-11-01,BACS,{payer},R,{details},{amount / 100:.2f},{txn},{account}")
    return ("\n".join(rows) + "\n").encode()


def _barclays(seed: int, count: int) -> bytes:
    """Barclays' layout: payer and reference from the memo's slots, or either side of a tab."""
    rng = random.Random(seed)
    rows = ["Number,Date,Account,Amount,Subcategory,Memo"]
    for _ in range(count):
        payer, reference = rng.choice(PAYERS[:4] + ["TESCO"]), rng.choice(REFERENCES[:5])
        tabbed = rng.random() < 0.3
        memo = f"{payer:<18}\t{reference}" if tabbed else f"{payer:<18}{reference:<18}BGC"
        amount = rng.choice([-45.6, 12.5, 12.5, 300.0])
        rows.append(f' ,02/11/2026,20-32-06 13572468,{amount:.2f},FT,"{memo}"')
    return ("\n".join(rows) + "\n").encode()


@pytest.mark.parametrize("seed", range(3))
def test_transaction_ids_and_memos_give_the_bank_imports_keys(
    seed: int, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    folder = tmp_path / "bank-profiles"
    folder.mkdir()
    (folder / "ids.yaml").write_text(
        "name: ids\nbank: Test\nsignature: [When, Kind, Who, Ref, Details, Value, TxnRef]\n"
        "columns: {date: When, type: Kind, payer: Who, reference: Ref, text: Details, "
        "amount: Value, id: TxnRef, account: Acct}\ndate_formats: ['%Y-%m-%d']\n",
        encoding="utf-8",
    )
    monkeypatch.setenv("BILLOPS_HOME", str(tmp_path))
    for rules in RULES:
        found = _same(_with_ids(seed, 300), rules)
        if rules is ANY_PAYER:
            assert any(row["key"].startswith("id:") for row in found)
        _same(_barclays(seed, 200), rules)


@pytest.mark.parametrize(
    "path", sorted(p for p in DATA.rglob("*") if p.suffix in (".csv", ".txt")), ids=lambda p: p.name
)
def test_every_sample_statement_reads_or_is_refused_alike(path: Path) -> None:
    data = path.read_bytes()
    try:
        general = _general(data, ANY_PAYER)
    except (StatementRefused, UnknownLayout) as exc:
        with pytest.raises(type(exc)) as raised:
            _fast(data, ANY_PAYER)
        assert str(raised.value) == str(exc)
        return
    assert _fast(data, ANY_PAYER) == general


BROKEN = {
    "a bad date": "2026-11-02,BACS,ADFIN,ADFIN-PO-1,10.00,\n2026-13-40,FPI,X,Y,1.00,\n",
    "a bad amount": "2026-11-02,BACS,ADFIN,ADFIN-PO-1,10.00,\n2026-11-02,FPI,X,Y,1.0.0,\n",
    "two bad lines": "2026-11-02,BACS,ADFIN,A,1O.00,\n2026-11-02,FPI,X,Y,-0.00,\n",
    "a future date": "2026-11-02,BACS,ADFIN,ADFIN-PO-1,10.00,\n2026-12-25,FPI,X,Y,1.00,\n",
    "too many cells": "2026-11-02,BACS,ADFIN,ADFIN-PO-1,1,250.00,\n",
    "no lines": "",
    "a blank line only": ",,,,,\n",
}


@pytest.mark.parametrize("body", BROKEN.values(), ids=list(BROKEN))
def test_a_broken_statement_is_refused_with_the_same_words(body: str) -> None:
    data = ("Date,Type,Counterparty,Reference,Amount,Balance\n" + body).encode()
    with pytest.raises(StatementRefused) as general:
        _general(data, DEFAULT)
    with pytest.raises(StatementRefused) as fast:
        _fast(data, DEFAULT)
    assert str(fast.value) == str(general.value)


def test_a_file_is_read_from_its_path_and_refused_when_it_cannot_be(tmp_path: Path) -> None:
    path = tmp_path / "s.csv"
    path.write_bytes(_generic(1, 50))
    statement = read_statement_credits(path, today=TODAY)
    assert statement.file == str(path)
    assert statement.lines.num_rows == sum(r > 0 for r in _amounts(path.read_bytes()))
    with pytest.raises(StatementRefused, match="cannot be read"):
        read_statement_credits(tmp_path / "missing.csv", today=TODAY)


def _amounts(data: bytes) -> list[float]:
    return [float(line.rsplit(b",", 2)[1]) for line in data.splitlines()[1:]]


def test_a_statement_without_credits_has_no_payouts() -> None:
    data = b"Date,Type,Counterparty,Reference,Amount,Balance\n2026-11-02,DD,ADFIN,X,-1.00,\n"
    assert _same(data, ANY_PAYER) == []


@pytest.mark.parametrize(
    "broken",
    [
        {"payout_payers": "(ADFIN"},
        {"payout_references": "[A-"},
        {"other_credit_text": "REFUND)"},
        {"other_credit_types": "*INT"},
        {"other_credit_text": "(a", "other_credit_types": "(b"},
    ],
)
def test_a_pattern_that_is_no_regular_expression_fails_alike(broken: dict[str, str]) -> None:
    rules = ClassifyRules(**broken)
    data = _generic(0, 40)
    with pytest.raises(pa.ArrowInvalid) as general:
        _general(data, rules)
    with pytest.raises(pa.ArrowInvalid) as fast:
        _fast(data, rules)
    assert str(fast.value) == str(general.value)
