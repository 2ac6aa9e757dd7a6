"""The flow against the sandbox: dry run, approval, the nightly schedule's permission and cap, a
crash at each crash point, a stopped run, reports and artifacts."""

from __future__ import annotations

import csv
import os
from pathlib import Path
from typing import Any

import pytest

from ledger import OperationState
from tasks.common.crash_points import CRASH_ENV, CRASH_POINTS, SimulatedCrash
from tasks.common.outcome import ATTENTION_EVENT
from tasks.delinquency.approval import unattended
from tests.delinquency.scenario import Scenario, ok, write_policy
from tests.support.prefect_api import flow_run_events

# Everyone who owes a pound is delinquent: the mechanics, without waiting for thresholds.
OWES = """\
name: owes
apply: {{automatic: {automatic}, max_customers: {customers}, max_amount: "{amount}"}}
states:
  - name: paused
    enter: [{{unpaid_amount_at_least: "1.00"}}]
    leave: [{{unpaid_amount_below: "1.00"}}]
    on_enter: [pause_auto_collect]
    on_leave: [resume_collection]
"""


def owes(
    tmp_path: Path, automatic: bool = False, customers: int = 10, amount: str = "1000.00"
) -> Path:
    text = OWES.format(automatic=str(automatic).lower(), customers=customers, amount=amount)
    return write_policy(tmp_path, text)


def two_debtors(sc: Scenario) -> list[dict[str, Any]]:
    sc.customer("Ann", "pays")
    sc.customer("Bob", "pays")
    return [sc.invoice("Ann", "100.00", 20), sc.invoice("Bob", "60.00", 20)]


def report(run: Any) -> list[dict[str, str]]:
    with Path(run.report).open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))


def test_a_dry_run_lists_every_call_and_changes_nothing(scenario: Scenario, tmp_path: Path) -> None:
    sc = scenario
    invoices = two_debtors(sc)
    state, run = sc.run(owes(tmp_path), apply=False, approver=None)
    assert (state.name, state.is_completed()) == ("Dry run", True)
    assert run.report.name == "delinquency-plan.csv"
    rows = report(run)
    assert {(r["customer"].split()[0], r["action"], r["outcome"]) for r in rows} == {
        ("Ann", "pause", "would send"),
        ("Bob", "pause", "would send"),
    }
    assert {r["amount"] for r in rows} == {"100.00", "60.00"}
    assert all(r["rule"].startswith("entered paused: unpaid at least £1.00") for r in rows)
    assert sc.standings() == {} and sc.operations() == []
    assert sc.calls()["payment_requests.pause_collection"] == 0
    assert not any(sc.auto_collect(i)["paused"] for i in invoices)


def test_applying_needs_an_approval_and_records_who_gave_it(
    scenario: Scenario, tmp_path: Path
) -> None:
    sc = scenario
    invoices = two_debtors(sc)
    state, _ = sc.run(owes(tmp_path), approver=None)
    assert state.name == "Needs approval" and "--approve-as NAME --reason TEXT" in state.message
    assert sc.calls()["payment_requests.pause_collection"] == 0 and sc.standings() == {}
    state, run = sc.run(owes(tmp_path), approver="Dana Tester")
    assert state.name == "Applied" and run.report.name == "delinquency-report.csv"
    assert {r["outcome"] for r in report(run)} == {"done"}
    assert all(sc.auto_collect(i)["paused"] for i in invoices)
    assert {s.state for s in sc.standings().values()} == {"paused"}
    from tasks.common.session import open_ledger

    with open_ledger() as ledger:
        entries = ledger.audit_entries()
    approvals = [e for e in entries if e.action.startswith("approve:")]
    assert [(e.approver, e.reason) for e in approvals] == [("Dana Tester", "test run")]
    pauses = [e for e in entries if e.action == "delinquency:pause"]
    assert {e.approver for e in pauses} == {"Dana Tester"} and len(pauses) == 2
    assert all(e.reason and e.reason.startswith("entered paused") for e in pauses)


@pytest.mark.parametrize(
    ("automatic", "cap", "expected"),
    [
        (False, "1000.00", "Planned only"),
        (True, "1000.00", "Applied"),
        (True, "99.99", "Needs approval"),
    ],
)
def test_the_nightly_schedule_applies_only_where_allowed_and_within_the_cap(
    scenario: Scenario, tmp_path: Path, automatic: bool, cap: str, expected: str
) -> None:
    sc = scenario
    two_debtors(sc)
    with unattended():
        state, run = sc.run(owes(tmp_path, automatic=automatic, amount=cap), approver=None)
    assert state.name == expected, state.message
    made = sc.calls()["payment_requests.pause_collection"]
    assert made == (2 if expected == "Applied" else 0)
    if expected == "Needs approval":
        assert "over the cap (£160.00 (cap £99.99))" in state.message
        # A person must look: the event an automation turns into a message.
        (event,) = flow_run_events(state.state_details.flow_run_id, ATTENTION_EVENT)
        assert event.payload["outcome"] == "Needs approval"
    if expected == "Applied":
        from tasks.common.session import open_ledger

        with open_ledger() as ledger:
            pauses = [e for e in ledger.audit_entries() if e.action == "delinquency:pause"]
        assert {e.actor for e in pauses} == {"billops nightly (automatic, within the cap)"}
        assert {e.approver for e in pauses} == {None}


