"""Check 2 on hand-made payouts and credits: by reference (one to one, split, several payouts on
one credit, a credit naming only one of the payouts it carries), by amount (suggested, with a
confidence), and what waits (in transit while young, missing once older than the window of
England-and-Wales working days)."""

from __future__ import annotations

from datetime import date

from tasks.common.working_days import add_working_days, working_days_between
from tasks.payouts._match import (
    IN_TRANSIT,
    MATCHED,
    MISSING,
    SUGGESTED,
    WITH_DIFFERENCE,
    Side,
    match_credits,
)

MONDAY = date(2027, 3, 1)
COVERAGE = (date(2027, 2, 1), date(2027, 3, 31))


def payout(pid: str, day: date, pennies: int, ref: str = "") -> Side:
    return Side(pid, day, pennies, ref or f"ADFIN-PO-{pid.upper()}")


def credit(key: str, day: date, pennies: int, text: str) -> Side:
    return Side(key, day, pennies, text)


def test_one_to_one_by_reference_and_a_difference_of_a_penny() -> None:
    found = match_credits(
        [payout("a", MONDAY, 10_000), payout("b", MONDAY, 5_000)],
        [
            credit("c1", MONDAY, 10_000, "ADFIN-PO-A ADFIN"),
            credit("c2", MONDAY, 4_999, "ADFIN-PO-B"),
        ],
        window=3,
        coverage=COVERAGE,
    )

    a, b = found.of_payout("a"), found.of_payout("b")
    assert a is not None and a.state == MATCHED and a.credits == ["c1"]
    assert b is not None and b.state == WITH_DIFFERENCE and b.difference == -1
    assert "£0.01 less" in b.how


def test_one_payout_split_in_two_credits() -> None:
    found = match_credits(
        [payout("a", MONDAY, 10_000)],
        [
            credit("c1", MONDAY, 6_000, "ADFIN-PO-A 1/2"),
            credit("c2", MONDAY, 4_000, "ADFIN-PO-A 2/2"),
        ],
        window=3,
        coverage=COVERAGE,
    )

    link = found.of_payout("a")
    assert link is not None and link.state == MATCHED and sorted(link.credits) == ["c1", "c2"]
    assert "split in 2 credits" in link.how


def test_two_payouts_on_one_credit_naming_both_or_only_one() -> None:
    both = match_credits(
        [payout("a", MONDAY, 10_000), payout("b", MONDAY, 2_500)],
        [credit("c", MONDAY, 12_500, "ADFIN-PO-A ADFIN-PO-B")],
        window=3,
        coverage=COVERAGE,
    )
    one = match_credits(
        [payout("a", MONDAY, 10_000), payout("b", MONDAY, 2_500), payout("x", MONDAY, 999)],
        [credit("c", MONDAY, 12_500, "ADFIN-PO-A")],
        window=3,
        coverage=COVERAGE,
    )

    for found in (both, one):
        link = found.of_payout("b")
        assert link is not None and link.state == MATCHED and sorted(link.payouts) == ["a", "b"]
    assert one.waiting["x"][0] == MISSING  # nobody credited x: 20 working days on
    assert "the credit does not name" in str(one.of_payout("a").how)  # type: ignore[union-attr]


def test_amount_only_is_a_suggestion_with_a_confidence_and_never_matched() -> None:
    near = match_credits(
        [payout("a", MONDAY, 10_000, ref="")],
        [credit("c", add_working_days(MONDAY, 1), 10_000, "BACS CREDIT")],
        window=3,
        coverage=COVERAGE,
    )
    far = match_credits(
        [payout("a", MONDAY, 10_000, ref="")],
        [credit("c", add_working_days(MONDAY, 3), 10_000, "BACS CREDIT")],
        window=3,
        coverage=COVERAGE,
    )
    ambiguous = match_credits(
        [payout("a", MONDAY, 10_000, ref=""), payout("b", MONDAY, 10_000, ref="")],
        [credit("c", MONDAY, 10_000, "BACS CREDIT")],
        window=3,
        coverage=COVERAGE,
    )

    (link,) = near.links
    assert link.state == SUGGESTED and link.confidence == 0.8
    assert far.links[0].confidence == 0.6
    assert ambiguous.links[0].confidence == 0.45 and len(ambiguous.waiting) == 1


def test_a_credit_equal_to_two_payouts_is_suggested_for_both() -> None:
    found = match_credits(
        [payout("a", MONDAY, 3_000, ref=""), payout("b", MONDAY, 4_000, ref="")],
        [credit("c", MONDAY, 7_000, "BACS CREDIT")],
        window=3,
        coverage=COVERAGE,
    )

    (link,) = found.links
    assert link.state == SUGGESTED and sorted(link.payouts) == ["a", "b"] and link.confidence == 0.5


def test_a_payout_without_credit_waits_for_the_window_of_working_days() -> None:
    # Good Friday and Easter Monday 2027 (26 and 29 March) are England-and-Wales bank holidays.
    thursday = date(2027, 3, 25)
    statement_ends = date(2027, 3, 31)
    assert working_days_between(thursday, statement_ends) == 2
    young = match_credits(
        [payout("a", thursday, 100)], [], window=2, coverage=(MONDAY, statement_ends)
    )
    old = match_credits(
        [payout("a", thursday, 100)], [], window=1, coverage=(MONDAY, statement_ends)
    )
    later = match_credits(
        [payout("a", date(2027, 4, 1), 100)], [], window=1, coverage=(MONDAY, statement_ends)
    )
    before = match_credits([payout("a", thursday, 100)], [], window=1, coverage=None)

    assert young.waiting["a"][0] == IN_TRANSIT
    assert old.waiting["a"] == (
        MISSING,
        "no credit on the bank statements 2 working days after its arrival date "
        "(expected within 1)",
    )
    assert later.waiting["a"][0] == IN_TRANSIT and "after the last day" in later.waiting["a"][1]
    assert before.waiting["a"] == (IN_TRANSIT, "no bank statement seen yet")


def test_a_credit_nobody_explains_is_unexpected() -> None:
    found = match_credits(
        [payout("a", MONDAY, 100)],
        [credit("c", MONDAY, 100, "ADFIN-PO-A"), credit("d", MONDAY, 555, "ADFIN-PO-ZZZ")],
        window=3,
        coverage=COVERAGE,
    )

    assert found.unexpected == ["d"]
