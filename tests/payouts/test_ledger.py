"""The payout tables on SQLite and PostgreSQL: a report kept once (its items, one compressed block
per payout, rewritten only when they change), credits kept once with the days their statement
covered, results updated in place (the first state and since when kept), the sums the balance
is built from."""

from __future__ import annotations

from datetime import date

import pyarrow as pa
import pytest
from sqlalchemy import text

from ledger import Ledger
from ledger._payout_blocks import items_digest
from ledger.errors import LedgerError
from ledger.payouts import (
    ITEM_FIELDS,
    BankCoverage,
    PayoutCredit,
    PayoutRecord,
    PayoutResult,
    items_table,
)
from tasks.payouts._items import from_ledger
from tasks.payouts._scope import paid_out_twice
from tests.support.ledger_db import FakeClock, clock, ledger, ledger_url

__all__ = ["clock", "ledger", "ledger_url"]

BILLER = "biller-1"


def _payout(pid: str, day: date, items: list[int]) -> PayoutRecord:
    return PayoutRecord(
        payout_id=pid,
        reference=f"ADFIN-PO-{pid.upper()}",
        arrival_date=day,
        amount_pennies=sum(items),
        gross_pennies=sum(i for i in items if i > 0),
        deduction_pennies=-sum(i for i in items if i < 0),
        item_count=len(items),
        report_sha256="sha",
    )


def _items(pid: str, amounts: list[int], payments: list[str]) -> list[tuple[object, ...]]:
    return [
        (pid, n, "PAYMENT" if a > 0 else "DEDUCTION", a, p, "", f"PR-{n}", "", "", "Cust", "")
        for n, (a, p) in enumerate(zip(amounts, payments, strict=True))
    ]


def test_a_report_is_kept_once_and_changed_items_replace_the_old(ledger: Ledger) -> None:
    first = [_payout("a", date(2027, 3, 1), [100, 200]), _payout("b", date(2027, 3, 2), [50])]
    items = _items("a", [100, 200], ["p1", "p2"]) + _items("b", [50], ["p3"])

    assert ledger.record_payout_report(BILLER, first, items_table(items)).new == 2
    again = ledger.record_payout_report(BILLER, first, items_table(items))
    changed = [_payout("a", date(2027, 3, 1), [100, 200, -100])]
    rewrite = ledger.record_payout_report(
        BILLER, changed, items_table(_items("a", [100, 200, -100], ["p1", "p2", "p1"]))
    )

    assert (again.new, again.changed, again.unchanged) == (0, 0, 2)
    assert (rewrite.new, rewrite.changed) == (0, 1)
    assert ledger.payout_items(BILLER, ["a"]).column("amount_pennies").to_pylist() == [
        100,
        200,
        -100,
    ]
    assert ledger.payout_items(BILLER, ["b", "a"]).to_pylist() == [
        dict(zip(ITEM_FIELDS, item, strict=True))
        for item in _items("a", [100, 200, -100], ["p1", "p2", "p1"]) + _items("b", [50], ["p3"])
    ]
    assert [
        p.payout_id for p in ledger.payouts_between(BILLER, date(2027, 3, 1), date(2027, 3, 1))
    ] == ["a"]
    assert ledger.payout_span(BILLER) == (date(2027, 3, 1), date(2027, 3, 2))
    assert ledger.payout_net_before(BILLER, date(2027, 3, 2)) == 200
    everything, payouts = ledger.all_payout_items(BILLER)
    assert [p.payout_id for p in payouts] == ["a", "b"]
    assert everything.column("payout_id").to_pylist() == ["a", "a", "a", "b"]
    others, payouts = ledger.all_payout_items(BILLER, besides={"a"})
    assert [p.payout_id for p in payouts] == ["b"] and others.num_rows == 1
    assert ledger.payout_span("someone-else") is None


def test_the_same_items_read_another_way_are_unchanged(ledger: Ledger) -> None:
    """The digest is of the items, not of how their table was built: items in the report's
    frame order, shuffled between payouts, from tuples or from pandas, are the same items."""
    payouts = [_payout("a", date(2027, 3, 1), [100, 200]), _payout("b", date(2027, 3, 2), [50])]
    rows = _items("b", [50], ["p3"]) + _items("a", [100, 200], ["p1", "p2"])
    ledger.record_payout_report(BILLER, payouts, items_table(rows))
    shuffled = items_table([rows[2], rows[0], rows[1]]).to_pandas()
    as_pandas = pa.Table.from_pandas(shuffled, preserve_index=False)

    assert ledger.record_payout_report(BILLER, payouts, as_pandas).unchanged == 2
    (kept,) = ledger.payouts_by_id(BILLER, ["a"])
    assert kept.items_digest == items_digest([row[1:] for row in rows[1:]])


def test_a_report_whose_counts_disagree_with_its_items_keeps_nothing(ledger: Ledger) -> None:
    payouts = [_payout("a", date(2027, 3, 1), [100, 200])]

    with pytest.raises(LedgerError, match=r"payout a: 2 item\(s\) said, 1 given"):
        ledger.record_payout_report(BILLER, payouts, items_table(_items("a", [100], ["p1"])))
    with pytest.raises(LedgerError, match="payout items name payout.*'z'"):
        ledger.record_payout_report(
            BILLER,
            payouts,
            items_table(_items("a", [100, 200], ["p1", "p2"]) + _items("z", [1], ["p"])),
        )
    assert ledger.payout_span(BILLER) is None


