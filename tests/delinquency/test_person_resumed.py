"""A pause whose answer was lost, then resumed by a person: billops never pauses it again.

The service applies the pause and drops the connection (the sandbox's ``dropAfterCommit``), so the
run never learns it; a person then resumes the debt in the console. The next run must leave the
debt collecting (billops never fights a person, README "Pausing collection for delinquent
customers") and settle the open ledger operation as the pause it was — found at the service, not
made again (``docs/conventions.md`` §6.2 Unknown outcomes and resends).
"""

from __future__ import annotations

from pathlib import Path

from ledger import OperationState
from tests.delinquency.scenario import Scenario
from tests.delinquency.test_flow import owes, report
from tests.support.faults import clear_faults, fault_counts, plan_faults

PAUSE = "payment_requests.pause_collection"


def test_a_lost_pause_a_person_resumed_is_not_paused_again(
    scenario: Scenario, tmp_path: Path
) -> None:
    sc = scenario
    sc.customer("Ann", "pays")
    invoice = sc.invoice("Ann", "100.00", 20)
    target = sc.request_of(invoice)["id"]
    policy = owes(tmp_path)
    plan_faults(
        sc.admin,
        {"pathPrefix": f"/payment_requests/{target}:pause_collection", "dropAfterCommit": 1},
    )
    try:
        state, _ = sc.run(policy)
    finally:
        dropped = fault_counts(sc.admin)["dropAfterCommit"]
        clear_faults(sc.admin)
    assert dropped >= 1, "the pause's answer was lost"
    assert not state.is_completed() or state.name != "Applied", state.message
    assert sc.auto_collect(invoice)["paused"], "the service applied the pause it never answered"
    (op,) = sc.operations()
    assert not op.state.settled, op
    # The ledger does not claim the lost pause was not applied (it was): it may have been, and
    # the pause is idempotent, so it may be sent again.
    assert "not applied" not in (op.error or "") and "maybe applied" in (op.error or ""), op

    sc.resume_by_hand(invoice)  # a person wants this debt collected
    assert sc.auto_collect(invoice)["override"] == "RESUMED"
    pauses_before = sc.calls()[PAUSE]

    state, run = sc.run(policy)

    assert state.is_completed(), state.message
    assert sc.calls()[PAUSE] == pauses_before, "billops paused again a debt a person resumed"
    assert sc.auto_collect(invoice) == {**sc.auto_collect(invoice), "paused": False}
    (row,) = [r for r in report(run) if r["payment_request_id"] == target]
    assert (row["action"], row["plan"], row["outcome"]) == ("pause", "skipped", "skipped"), row
    assert "resumed by a person" in row["detail"] and "left collecting" in row["detail"], row
    (op,) = sc.operations()
    # It landed (a person's resume presupposes it), found at the service, not made by this run.
    assert op.state is OperationState.CONFIRMED, op
    from tasks.common.session import open_ledger

    with open_ledger() as ledger:
        audited = [e for e in ledger.audit_entries() if e.action == "delinquency:pause"]
    assert [e.details["outcome"] for e in audited] == ["found done"]

    state, run = sc.run(policy)  # and every later run leaves it as the person wants
    assert state.is_completed(), state.message
    assert sc.calls()[PAUSE] == pauses_before
    (row,) = [r for r in report(run) if r["payment_request_id"] == target]
    assert row["outcome"] == "skipped" and "resumed by a person" in row["detail"], row
