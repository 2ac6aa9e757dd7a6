"""The bank-payments part of the ledger, on SQLite and PostgreSQL: statement lines remembered with
the payments planned for them, marked done when settled, found again by booking date; what each
run believed was owed."""

from __future__ import annotations

from datetime import date
from decimal import Decimal

import pytest

from ledger import Ledger
from ledger.bank import BankLine, OpenItemSnapshot, PlannedPayment

BILLER = "biller-1"


def _line(key: str, day: int, *payments: PlannedPayment, outcome: str = "full") -> BankLine:
    total = sum(p.pennies for p in payments)
    return BankLine(
        key,
        "f" * 64,
        day,
        date(2026, 11, day),
        Decimal(total) / 100,
        "customer_payment",
        outcome,
        False,
        payments,
    )


def test_a_line_keeps_the_payments_planned_when_it_was_first_started(ledger: Ledger) -> None:
    first = _line("k1", 2, PlannedPayment("invoice", "i1", "INV-1", 12_50))
    ledger.start_bank_lines(BILLER, [first], run_id="run-1")
    replanned = _line("k1", 2, PlannedPayment("invoice", "i2", "INV-2", 12_50))
    ledger.start_bank_lines(BILLER, [replanned], run_id="run-2")

    (kept,) = ledger.bank_lines(BILLER)
    assert kept.payments == (PlannedPayment("invoice", "i1", "INV-1", 12_50),)
    assert kept.run_id == "run-1" and not kept.done
    assert kept.amount == Decimal("12.50")


def test_finished_lines_are_done_and_found_by_booking_date(ledger: Ledger) -> None:
    lines = [
        _line("k1", 2, PlannedPayment("invoice", "i1", "INV-1", 100)),
        _line("k2", 9, PlannedPayment("invoice", "i2", "INV-2", 200)),
        _line(
            "k3",
            20,
            PlannedPayment("invoice", "i3", "INV-3", 300),
            PlannedPayment("payment_request", "p4", "PR-4", 400),
            outcome="partial",
        ),
    ]
    ledger.start_bank_lines(BILLER, lines, run_id="run-1")
    ledger.finish_bank_lines(BILLER, ["k1", "k3"], run_id="run-1")

    found = ledger.bank_lines_between(BILLER, date(2026, 11, 5), date(2026, 11, 30))
    assert [(line.line_key, line.done) for line in found] == [("k2", False), ("k3", True)]
    assert found[1].payments[1] == PlannedPayment("payment_request", "p4", "PR-4", 400)
    assert ledger.done_bank_lines(BILLER, ["k1", "k2", "k3", "k9"]) == {"k1", "k3"}
    assert ledger.bank_lines_between("another-biller", date(2026, 1, 1), date(2026, 12, 31)) == []


def test_done_lines_of_a_large_statement_are_looked_up_in_batches(ledger: Ledger) -> None:
    lines = [
        _line(f"k{n}", 1 + n % 28, PlannedPayment("invoice", f"i{n}", f"INV-{n}", 100))
        for n in range(1_200)
    ]
    ledger.start_bank_lines(BILLER, lines, run_id="run-1")
    ledger.finish_bank_lines(BILLER, [f"k{n}" for n in range(0, 1_200, 2)], run_id="run-1")

    done = ledger.done_bank_lines(BILLER, [f"k{n}" for n in range(1_200)])
    assert done == {f"k{n}" for n in range(0, 1_200, 2)}


def test_open_items_are_kept_per_run_and_a_rerun_replaces_them(ledger: Ledger) -> None:
    item = OpenItemSnapshot(
        "invoice", "i1", "INV-1", "", "Acme Ltd", Decimal("12.50"), date(2026, 12, 1), "UNPAID"
    )
    ledger.record_open_items(BILLER, "run-1", [item])
    changed = OpenItemSnapshot(
        "invoice", "i1", "INV-1", "", "Acme Ltd", Decimal("2.50"), None, "OVERDUE"
    )
    ledger.record_open_items(BILLER, "run-1", [changed])
    ledger.record_open_items(BILLER, "run-2", [item])

    assert ledger.open_items_of_run("run-1") == [changed]
    assert ledger.open_items_of_run("run-2") == [item]


def test_the_latest_open_items_of_a_biller_come_with_when_they_were_asked(ledger: Ledger) -> None:
    from datetime import UTC, datetime

    first = OpenItemSnapshot(
        "invoice", "i1", "INV-1", "", "Acme Ltd", Decimal("12.50"), None, "UNPAID", Decimal("5.00")
    )
    second = OpenItemSnapshot(
        "payment_request", "p2", "PR-2", "JUNE", "Acme Ltd", Decimal("3.00"), None, "UNPAID"
    )
    asked = datetime(2026, 11, 20, 8, 0, tzinfo=UTC)
    ledger.record_open_items(BILLER, "run-1", [first], taken_at=asked)
    ledger.record_open_items(BILLER, "run-2", [second, first], taken_at=asked.replace(hour=9))

    latest = ledger.latest_open_items(BILLER)

    assert latest is not None
    assert latest.run_id == "run-2" and latest.taken_at == asked.replace(hour=9)
    assert latest.items == [second, first] and latest.items[1].paid == Decimal("5.00")
    assert ledger.latest_open_items("another-biller") is None


@pytest.mark.slow
def test_a_platforms_hundred_thousand_open_items_are_kept_and_read_back(ledger: Ledger) -> None:
    """Soak: a run's snapshot of 100,000 open items (a few seconds of CPU each way on SQLite)."""
    items = [
        OpenItemSnapshot(
            "invoice" if n % 10 else "payment_request",
            f"i{n}",
            f"INV-{n}" if n % 10 else f"PR-{n}",
            "" if n % 10 else f"JUNE-{n}",
            f"Customer {n % 20_000} Ltd",
            Decimal(n % 90_000 + 100) / 100,
            date(2026, 12, 1 + n % 28),
            "UNPAID" if n % 3 else "OVERDUE",
            Decimal(n % 50) / 100,
        )
        for n in range(100_000)
    ]
    ledger.record_open_items(BILLER, "run-1", items)
    ledger.record_open_items(BILLER, "run-2", items[::2])

    latest = ledger.latest_open_items(BILLER)

    assert latest is not None and latest.run_id == "run-2"
    assert latest.items == items[::2]
    assert ledger.open_items_of_run("run-1") == items
