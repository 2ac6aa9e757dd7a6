"""The ledger's delinquency tables, on SQLite and PostgreSQL."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date

import pytest

from ledger import Ledger
from ledger.delinquency import Standing, operation_prefix
from tests.support.ledger_db import drop_ledger_tables

DAY = date(2027, 3, 1)


@pytest.fixture
def ledger(database_url: str) -> Iterator[Ledger]:
    if database_url.startswith("postgresql"):
        drop_ledger_tables(database_url)
    with Ledger(database_url) as opened:
        yield opened


def customer(cid: str) -> dict[str, object]:
    return {
        "customer_id": cid,
        "external_id": f"ext-{cid}",
        "name": f"Name {cid}",
        "tags": ["t1"],
        "mandate_id": "m-" + cid,
        "mandate_status": "ACTIVE",
    }


def item(iid: str, cid: str, pence: int, status: str = "UNPAID") -> dict[str, object]:
    return {
        "kind": "payment_request",
        "item_id": iid,
        "number": f"PR-{iid}",
        "customer_id": cid,
        "status": status,
        "due_on": DAY,
        "due_pence": pence,
        "invoice_id": "",
        "collection_method": "AUTO_COLLECT",
        "auto_paused": False,
        "auto_source": "NONE",
        "auto_override": "",
        "reason_code": "",
    }


def save(ledger: Ledger, run: str, items: list[dict[str, object]], **extra: object) -> int:
    header = ledger.save_delinquency_snapshot(
        biller="b",
        run_id=run,
        as_of=DAY,
        policy_name="default",
        policy_digest="abc",
        customers=[customer("c1")],
        items=items,
        **extra,  # type: ignore[arg-type]
    )
    return header.id


def test_a_snapshot_round_trips_exactly(ledger: Ledger) -> None:
    snapshot_id = save(ledger, "r1", [item("p1", "c1", 123456789012)])
    customers, items = ledger.delinquency_snapshot_rows(snapshot_id)
    assert customers.dicts() == [customer("c1")]
    assert items.dicts() == [item("p1", "c1", 123456789012)]
    assert ledger.delinquency_request_statuses(snapshot_id) == {"p1": ("UNPAID", "")}


def test_the_same_run_replaces_its_snapshot_and_the_previous_one_is_found(ledger: Ledger) -> None:
    save(ledger, "r1", [item("p1", "c1", 100, "SUBMITTED")])
    save(ledger, "r2", [item("p1", "c1", 100)])
    again = save(ledger, "r2", [item("p1", "c1", 100), item("p2", "c1", 5)])
    current = ledger.delinquency_snapshot("b")
    assert current is not None and current.id == again and current.items == 2
    previous = ledger.delinquency_snapshot("b", before_run="r2")
    assert previous is not None and previous.run_id == "r1"
    assert ledger.delinquency_request_statuses(previous.id) == {"p1": ("SUBMITTED", "")}
    assert ledger.delinquency_snapshot("b", before_run="r1") is None
    assert ledger.delinquency_snapshot("other") is None


def test_old_snapshots_are_pruned_and_failures_kept(ledger: Ledger) -> None:
    failure = {"customer_id": "c1", "payment_request_id": "p1", "observed_on": DAY, "evidence": "x"}
    for n in range(5):
        save(ledger, f"r{n}", [item("p1", "c1", 100)], failures=[failure], keep=2)
    kept = [ledger.delinquency_snapshot("b", run_id=f"r{n}") for n in range(5)]
    assert [k is not None for k in kept] == [False, False, False, True, True]
    assert [f.run_id for f in ledger.delinquency_failures("b")] == [f"r{n}" for n in range(5)]
    save(ledger, "r4", [item("p1", "c1", 100)], failures=[failure, failure], keep=2)
    assert len(ledger.delinquency_failures("b")) == 5  # once per payment request and run
    assert ledger.delinquency_failures("b", since=date(2027, 3, 2)) == []
    with pytest.raises(ValueError, match="keep at least 2"):
        save(ledger, "r9", [], keep=1)


def test_standings_are_upserted(ledger: Ledger) -> None:
    first = Standing(
        biller="b",
        customer_id="c1",
        name="One",
        state="paused",
        since=DAY,
        hold_period="h1-2027-03-01",
        hold_count=1,
        mandate_at_entry="m1",
        left_on={"warning": "2027-02-20"},
        reasons=["entered paused: 31 days overdue"],
        policy_name="default",
        policy_digest="abc",
        run_id="r1",
    )
    assert ledger.save_delinquency_standings("b", [first]) == 1
    moved = Standing(**{**first.__dict__, "state": "", "since": None, "hold_period": ""})
    ledger.save_delinquency_standings("b", [moved])
    (found,) = ledger.delinquency_standings("b")
    assert (found.state, found.since, found.hold_count, found.left_on) == (
        "",
        None,
        1,
        {"warning": "2027-02-20"},
    )
    assert found.updated_at is not None
    with pytest.raises(ValueError, match="is for biller 'b'"):
        ledger.save_delinquency_standings("x", [first])


def test_operations_are_found_by_customer_exactly(ledger: Ledger) -> None:
    for cid in ("c1", "C1", "c10", "c_"):
        key = operation_prefix("b", cid) + "h1-2027-03-01:pause:p1"
        ledger.record_intent(key=key, kind="delinquency.pause", biller="b", request_digest="d")
    ledger.record_intent(
        key=operation_prefix("other", "c1") + "x", kind="k", biller="other", request_digest="d"
    )
    found = ledger.delinquency_operations("b", ["c1", "c_"])
    assert sorted(op.key.split(":")[2] for op in found) == ["c1", "c_"]
    assert ledger.delinquency_operations("b", []) == []
