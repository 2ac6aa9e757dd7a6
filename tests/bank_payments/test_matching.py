"""Classifying, keying and matching statement lines against what is owed (pure, no service)."""

from __future__ import annotations

import csv
from datetime import date
from decimal import Decimal
from pathlib import Path

import pyarrow as pa
import pytest

from tasks.bank_payments import read_statement_bytes
from tasks.bank_payments._keys import line_keys
from tasks.bank_payments._owed import OpenItem, items_frame
from tasks.bank_payments._plan import plan_statement
from tasks.bank_payments._profiles import find_profile
from tasks.bank_payments._statement import SCHEMA, Statement
from tasks.bank_payments.report import summary_markdown, totals, write_reports
from tasks.common.reports import neutralise

ITEMS = items_frame(
    [
        OpenItem(
            "invoice",
            "i42",
            "INV-0042",
            "",
            "Acme Services Ltd",
            125000,
            date(2026, 11, 1),
            "UNPAID",
        ),
        OpenItem(
            "invoice",
            "i43",
            "INV-0043",
            "",
            "Acme Services Ltd",
            20000,
            date(2026, 11, 9),
            "UNPAID",
        ),
        OpenItem(
            "invoice",
            "i44",
            "INV-0044",
            "",
            "Northwind Trading",
            48000,
            date(2026, 11, 5),
            "UNPAID",
        ),
        OpenItem(
            "invoice", "i45", "INV-0045", "", "Globex Plc", 10000, date(2026, 11, 5), "UNPAID"
        ),
        OpenItem(
            "payment_request", "p98", "PR-98", "GLOBEX-JUNE", "Globex Plc", 5000, None, "UNPAID"
        ),
    ]
)


def _statement(rows: list[tuple[int, str, str, str]]) -> Statement:
    n = len(rows)
    table = pa.table(
        {
            "line": [r[0] for r in rows],
            "account": ["a"] * n,
            "date": [date(2026, 11, 10)] * n,
            "amount": [int(Decimal(r[1]) * 100) for r in rows],
            "payer": [r[2] for r in rows],
            "reference": [r[3] for r in rows],
            "text": [""] * n,
            "type": [""] * n,
            "txn_id": [None] * n,
            "balance": [None] * n,
        },
        schema=SCHEMA,
    )
    return Statement("s.csv", "0" * 64, find_profile("generic"), "test", "utf-8", table)


def test_full_partial_split_overpayment_payout_and_suggestion() -> None:
    statement = _statement(
        [
            (2, "1250.00", "ACME SERVICES LTD", "inv 42"),  # full, typed in lower case
            (3, "100.00", "ACME SERVICES LTD", "INV0043"),  # partial: 100 of 200
            (4, "100.00", "ACME SERVICES LTD", "INV-0043"),  # second line pays the rest
            (
                5,
                "530.00",
                "NORTHWIND TRADING",
                "Invoice 44 and INV-45",
            ),  # one line, two invoices + 0
            (6, "3120.55", "ADFIN", "ADFIN-PO-7QK2ZD"),  # payout: never settles anything
            (7, "50.00", "GLOBEX PLC", "globex june"),  # client reference → payment request
            (8, "99.00", "NORTHWIND TRADING", ""),  # no reference → suggestion
            (9, "-12.00", "SHELL", ""),
        ]
    )
    plan = plan_statement(statement, ITEMS)
    by_line = {ln.line: ln for ln in plan.lines}
    assert by_line[2].outcome == "full" and by_line[2].references == ["INV-42"]
    assert [(a.number, a.pennies) for a in by_line[3].allocations] == [("INV-0043", 10000)]
    assert by_line[3].outcome == "partial"
    assert by_line[4].outcome == "full"
    assert [(a.number, a.pennies) for a in by_line[5].allocations] == [
        ("INV-0044", 48000),
        ("INV-0045", 5000),
    ]
    assert by_line[5].outcome == "partial"
    assert by_line[6].klass == "provider_payout" and not by_line[6].allocations
    assert [(a.kind, a.number) for a in by_line[7].allocations] == [("payment_request", "PR-98")]
    assert by_line[8].outcome == "suggested"
    assert by_line[8].suggestions[0][0] in ("INV-0044",)
    assert by_line[9].klass == "debit"
    t = totals(plan, [])
    assert t.ties_out


def test_overpayment_records_what_is_due_and_leaves_the_rest() -> None:
    plan = plan_statement(_statement([(2, "1300.00", "ACME SERVICES LTD", "INV-0042")]), ITEMS)
    line = plan.lines[0]
    assert line.outcome == "overpayment"
    assert [a.pennies for a in line.allocations] == [125000]
    assert line.unallocated == Decimal("50.00")


def test_a_mistyped_number_for_another_customer_is_only_suggested() -> None:
    plan = plan_statement(_statement([(2, "150.00", "NORTHWIND TRADING", "INV-0042")]), ITEMS)
    assert plan.lines[0].outcome == "suggested"
    assert plan.lines[0].allocations == []


