"""``billops policy check``, ``billops run pause-delinquent`` and ``billops delinquency status``
from the command line, in process, against the session's Prefect API and a sandbox."""

from __future__ import annotations

import json
import uuid
from pathlib import Path

from typer.testing import CliRunner

from billops.cli import app
from tests.delinquency.scenario import Scenario, write_policy
from tests.delinquency.test_flow import OWES

runner = CliRunner()


def invoke(*args: str) -> tuple[int, str]:
    result = runner.invoke(app, list(args))
    return result.exit_code, result.output


def flat(text: str) -> str:
    """Output without line breaks and the borders of typer's error box."""
    return " ".join(text.replace("│", " ").split())


def test_policy_check_names_the_line_of_a_mistake(tmp_path: Path) -> None:
    code, out = invoke("policy", "check", "tasks/delinquency/default_policy.yaml")
    assert code == 0 and "policy 'default'" in out and "is valid" in out
    bad = write_policy(tmp_path, "name: x\nstates:\n  - name: p\n    enter: [{days_overdue: -1}]\n")
    code, out = invoke("policy", "check", str(bad))
    assert code == 1
    assert "line 4, column 5: states[0].enter.all[0].days_overdue" in flat(out)


def test_apply_without_an_approval_is_a_usage_error() -> None:
    code, out = invoke("run", "pause-delinquent", "--biller", "nobody", "--apply")
    assert code == 2 and "--apply needs --approve-as NAME --reason TEXT" in flat(out)


def test_a_dry_run_then_an_approved_run_then_the_status(scenario: Scenario, tmp_path: Path) -> None:
    sc = scenario
    sc.customer("Ann", "pays")
    sc.invoice("Ann", "100.00", 20)
    policy = str(write_policy(tmp_path, OWES.format(automatic="false", customers=5, amount="500")))
    day = sc.today().isoformat()
    common = ("run", "pause-delinquent", "--biller", sc.block, "--policy", policy, "--as-of", day)

    code, out = invoke(*common, "--format", "jsonl")
    assert code == 0, out
    lines = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    *rows, summary = lines
    assert [(r["action"], r["outcome"]) for r in rows] == [("pause", "would send")]
    assert summary["summary"]["state"] == "Dry run" and summary["summary"]["calls"] == 1
    assert sc.calls()["payment_requests.pause_collection"] == 0

    code, out = invoke(*common, "--apply", "--approve-as", "Dana", "--reason", "overdue")
    assert code == 0, out
    assert "Applied" in out and "delinquency-report.csv" in out.replace("\n", "")
    assert sc.calls()["payment_requests.pause_collection"] == 1

    code, out = invoke("delinquency", "status", "--biller", sc.block, "--format", "jsonl")
    assert code == 0, out
    (status,) = [json.loads(line) for line in out.splitlines() if line.startswith("{")]
    assert (status["state"], status["since"]) == ("paused", day)
    assert status["why"].startswith("entered paused: unpaid at least £1.00")


def test_a_day_before_the_previous_run_is_refused(scenario: Scenario, tmp_path: Path) -> None:
    sc = scenario
    policy = str(write_policy(tmp_path, OWES.format(automatic="false", customers=5, amount="500")))
    common = ("run", "pause-delinquent", "--biller", sc.block, "--policy", policy)
    assert invoke(*common, "--as-of", "2027-03-05")[0] == 0
    code, out = invoke(*common, "--as-of", "2027-03-04")
    assert code == 1 and "would count days and failures backwards" in flat(out)
    assert invoke(*common, "--as-of", "04/03/2027")[0] == 2


