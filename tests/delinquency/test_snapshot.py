"""The snapshot: failures seen between runs, money in exact pence, and what the service says,
read page by page and stored per run."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import date
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest

from billing_api import BillingClient, StaticTokenAuth
from billing_api.types import PaymentRequest
from ledger import Ledger
from tasks.delinquency import take
from tasks.delinquency.policy import load_policy
from tasks.delinquency.snapshot import (
    item_frame,
    observe_failures,
    payment_request_row,
    to_pence,
    to_pounds,
)
from tasks.delinquency.take import SnapshotError, load_snapshot, take_snapshot
from tests.delinquency.test_contract_rules import Biller
from tests.support.sandbox_admin import SandboxAdmin

DAY = date(2027, 3, 10)


def pr(item_id: str, status: str, *, due: int = 5000, reason: str = "") -> dict[str, Any]:
    return {
        "kind": "payment_request",
        "item_id": item_id,
        "customer_id": "c1",
        "status": status,
        "due_pence": due,
        "reason_code": reason,
    }


def observed(previous: dict[str, str], *rows: dict[str, Any]) -> list[tuple[str, str]]:
    before = {k: (v, "") if isinstance(v, str) else v for k, v in previous.items()}
    found = observe_failures(
        before, item_frame(rows), as_of=DAY, failure_reason_codes=["COLLECTION_FAILED"]
    )
    return list(zip(found["payment_request_id"], found["evidence"], strict=True))


def test_a_debit_going_back_from_submitted_is_a_failure() -> None:
    assert observed({"p1": "SUBMITTED"}, pr("p1", "SCHEDULED")) == [
        ("p1", "debit refused (SUBMITTED → SCHEDULED)")
    ]
    assert observed({"p1": "SUBMITTED"}, pr("p1", "PAID", due=0)) == []
    assert observed({"p1": "SUBMITTED"}, pr("p1", "SUBMITTED")) == []


def test_a_paid_debt_unpaid_again_is_a_late_failure() -> None:
    assert observed({"p1": "PAID"}, pr("p1", "UNPAID")) == [
        ("p1", "paid, then reversed (PAID → UNPAID)")
    ]


def test_a_failure_reason_counts_when_it_appears_and_not_again() -> None:
    failed = pr("p1", "SCHEDULED", reason="COLLECTION_FAILED")
    assert observed({}, failed) == [("p1", "status reason COLLECTION_FAILED when first seen")]
    assert observed({"p1": "SCHEDULED"}, failed) == [
        ("p1", "status reason COLLECTION_FAILED since the previous run")
    ]  # refused while no run was looking: its SUBMITTED days fell between two runs
    assert observed({"p1": ("SCHEDULED", "COLLECTION_FAILED")}, failed) == []
    assert observed({}, pr("p1", "SCHEDULED", reason="SOMETHING_ELSE")) == []


def test_pence_are_exact_both_ways() -> None:
    assert to_pence(Decimal("1234567.89")) == 123456789
    assert to_pounds(123456789) == Decimal("1234567.89")
    with pytest.raises(ValueError, match="fraction of a penny"):
        to_pence(Decimal("0.005"))


def test_a_payment_request_row_reads_the_auto_collect_state() -> None:
    request = PaymentRequest.model_validate(
        {
            "id": "p1",
            "paymentRequestNo": "PR-1",
            "status": "REQUESTED",  # the old name: read as UNPAID
            "totalAmount": 100.5,
            "paidAmount": 0.25,
            "currencyCode": "GBP",
            "creationTime": "2027-03-01T09:00:00Z",
            "customer": {"id": "c1"},
            "invoiceIds": ["i1"],
            "distribution": {"collectionMethod": "AUTO_COLLECT"},
            "collection": {
                "methods": [
                    {
                        "method": "AUTO_COLLECT",
                        "paused": True,
                        "source": "PAYMENT_REQUEST",
                        "override": "PAUSED",
                    },
                ]
            },
        }
    )
    row = payment_request_row(request)
    assert row is not None
    assert (row["status"], row["due_pence"], row["invoice_id"]) == ("UNPAID", 10025, "i1")
    assert (row["auto_paused"], row["auto_source"], row["auto_override"]) == (
        True,
        "PAYMENT_REQUEST",
        "PAUSED",
    )


@pytest.fixture
def ledger(database_url: str) -> Iterator[Ledger]:
    from tests.support.ledger_db import drop_ledger_tables

    if database_url.startswith("postgresql"):
        drop_ledger_tables(database_url)
    with Ledger(database_url) as opened:
        yield opened


def test_the_service_is_read_page_by_page_and_stored_per_run(
    admin: SandboxAdmin, ledger: Ledger, monkeypatch: pytest.MonkeyPatch
) -> None:
    biller = Biller(admin, admin.connect_biller())
    for _ in range(5):
        biller.debt()
    monkeypatch.setattr(take, "PAGE_SIZE", 2)  # several pages of everything
    client = BillingClient(f"{admin.root}/api", StaticTokenAuth(biller.tokens.access_token))
    policy = load_policy()
    try:
        first = take_snapshot(client, ledger, policy, biller="b", run_id="r1", as_of=DAY)
        assert len(first.customers) == 1 and first.customers["mandate_status"][0] == "PENDING"
        kinds = first.items["kind"].value_counts().to_dict()
        assert kinds == {"invoice": 5, "payment_request": 5}
        assert set(first.items["status"]) == {"SCHEDULED"}
        assert int(first.items["due_pence"].sum()) == 10 * 7500
        header = ledger.delinquency_snapshot("b", run_id="r1")
        assert header is not None and (header.customers, header.items) == (1, 10)
        again = load_snapshot(ledger, policy, header)
        columns = ["kind", "item_id", "status", "due_on", "due_pence", "auto_paused"]
        left = again.items.sort_values("item_id")[columns].reset_index(drop=True)
        right = first.items.sort_values("item_id")[columns].reset_index(drop=True)
        assert left.equals(right)
        with pytest.raises(SnapshotError, match="count days and failures backwards"):
            take_snapshot(client, ledger, policy, biller="b", run_id="r2", as_of=date(2027, 3, 9))
    finally:
        client.close()
        biller.api.close()


def test_unknown_statuses_with_money_due_count_as_debts(tmp_path: Path) -> None:
    rows = [pr("p1", "IN_DISPUTE"), pr("p2", "PAID", due=100)]
    frame = item_frame(rows)
    assert list(frame["status"]) == ["IN_DISPUTE", "PAID"]
    from tasks.delinquency.metrics import compute_figures
    from tasks.delinquency.snapshot import Snapshot

    snapshot = Snapshot.from_records(
        biller="b", as_of=DAY, customers=[{"customer_id": "c1"}], items=rows
    )
    figures = compute_figures(snapshot, [None])
    assert int(figures.unpaid_pence[0]) == 5000 and int(figures.unpaid_debts[0]) == 1


def test_tags_named_by_the_policy_are_asked_of_the_service(
    admin: SandboxAdmin, ledger: Ledger
) -> None:
    """The customer list's tagIds filter says who carries a tag (the sandbox's customers carry
    none, so nobody is in scope and nobody is in a state)."""
    from tasks.delinquency.evaluate import evaluate, standing_frame
    from tasks.delinquency.policy import parse_policy

    biller = Biller(admin, admin.connect_biller())
    biller.debt()
    policy = parse_policy(
        "name: tagged\ninclude: {tags: [vip]}\nstates:\n"
        "  - name: s\n    enter: [{unpaid_amount_at_least: 1}]\n"
    )
    client = BillingClient(f"{admin.root}/api", StaticTokenAuth(biller.tokens.access_token))
    try:
        snapshot = take_snapshot(client, ledger, policy, biller="b", run_id="r1", as_of=DAY)
    finally:
        client.close()
        biller.api.close()
    assert list(snapshot.customers["tags"]) == [()]
    assert evaluate(snapshot, policy, standing_frame([])).involved.empty
    requests = admin.biller_stats(biller.tokens.biller_id).get("requests", {})
    assert requests.get("customers.list", 0) == 2  # once for the tag, once for everyone