def test_identical_lines_get_distinct_keys_and_overlaps_share_them() -> None:
    coffee = (0, "-3.00", "COSTA", "")
    first = _statement([(2, *coffee[1:]), (3, *coffee[1:])])
    second = _statement([(2, *coffee[1:]), (3, *coffee[1:]), (4, *coffee[1:])])
    a, b = list(line_keys(first.lines)), list(line_keys(second.lines))
    assert len(set(a)) == 2 and a == b[:2] and b[2] not in a


def test_a_file_seen_before_is_all_duplicates() -> None:
    statement = _statement([(2, "1250.00", "ACME SERVICES LTD", "INV-0042")])
    keys = set(line_keys(statement.lines))
    plan = plan_statement(statement, ITEMS, done_keys=keys)
    assert plan.lines[0].outcome == "duplicate" and not plan.recordable()


def test_csv_cells_are_neutralised() -> None:
    assert neutralise("=HYPERLINK(1)") == "'=HYPERLINK(1)"
    assert neutralise("@SUM") == "'@SUM"
    assert neutralise("\tx") == "'\tx"
    assert neutralise("-12.50") == "-12.50"
    assert neutralise("-cmd") == "'-cmd"


MONZO = (
    "Transaction ID,Date,Time,Type,Name,Emoji,Category,Amount,Currency,Local amount,"
    "Local currency,Notes and #tags,Address,Receipt,Description,Category split,Money Out,Money In\n"
)


def _monzo_line(amount: str, txn: str = "tx_0000AcmE42ZWW3Pq4dXGYW") -> str:
    return (
        f"{txn},02/11/2026,10:32:01,Faster payment,Acme Services Ltd,,Income,{amount},GBP,"
        f"{amount},GBP,INV-0042,,,ACME SERVICES LTD INV-0042,,,{amount}\n"
    )


@pytest.mark.parametrize("second", ["1000.00", "500.00"], ids=["identical", "different amount"])
def test_a_bank_transaction_id_repeated_in_one_file_is_paid_once(second: str) -> None:
    # Two exports pasted into one file repeat the bank's transaction: both lines have the same
    # key, and each was given a payment of INV-0042 (a repeated payment at the service, or a
    # ledger conflict on the shared key when the amounts differ).
    items = items_frame(
        [OpenItem("invoice", "i42", "INV-0042", "", "Acme Services Ltd", 200000, None, "UNPAID")]
    )
    data = MONZO + _monzo_line("1000.00") + _monzo_line(second) + _monzo_line("10.00", "tx_2")
    statement = read_statement_bytes(data.encode(), where="m.csv", today=date(2026, 11, 24))

    plan = plan_statement(statement, items)

    by_line = {ln.line: ln for ln in plan.lines}
    assert [(a.number, a.pennies) for a in by_line[2].allocations] == [("INV-0042", 100000)]
    assert by_line[3].outcome == "duplicate" and by_line[3].allocations == []
    assert "line 2" in by_line[3].note
    assert ("different" in by_line[3].note) == (second != "1000.00")
    assert [(a.number, a.pennies) for a in by_line[4].allocations] == [("INV-0042", 1000)]
    assert [ln.line for ln in plan.recordable()] == [2, 4]
    assert totals(plan, []).ties_out


@pytest.mark.parametrize("second", ["1000.00", "500.00"], ids=["identical", "different amount"])
def test_a_repeated_transaction_id_that_differs_is_left_for_review_not_recorded_before(
    second: str, tmp_path: Path
) -> None:
    # A repeat with another amount or date is not the same payment seen twice: which line is
    # right is for a person to ask the bank. It was left out of review.csv and its money was
    # summed as "recorded before (earlier files or runs)", which nothing had recorded.
    items = items_frame(
        [OpenItem("invoice", "i42", "INV-0042", "", "Acme Services Ltd", 200000, None, "UNPAID")]
    )
    data = MONZO + _monzo_line("1000.00") + _monzo_line(second)
    statement = read_statement_bytes(data.encode(), where="m.csv", today=date(2026, 11, 24))
    plan = plan_statement(statement, items)
    differs = second != "1000.00"

    _, review = write_reports(plan, [], tmp_path / "m.csv", dry_run=True)
    with review.open(encoding="utf-8-sig", newline="") as handle:
        rows = {row["line"]: row for row in csv.DictReader(handle)}
    assert ("3" in rows) == differs
    if differs:
        assert rows["3"]["left_for_review"] == "500.00"
        assert "line 2" in rows["3"]["reason"] and "bank" in rows["3"]["reason"]
    t = totals(plan, [])
    assert t.ties_out
    assert t.before == (Decimal("0.00") if differs else Decimal("1000.00"))
    assert t.review == Decimal("1000.00") + (Decimal(second) if differs else 0)
    summary = "\n".join(summary_markdown(plan, [], biller="acme", dry_run=True))
    assert f"| recorded before (earlier files or runs) | {t.before:.2f} |" in summary
