"""resolve_operations: what a resolver says about each unsettled operation is recorded."""

from __future__ import annotations

from ledger import Ledger, Operation, OperationState, Resolution, resolve_operations

S = OperationState


def seed(ledger: Ledger) -> None:
    for key in ("done", "refused", "running", "lost", "never", "boom", "settled"):
        ledger.record_intent(key=key, kind="bulk_import", biller="b1", request_digest=key)
        ledger.claim(key, worker="crashed")
    ledger.mark_unknown("lost", error="dropped connection")
    ledger.mark_confirmed("settled")
    ledger.record_intent(key="other-biller", kind="bulk_import", biller="b2", request_digest="x")


def resolver(op: Operation) -> Resolution:
    """What a service would answer, by key (a pure function: no HTTP to fake)."""
    answers = {
        "done": Resolution(S.CONFIRMED, remote_id="job-1", result={"status": "COMPLETED"}),
        "refused": Resolution(S.FAILED, error="validation: bad file", note="job FAILED"),
        "running": Resolution(S.SENT, remote_id="job-3", note="job still RUNNING"),
        "lost": Resolution(S.UNKNOWN, error="still cannot tell"),
        "never": Resolution(S.INTENDED, note="no job with this file: send again"),
    }
    if op.key == "boom":
        raise ConnectionError("service unreachable")
    return answers[op.key]


def test_each_resolution_is_recorded_and_audited(ledger: Ledger) -> None:
    seed(ledger)
    outcomes = {o.key: o for o in resolve_operations(ledger, resolver, biller="b1", run_id="r")}
    assert set(outcomes) == {"done", "refused", "running", "lost", "never", "boom"}
    assert {k: (o.before, o.after) for k, o in outcomes.items()} == {
        "done": (S.SENT, S.CONFIRMED),
        "refused": (S.SENT, S.FAILED),
        "running": (S.SENT, S.SENT),
        "lost": (S.UNKNOWN, S.UNKNOWN),
        "never": (S.SENT, S.INTENDED),
        "boom": (S.SENT, S.SENT),
    }
    assert outcomes["boom"].error == "ConnectionError: service unreachable"
    done, running = ledger.get("done"), ledger.get("running")
    assert done is not None and done.remote_id == "job-1" and done.result == {"status": "COMPLETED"}
    assert running is not None and running.remote_id == "job-3"
    refused = ledger.get("refused")
    assert refused is not None and refused.error == "validation: bad file"
    audited = {e.subject: e.details for e in ledger.audit_entries(run_id="r")}
    assert audited["operation:done"] == {"from": "sent", "to": "confirmed", "remote_id": "job-1"}
    assert audited["operation:never"] == {"from": "sent", "to": "intended", "remote_id": None}
    assert "operation:lost" not in audited and "operation:boom" not in audited
    other = ledger.get("other-biller")
    assert other is not None and other.state == S.INTENDED


def test_a_resolver_that_settles_the_ledger_itself_is_not_applied_twice(ledger: Ledger) -> None:
    ledger.record_intent(key="k", kind="bulk_import", biller="b", request_digest="d")
    ledger.claim("k", worker="w")
    ledger.mark_sent("k", remote_id="job-1")

    def settle_and_say(op: Operation) -> Resolution:
        ledger.mark_confirmed(op.key, result={"by": "resolver"})
        return Resolution(S.CONFIRMED, result={"by": "resolution"})

    (outcome,) = resolve_operations(ledger, settle_and_say)
    assert (outcome.before, outcome.after, outcome.error) == (S.SENT, S.CONFIRMED, None)
    op = ledger.get("k")
    assert op is not None and op.result == {"by": "resolver"}


def test_nothing_unsettled_resolves_to_nothing(ledger: Ledger) -> None:
    assert resolve_operations(ledger, resolver) == []
