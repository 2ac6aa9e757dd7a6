"""Suggestions when there is nothing to score: unmatched customer credits whose payers resemble
no customer and whose texts hold no digit (so no candidate at all), beside open items."""

from __future__ import annotations

from tasks.bank_payments._owed import items_frame
from tasks.bank_payments._plan import plan_statement
from tests.bank_payments.test_suggestions import _item, _statement


def test_credits_with_no_candidate_at_all_are_left_unmatched() -> None:
    items = items_frame([_item("INV-1", "Harbour Dental Practice", "250.00")])
    statement = _statement(
        [
            ("250.00", "ZED QUUX", "THANKS"),  # no name like a customer's, no digit
            ("12.00", "NOBODY KNOWN", ""),
        ]
    )

    plan = plan_statement(statement, items)

    assert [line.outcome for line in plan.lines] == ["unmatched", "unmatched"]
    assert all(line.suggestions == [] and not line.allocations for line in plan.lines)
