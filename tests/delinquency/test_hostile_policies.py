"""The hostile-input sweep's policy part: every broken policy of the policy tests
(``test_policy.MISTAKES``) given to the job itself, one after another, for a biller with a
customer the good policy would pause. Each run is refused naming the file, the line and the
mistake; nothing is sent to the service or recorded; the nightly run reports a broken policy
at the biller's usual place in its summary; and the good policy afterwards pauses the customer."""

from __future__ import annotations

from pathlib import Path

from flows.delinquency import pause_delinquent_customers
from flows.nightly import nightly
from ledger import Ledger
from ledger.settings import BillopsSettings
from tests.delinquency.scenario import PAUSE_OPS, Scenario
from tests.delinquency.test_nightly import own_policy
from tests.delinquency.test_policy import MISTAKES


def test_every_broken_policy_is_refused_and_nothing_is_sent_then_a_good_one_applies(
    scenario: Scenario, dlq_home: Path, tmp_path: Path
) -> None:
    sc = scenario
    sc.customer("Ann", "pays")
    invoice = sc.invoice("Ann", "100.00", 20)

    refusals = []
    for number, (text, where, says) in enumerate(MISTAKES):
        path = tmp_path / f"policy-{number}.yaml"
        path.write_text(text, encoding="utf-8")
        state = pause_delinquent_customers(sc.block, policy=path, dry_run=False, return_state=True)
        refusals.append((state.name, str(state.message)))
        assert state.name == "Rejected", (path.name, state)
        assert f"{path}, {where}" in str(state.message) and says in str(state.message)
        assert "nothing was sent" in str(state.message)
    usual = dlq_home / "policies" / f"{sc.block}.yaml"
    usual.parent.mkdir(parents=True, exist_ok=True)
    usual.write_text(MISTAKES[0][0], encoding="utf-8")
    state = nightly(billers=[sc.block], return_state=True)
    (night,) = state.result()

    # The night itself goes on (its other jobs ran); the summary's delinquency column says why
    # nothing was done, and the biller's and the night's outcomes say something was refused.
    assert night.delinquency.startswith("Rejected: ") and str(usual) in night.delinquency, night
    assert night.outcome == "Completed with rejections", night
    assert state.name == "Completed with rejections" and state.is_completed(), state
    assert str(state.message).startswith(f"{sc.block} refused input."), state.message
    assert sc.calls() == dict.fromkeys(PAUSE_OPS, 0)
    assert not sc.auto_collect(invoice)["paused"] and sc.standings() == {}
    with Ledger(BillopsSettings().ledger_database_url) as ledger:
        kinds = {op.kind for op in ledger.operations(biller=sc.biller_id)}
    assert not [k for k in kinds if "collection" in k or "pause" in k], kinds

    own_policy(dlq_home, sc.block, automatic=True)
    (again,) = nightly(billers=[sc.block])
    assert again.delinquency.startswith("Applied: 1 customers changed state"), again
    assert again.outcome == "Completed", again
    assert sc.auto_collect(invoice)["paused"]