def test_a_block_is_a_zstd_frame_of_an_arrow_stream(ledger: Ledger) -> None:
    """The documented format, read with nothing of billops: any zstd and Arrow reader."""
    payouts = [_payout("a", date(2027, 3, 1), [100, -40])]
    ledger.record_payout_report(BILLER, payouts, items_table(_items("a", [100, -40], ["p1", "p1"])))
    with ledger.engine.connect() as connection:
        fmt, block = connection.execute(
            text("SELECT items_format, items_block FROM ledger_payouts WHERE payout_id = 'a'")
        ).one()

    assert fmt == "arrow-ipc-zstd/1" and bytes(block).startswith(b"\x28\xb5\x2f\xfd")
    stream = pa.input_stream(pa.py_buffer(bytes(block)), compression="zstd")
    table = pa.ipc.open_stream(stream).read_all()
    assert table.column_names == list(ITEM_FIELDS[1:])
    assert table.column("amount_pennies").to_pylist() == [100, -40]


def test_a_payment_in_two_payouts_is_found(ledger: Ledger) -> None:
    payouts = [_payout("a", date(2027, 3, 1), [100]), _payout("b", date(2027, 3, 2), [100])]
    ledger.record_payout_report(
        BILLER, payouts, items_table(_items("a", [100], ["p1"]) + _items("b", [100], ["p1"]))
    )

    assert paid_out_twice(from_ledger(*ledger.all_payout_items(BILLER))) == {"p1": ["a", "b"]}


def test_credits_are_kept_once_with_the_days_their_statement_covered(ledger: Ledger) -> None:
    credit = PayoutCredit("k1", date(2027, 3, 2), 300, "ADFIN", "ADFIN-PO-A", "", "s1", 7)
    coverage = BankCoverage("s1", date(2027, 3, 1), date(2027, 3, 5), 40)

    assert ledger.record_payout_credits(BILLER, [credit], coverage) == 1
    assert ledger.record_payout_credits(BILLER, [credit], coverage) == 0
    ledger.record_payout_credits(
        BILLER, [], BankCoverage("s2", date(2027, 2, 20), date(2027, 3, 9), 9)
    )

    assert ledger.payout_credits_between(BILLER, date(2027, 3, 1), date(2027, 3, 3)) == [credit]
    assert ledger.bank_coverage(BILLER) == (date(2027, 2, 20), date(2027, 3, 9))


def test_results_update_in_place_and_remember_where_they_started(
    ledger: Ledger, clock: FakeClock
) -> None:
    waiting = PayoutResult("payout", "a", "in_transit", date(2027, 3, 1), 300)
    ledger.record_payout_results(BILLER, [waiting], run_id="r1")
    started = ledger.payout_results(BILLER)[0].state_since
    clock.advance(days=1)
    ledger.record_payout_results(BILLER, [waiting], run_id="r2")
    assert ledger.payout_results(BILLER)[0].state_since == started
    clock.advance(days=1)
    matched = PayoutResult("payout", "a", "matched", date(2027, 3, 1), 300, linked=("k1",))
    credit = PayoutResult("credit", "k1", "matched", date(2027, 3, 2), 300, linked=("a",))
    ledger.record_payout_results(BILLER, [matched, credit], run_id="r3")

    (payout,) = ledger.payout_results(BILLER, "payout")
    assert (payout.state, payout.first_state, payout.run_id) == ("matched", "in_transit", "r3")
    assert payout.state_since is not None and started is not None and payout.state_since > started
    assert len(ledger.payout_results(BILLER)) == 2
    assert ledger.paid_out_before(BILLER, date(2027, 3, 2)) == 0
    assert ledger.paid_out_before(BILLER, date(2027, 3, 3)) == 300


def test_a_payout_shown_again_with_another_amount_date_or_reference_is_updated(
    ledger: Ledger,
) -> None:
    """The same items under a corrected payout (the console's export shows the payout's amount,
    arrival date or bank reference differently): the ledger keeps what the latest report shows,
    as it does when the items change, or the period's checks go on using the old payout."""
    items = items_table(_items("a", [100, 200], ["p1", "p2"]))
    first = _payout("a", date(2027, 3, 1), [100, 200])
    ledger.record_payout_report(BILLER, [first], items)
    moved = PayoutRecord(
        payout_id="a",
        reference="ADFIN-PO-A2",
        arrival_date=date(2027, 3, 2),
        amount_pennies=299,
        gross_pennies=300,
        deduction_pennies=0,
        item_count=2,
        report_sha256="sha-2",
    )

    stored = ledger.record_payout_report(BILLER, [moved], items)

    assert (stored.new, stored.changed, stored.unchanged) == (0, 1, 0)
    (kept,) = ledger.payouts_by_id(BILLER, ["a"])
    assert (kept.reference, kept.arrival_date, kept.amount_pennies) == (
        "ADFIN-PO-A2",
        date(2027, 3, 2),
        299,
    )
    assert ledger.record_payout_report(BILLER, [moved], items).unchanged == 1
