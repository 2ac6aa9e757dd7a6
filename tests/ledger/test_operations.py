"""The operations protocol: intent → claim → sent → confirmed, and every way it may go wrong."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import pytest

from ledger import (
    InvalidTransition,
    Ledger,
    LedgerConflict,
    Operation,
    OperationState,
    UnknownOperation,
)
from tests.support.ledger_db import FakeClock

KEY = "bulk_import:biller-1:" + "a" * 64


def intend(ledger: Ledger, key: str = KEY, *, biller: str = "biller-1", digest: str = "d1") -> None:
    ledger.record_intent(
        key=key,
        kind="bulk_import",
        biller=biller,
        request_digest=digest,
        run_id="run-1",
        payload={"rows": 3, "lines": {"ext-1": 2}},
    )


def test_the_protocol_from_intent_to_confirmed(ledger: Ledger, clock: FakeClock) -> None:
    first = ledger.record_intent(
        key=KEY,
        kind="bulk_import",
        biller="biller-1",
        request_digest="d1",
        run_id="run-1",
        payload={"rows": 3},
    )
    assert first.created and first.operation.state == OperationState.INTENDED
    assert first.operation.attempts == 0 and first.operation.created_at == clock.now

    clock.advance(seconds=1)
    claimed = ledger.claim(KEY, worker="host:1:run-1")
    assert claimed is not None
    assert claimed.state == OperationState.SENT and claimed.in_flight
    assert claimed.claimed_by == "host:1:run-1" and claimed.attempts == 1
    assert claimed.sent_at == clock.now

    clock.advance(seconds=1)
    sent = ledger.mark_sent(KEY, remote_id="job-7")
    assert sent.state == OperationState.SENT and sent.remote_id == "job-7" and not sent.in_flight
    assert sent.attempts == 1, "mark_sent after claim is the same attempt"

    clock.advance(seconds=5)
    done = ledger.mark_confirmed(KEY, result={"status": "COMPLETED", "counts": {"CREATED": 3}})
    assert done.state == OperationState.CONFIRMED and done.remote_id == "job-7"
    assert done.result == {"status": "COMPLETED", "counts": {"CREATED": 3}}
    assert done.settled_at == clock.now and done.settled_at.tzinfo is not None
    assert done.payload == {"rows": 3}


def test_a_rerun_finds_the_row_and_cannot_claim_a_settled_one(ledger: Ledger) -> None:
    intend(ledger)
    assert ledger.claim(KEY, worker="w1") is not None
    ledger.mark_sent(KEY, remote_id="job-1")
    again = ledger.record_intent(
        key=KEY, kind="bulk_import", biller="biller-1", request_digest="d1"
    )
    assert not again.created
    assert again.operation.state == OperationState.SENT and again.operation.remote_id == "job-1"
    assert again.operation.run_id == "run-1", "the first run's intent is kept"
    assert ledger.claim(KEY, worker="w2") is None, "a known job is polled, never resent"
    ledger.mark_confirmed(KEY)
    assert ledger.claim(KEY, worker="w2") is None


@pytest.mark.parametrize(
    ("field", "value"),
    [("request_digest", "d2"), ("kind", "payments_import"), ("biller", "biller-2")],
)
def test_the_same_key_for_a_different_request_is_a_conflict(
    ledger: Ledger, field: str, value: str
) -> None:
    intend(ledger)
    request = {"key": KEY, "kind": "bulk_import", "biller": "biller-1", "request_digest": "d1"}
    request[field] = value
    with pytest.raises(LedgerConflict, match=rf"{KEY}.*different request.*{value}"):
        ledger.record_intent(**request)
    unchanged = ledger.get(KEY)
    assert unchanged is not None and unchanged.request_digest == "d1"


def test_an_unknown_outcome_may_be_claimed_again(ledger: Ledger) -> None:
    intend(ledger)
    assert ledger.claim(KEY, worker="w1") is not None
    unknown = ledger.mark_unknown(KEY, error="ReadTimeout after 30 s")
    assert unknown.state == OperationState.UNKNOWN and unknown.error == "ReadTimeout after 30 s"
    again = ledger.claim(KEY, worker="w2")
    assert again is not None and again.attempts == 2 and again.claimed_by == "w2"
    assert again.error is None
    assert ledger.mark_sent(KEY, remote_id="job-2").remote_id == "job-2"


def test_an_in_flight_claim_is_taken_over_only_once_stale(ledger: Ledger, clock: FakeClock) -> None:
    intend(ledger)
    assert ledger.claim(KEY, worker="crashed") is not None
    clock.advance(minutes=9)
    assert ledger.claim(KEY, worker="w2", stale_after=timedelta(minutes=10)) is None
    assert ledger.claim(KEY, worker="w2") is None, "without stale_after a claim is never stale"
    clock.advance(minutes=2)
    taken = ledger.claim(KEY, worker="w2", stale_after=timedelta(minutes=10))
    assert taken is not None and taken.claimed_by == "w2" and taken.attempts == 2


def test_an_in_flight_claim_of_a_dead_worker_is_taken_over(ledger: Ledger) -> None:
    intend(ledger)
    ledger.claim(KEY, worker="host-a:4242:run-1")
    seen: list[str | None] = []

    def dead_if_pid_4242(op: Operation) -> bool:
        seen.append(op.claimed_by)
        return op.claimed_by == "host-a:4242:run-1"

    assert ledger.claim(KEY, worker="host-a:999:run-2", holder_dead=lambda op: False) is None
    taken = ledger.claim(KEY, worker="host-a:999:run-2", holder_dead=dead_if_pid_4242)
    assert taken is not None and taken.claimed_by == "host-a:999:run-2" and taken.attempts == 2
    assert seen == ["host-a:4242:run-1"]
    # The new holder is alive by the same judge: nobody takes it from run-2.
    assert ledger.claim(KEY, worker="host-a:7:run-3", holder_dead=dead_if_pid_4242) is None


def test_a_job_whose_id_is_known_is_never_stale(ledger: Ledger, clock: FakeClock) -> None:
    intend(ledger)
    ledger.claim(KEY, worker="w1")
    ledger.mark_sent(KEY, remote_id="job-1")
    clock.advance(days=3)
    assert ledger.claim(KEY, worker="w2", stale_after=timedelta(seconds=1)) is None
    assert ledger.claim(KEY, worker="w2", holder_dead=lambda op: True) is None


def test_release_hands_an_unsent_operation_back(ledger: Ledger) -> None:
    intend(ledger)
    ledger.claim(KEY, worker="w1")
    released = ledger.release(KEY, reason="the service has no such job")
    assert released.state == OperationState.INTENDED and released.claimed_by is None
    assert ledger.claim(KEY, worker="w2") is not None


def test_settled_operations_stay_settled(ledger: Ledger) -> None:
    intend(ledger)
    ledger.claim(KEY, worker="w1")
    ledger.mark_failed(KEY, error="validation: file has no rows")
    assert ledger.mark_failed(KEY, error="again").error == "validation: file has no rows"
    for change in (
        lambda: ledger.mark_confirmed(KEY),
        lambda: ledger.mark_sent(KEY, remote_id="x"),
        lambda: ledger.mark_unknown(KEY, error="x"),
        lambda: ledger.release(KEY, reason="x"),
    ):
        with pytest.raises(InvalidTransition, match=rf"{KEY}.*is failed; it cannot become"):
            change()


def test_a_send_without_claim_still_counts_as_an_attempt(ledger: Ledger) -> None:
    intend(ledger)
    sent = ledger.mark_sent(KEY, remote_id="job-1")
    assert sent.attempts == 1 and sent.sent_at is not None


def test_unsettled_lists_open_operations_by_biller_and_kind(
    ledger: Ledger, clock: FakeClock
) -> None:
    for n, biller in enumerate(["b1", "b1", "b2", "b1"]):
        clock.advance(seconds=1)
        intend(ledger, f"bulk_import:{biller}:{n}", biller=biller)
    ledger.record_intent(
        key="payments_import:b1:x", kind="payments_import", biller="b1", request_digest="x"
    )
    ledger.claim("bulk_import:b1:1", worker="w")
    ledger.mark_unknown("bulk_import:b1:1", error="dropped")
    ledger.mark_confirmed("bulk_import:b1:3")
    keys = [op.key for op in ledger.unsettled(biller="b1", kinds=["bulk_import"])]
    assert keys == ["bulk_import:b1:0", "bulk_import:b1:1"]
    assert len(ledger.unsettled()) == 4
    counts = ledger.state_counts(biller="b1")
    assert counts == {
        OperationState.INTENDED: 2,
        OperationState.SENT: 0,
        OperationState.CONFIRMED: 1,
        OperationState.FAILED: 0,
        OperationState.UNKNOWN: 1,
    }


def test_money_in_a_payload_keeps_every_digit(ledger: Ledger) -> None:
    from decimal import Decimal

    on = datetime(2026, 11, 22, tzinfo=UTC)
    payload = {"amount": Decimal("1234.50"), "on": on}
    ledger.record_intent(
        key="k", kind="payments_import", biller="b", request_digest="d", payload=payload
    )
    op = ledger.get("k")
    assert op is not None and op.payload == {"amount": "1234.50", "on": "2026-11-22T00:00:00+00:00"}


def test_a_payload_that_is_not_json_is_refused(ledger: Ledger) -> None:
    with pytest.raises(ValueError, match="payload of operation 'k': .*a bytes is not JSON"):
        ledger.record_intent(
            key="k", kind="x", biller="b", request_digest="d", payload={"content": b"raw"}
        )
    assert ledger.get("k") is None


def test_unknown_keys_are_named(ledger: Ledger) -> None:
    assert ledger.get("nope") is None
    with pytest.raises(UnknownOperation, match="no operation 'nope' in the ledger"):
        ledger.claim("nope", worker="w")
    with pytest.raises(UnknownOperation, match="no operation 'nope'"):
        ledger.mark_confirmed("nope")


@pytest.mark.parametrize(
    ("field", "value", "message"),
    [
        ("key", "", "key must be a non-empty string"),
        ("kind", "  ", "kind must be a non-empty string"),
        ("biller", "", "biller must be a non-empty string"),
        ("request_digest", "", "request_digest must be a non-empty string"),
        ("key", "k" * 401, "401 characters long; at most 400"),
    ],
)
def test_bad_intents_are_refused_with_the_field_named(
    ledger: Ledger, field: str, value: str, message: str
) -> None:
    request = {"key": KEY, "kind": "bulk_import", "biller": "b", "request_digest": "d"}
    request[field] = value
    with pytest.raises(ValueError, match=message):
        ledger.record_intent(**request)
    assert ledger.unsettled() == []


def test_a_naive_clock_is_refused(ledger_url: str) -> None:
    naive = Ledger(ledger_url, clock=lambda: datetime(2026, 1, 1))
    with naive, pytest.raises(ValueError, match="timezone-aware"):
        intend(naive)