def test_ledger_resolve_settles_calls_in_doubt_by_asking_the_service(scenario: Scenario) -> None:
    """``billops ledger resolve`` hands each unsettled operation to its kind's resolver: a pause
    the service shows applied is confirmed, one it does not is sendable again, and a kind with no
    resolver is reported, not guessed at."""
    from ledger import OperationState
    from tasks.common.session import open_ledger
    from tasks.delinquency.history import operation_key

    sc = scenario
    customer = sc.customer("Bea", "pays")
    applied, not_applied = sc.invoice("Bea", "40.00", 20), sc.invoice("Bea", "60.00", 20)
    keys = {}
    with open_ledger() as ledger:
        for label, invoice in (("applied", applied), ("not applied", not_applied)):
            target = sc.request_of(invoice)["id"]
            key = operation_key(sc.biller_id, customer["id"], "h1-2027-03-01", "pause", target)
            ledger.record_intent(
                key=key,
                kind="delinquency.pause",
                biller=sc.biller_id,
                request_digest=f"pause:{target}:AUTO_COLLECT",
                payload={"target": target},
            )
            ledger.claim(key, worker="gone:1:-")
            ledger.mark_unknown(key, error="connection dropped")  # the answer was lost
            keys[label] = key
        other = f"other:{sc.biller_id}:1"
        ledger.record_intent(key=other, kind="other.write", biller=sc.biller_id, request_digest="d")
    sc.pause_by_hand(applied)  # what the lost call did at the service

    code, out = invoke("ledger", "resolve", "--biller", sc.block)

    assert code == 1, out  # the kind without a resolver is an error to look at
    rows = {
        key: next(row for row in out.splitlines() if key in row) for key in [*keys.values(), other]
    }
    assert rows[keys["applied"]].startswith("unknown -> confirmed"), out
    assert rows[keys["not applied"]].startswith("unknown -> intended"), out
    assert "no resolver for other.write operations" in rows[other], out
    assert "1 of 3 settled, 1 errors." in out
    with open_ledger() as ledger:
        assert ledger.get(keys["applied"]).state is OperationState.CONFIRMED  # type: ignore[union-attr]
        assert ledger.get(keys["not applied"]).state is OperationState.INTENDED  # type: ignore[union-attr]
    assert sc.calls()["payment_requests.pause_collection"] == 1  # the operator's; resolve sent none


def test_an_unusable_policy_is_rejected_with_exit_code_3(
    prefect: None, dlq_home: Path, tmp_path: Path
) -> None:
    from blocks import BillerCredentials
    from tests.delinquency.test_flow import OWES

    block = f"dlq-bad-policy-{uuid.uuid4().hex[:6]}"  # never used: the policy is refused first
    BillerCredentials(
        environment="sandbox",
        base_url="http://127.0.0.1:9/api",
        client_id="app",
        client_secret="unused",
        refresh_token="unused",
    ).save(block)
    bad = write_policy(tmp_path, OWES.format(automatic="maybe", customers=5, amount="500"))
    code, out = invoke("run", "pause-delinquent", "--biller", block, "--policy", str(bad))
    assert code == 3, out
    assert "Rejected" in out and "line 2" in flat(out) and "report:" not in out


def test_a_day_after_today_is_refused_for_a_live_service(
    prefect: None, dlq_home: Path, tmp_path: Path
) -> None:
    """A run stores its snapshot and no later run may look at an earlier day, so one run dated
    next month (even a dry run) held back every nightly run until then. Refused before the
    service is read (the block names the live service, which the test never reaches)."""
    from datetime import timedelta

    import sqlalchemy as sa

    from blocks import BillerCredentials
    from ledger.settings import BillopsSettings
    from tasks.common.working_days import london_today

    block = f"dlq-live-{uuid.uuid4().hex[:6]}"
    BillerCredentials(
        environment="production", client_id="app", client_secret="unused", refresh_token="unused"
    ).save(block)
    policy = write_policy(tmp_path, OWES.format(automatic="false", customers=5, amount="500"))
    later = (london_today() + timedelta(days=30)).isoformat()

    code, out = invoke(
        "run", "pause-delinquent", "--biller", block, "--policy", str(policy), "--as-of", later
    )

    assert code == 3, out
    assert "Rejected" in out and f"as_of {later} is after today" in flat(out), out
    engine = sa.create_engine(BillopsSettings().ledger_database_url)
    with engine.connect() as connection:
        stored = connection.execute(sa.text("SELECT COUNT(*) FROM ledger_delinquency_snapshots"))
        assert stored.scalar_one() == 0  # nothing stored for a later day
    engine.dispose()