def test_a_second_run_on_the_same_day_makes_no_call(scenario: Scenario, tmp_path: Path) -> None:
    sc = scenario
    two_debtors(sc)
    policy = owes(tmp_path)
    assert sc.run(policy)[0].name == "Applied"
    state, _ = sc.run(policy)
    assert state.name == "Nothing to do"
    assert sc.calls()["payment_requests.pause_collection"] == 2


APPLYING_POINTS = [p for p in CRASH_POINTS if p != "mid_poll"]  # the job polls nothing


@pytest.mark.parametrize("point", APPLYING_POINTS)
def test_a_crash_at_each_point_then_a_rerun_makes_each_call_exactly_once(
    scenario: Scenario, tmp_path: Path, point: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    sc = scenario
    invoices = two_debtors(sc)
    policy = owes(tmp_path)
    monkeypatch.setenv(CRASH_ENV, point)
    try:
        state, _ = sc.run(policy)
        crashed: BaseException | None = None
        assert not state.is_completed()
    except BaseException as exc:  # the crash itself, as a real one would end the run
        crashed = exc
    assert CRASH_ENV not in os.environ, "the crash point was reached"
    assert crashed is None or isinstance(crashed, SimulatedCrash) or point in str(crashed)
    state, run = sc.run(policy)
    assert state.is_completed(), state.message
    assert sc.calls()["payment_requests.pause_collection"] == 2  # once per debt, never twice
    assert all(sc.auto_collect(i)["paused"] for i in invoices)
    ops = sc.operations()
    assert len(ops) == 2 and {op.state for op in ops} == {OperationState.CONFIRMED}
    assert {s.state for s in sc.standings().values()} == {"paused"}


def test_a_refused_token_stops_the_run_and_a_rerun_finishes_it(
    scenario: Scenario, tmp_path: Path
) -> None:
    """A token that may not write (403): the run stops, says which calls were not made and
    why; the rerun with a writable token makes them."""
    from blocks import BillerCredentials

    sc = scenario
    invoices = two_debtors(sc)
    policy = owes(tmp_path)
    writable = sc.block
    stored = BillerCredentials.load_named(writable)
    app = type(
        "App",
        (),
        {"client_id": stored.client_id, "client_secret": stored.client_secret.get_secret_value()},
    )()
    code = sc.admin.authorization_code(app, sc.biller_id, read_only=True)  # type: ignore[arg-type]
    tokens = ok(sc.admin.token(app, grant_type="authorization_code", code=code))  # type: ignore[arg-type]
    sc.block = f"{writable}-ro"
    BillerCredentials(
        environment="sandbox",
        base_url=stored.base_url,
        client_id=stored.client_id,
        client_secret=stored.client_secret,
        refresh_token=tokens["refresh_token"],
    ).save(sc.block)
    state, run = sc.run(policy)
    assert (state.name, state.is_failed()) == ("Stopped", True)
    assert "403: the biller's token does not allow updating payment requests" in state.message
    assert {r["outcome"] for r in report(run)} == {"not sent"}
    assert not any(sc.auto_collect(i)["paused"] for i in invoices)
    sc.block = writable
    state, run = sc.run(policy)
    assert state.name == "Applied" and all(sc.auto_collect(i)["paused"] for i in invoices)


def test_reports_neutralise_formulas_and_artifacts_hang_on_the_run(
    scenario: Scenario, tmp_path: Path
) -> None:
    sc = scenario
    sc.customer("Evil", "pays", name='=HYPERLINK("http://x")')
    sc.invoice("Evil", "12.34", 20)
    state, run = sc.run(owes(tmp_path), apply=False, approver=None)
    (row,) = report(run)
    assert row["customer"].startswith("'=HYPERLINK") and row["amount"] == "12.34"
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterKey

    key = f"delinquency-{sc.block}"
    with get_client(sync_client=True) as client:
        found = client.read_artifacts(
            artifact_filter=ArtifactFilter(key=ArtifactFilterKey(like_=key))
        )
    assert {a.key for a in found} == {f"{key}-summary", f"{key}-plan"}
    assert {str(a.flow_run_id) for a in found} == {str(state.state_details.flow_run_id)}


def test_an_unusable_policy_ends_the_run_rejected_with_its_line(
    prefect: None, dlq_home: Path, tmp_path: Path
) -> None:
    """Bad input ends in a named state, as every job's does: ``Rejected``, completed, the reason
    naming the file and line, a person alerted; nothing read or sent (no service is needed)."""
    from flows.delinquency import pause_delinquent_customers

    bad = write_policy(tmp_path, OWES.format(automatic="maybe", customers=5, amount="500"))
    state = pause_delinquent_customers(biller="no-such-block", policy=bad, return_state=True)
    assert (state.name, state.is_completed()) == ("Rejected", True), state.message
    assert str(bad) in state.message and "line 2" in state.message, state.message
    assert state.message.endswith("nothing was sent")
    run = state.result()
    assert (run.state, run.exit_code, run.report, run.calls) == ("Rejected", 3, None, 0)
    (event,) = flow_run_events(state.state_details.flow_run_id, ATTENTION_EVENT)
    assert event.payload["outcome"] == "Rejected"
