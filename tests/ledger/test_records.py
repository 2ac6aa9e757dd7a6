"""Per-row outcomes of bulk imports, files seen, and the audit trail."""

from __future__ import annotations

import pytest

from ledger import FileState, ItemOutcome, Ledger, UnknownFile, UnknownOperation
from tests.support.ledger_db import FakeClock

OP = "bulk_import:b1:" + "c" * 64
SHA = "f" * 64


def item(
    ext: str,
    row: int | None,
    status: str,
    pr: str | None = None,
    run: str = "run-1",
    errors: list[str] | None = None,
    op: str = OP,
) -> ItemOutcome:
    return ItemOutcome(op, ext, row, status, pr, errors or [], run)


@pytest.fixture
def with_operation(ledger: Ledger) -> Ledger:
    ledger.record_intent(key=OP, kind="bulk_import", biller="b1", request_digest="d", run_id="r")
    return ledger


def test_items_are_upserted_by_external_id(with_operation: Ledger) -> None:
    ledger = with_operation
    ledger.record_items(
        OP,
        [
            item("ext-2", 3, "FAILED", errors=["validation: amount must be positive"]),
            item("ext-1", 2, "CREATED", "pr-1"),
        ],
    )
    # The chunk sent again (its first outcome unknown): the newer outcome replaces the older.
    ledger.record_items(OP, [item("ext-1", 2, "UNCHANGED", "pr-1", run="run-2")])
    assert ledger.items(OP) == [
        item("ext-1", 2, "UNCHANGED", "pr-1", run="run-2"),
        item("ext-2", 3, "FAILED", errors=["validation: amount must be positive"]),
    ]
    assert [i.external_id for i in ledger.items_for_run("run-1")] == ["ext-2"]
    assert [i.external_id for i in ledger.items_for_run("run-2")] == ["ext-1"]
    assert ledger.items_for_run("run-3") == []


def test_items_without_an_external_id_stay_apart(with_operation: Ledger) -> None:
    with_operation.record_items(OP, [item("", 4, "FAILED"), item("", 5, "FAILED")])
    assert [i.row_number for i in with_operation.items(OP)] == [4, 5]


def test_a_big_batch_of_items_is_recorded(with_operation: Ledger) -> None:
    rows = [item(f"ext-{n}", n + 2, "CREATED", f"pr-{n}") for n in range(1500)]
    with_operation.record_items(OP, rows)
    assert with_operation.items(OP) == rows


def test_items_need_their_operation(ledger: Ledger) -> None:
    with pytest.raises(UnknownOperation, match="no operation 'nope'"):
        ledger.record_items("nope", [item("e", 2, "CREATED", op="nope")])


def test_items_of_another_operation_are_refused(with_operation: Ledger) -> None:
    with pytest.raises(ValueError, match=r"item 1 \(externalId 'e2'\) belongs to operation 'x'"):
        with_operation.record_items(
            OP, [item("e1", 2, "CREATED"), item("e2", 3, "CREATED", op="x")]
        )
    assert with_operation.items(OP) == []


def test_a_file_seen_again_says_when_and_by_which_run(ledger: Ledger, clock: FakeClock) -> None:
    assert ledger.file_seen(SHA, biller="b1", kind="payment_requests") is None
    first_seen = clock.now
    ledger.record_file(
        sha256=SHA,
        name="requests.csv",
        size=2048,
        folder="/drop",
        biller="b1",
        kind="payment_requests",
        run_id="run-1",
        state=FileState.IMPORTING,
    )
    clock.advance(minutes=3)
    done = ledger.update_file(
        SHA,
        biller="b1",
        kind="payment_requests",
        state=FileState.IMPORTED,
        report_path="/drop/requests.report.csv",
    )
    assert (done.state, done.report_path, done.run_id) == (
        FileState.IMPORTED,
        "/drop/requests.report.csv",
        "run-1",
    )
    seen = ledger.file_seen(SHA, biller="b1", kind="payment_requests")
    assert seen is not None and seen == done
    assert seen.created_at == first_seen and seen.updated_at == clock.now
    assert (seen.name, seen.size, seen.folder) == ("requests.csv", 2048, "/drop")
    # Same bytes for another biller, or as another kind of file, is another file.
    assert ledger.file_seen(SHA, biller="b2", kind="payment_requests") is None
    assert ledger.file_seen(SHA, biller="b1", kind="bank_statement") is None


def test_recording_a_known_file_again_keeps_its_first_date(
    ledger: Ledger, clock: FakeClock
) -> None:
    args = {"sha256": SHA, "size": 1, "folder": "/in", "biller": "b", "kind": "k"}
    first = ledger.record_file(name="a.csv", run_id="run-1", state=FileState.IMPORTED, **args)
    clock.advance(days=1)
    importing = FileState.IMPORTING
    forced = ledger.record_file(name="a-copy.csv", run_id="run-2", state=importing, **args)
    assert forced.created_at == first.created_at
    assert (forced.name, forced.run_id, forced.state) == ("a-copy.csv", "run-2", importing)
    moved = ledger.update_file(SHA, biller="b", kind="k", state=FileState.IMPORTED, run_id="run-3")
    assert moved.run_id == "run-3" and moved.report_path is None


def test_bad_file_records_are_refused(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="sha256 must be 64 lowercase hex digits, got 'abc'"):
        ledger.file_seen("abc", biller="b", kind="k")
    with pytest.raises(ValueError, match="file 'a.csv': size must be a whole number of bytes"):
        ledger.record_file(
            sha256=SHA,
            name="a.csv",
            size=-1,
            folder="/",
            biller="b",
            kind="k",
            run_id=None,
            state=FileState.REJECTED,
        )
    with pytest.raises(UnknownFile, match=f"no k file with SHA-256 {SHA} recorded for biller 'b'"):
        ledger.update_file(SHA, biller="b", kind="k", state=FileState.IMPORTED)


def test_audit_records_who_what_and_why(ledger: Ledger, clock: FakeClock) -> None:
    approval = ledger.audit(
        actor="alice",
        action="approve:delete-missing payment requests",
        subject="acme:prs.csv",
        reason="year-end clean-up",
        approver="alice",
        comment="checked with finance",
        run_id="run-9",
        details={"payment_requests": 12},
    )
    clock.advance(seconds=1)
    ledger.audit(
        actor="billops",
        action="void-payment-request",
        subject="payment_request:pr-1",
        run_id="run-9",
    )
    ledger.audit(actor="billops", action="other", subject="acme:prs.csv", run_id="run-10")
    assert approval.id > 0 and approval.at.tzinfo is not None
    assert ledger.audit_entries(subject="acme:prs.csv")[0] == approval
    assert [e.action for e in ledger.audit_entries(run_id="run-9")] == [
        "approve:delete-missing payment requests",
        "void-payment-request",
    ]
    assert [e.run_id for e in ledger.audit_entries(subject="acme:prs.csv", run_id="run-10")] == [
        "run-10"
    ]
    assert len(ledger.audit_entries()) == 3


@pytest.mark.parametrize("field", ["actor", "action", "subject"])
def test_an_audit_entry_must_say_who_what_and_to_what(ledger: Ledger, field: str) -> None:
    entry = {"actor": "a", "action": "b", "subject": "c", field: " "}
    with pytest.raises(ValueError, match=f"audit {field} must be a non-empty string"):
        ledger.audit(**entry)


def test_audit_details_must_be_json(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="audit details: .*a set is not JSON"):
        ledger.audit(actor="a", action="b", subject="c", details={"ids": {1, 2}})
    assert ledger.audit_entries() == []
