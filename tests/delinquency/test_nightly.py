"""The job in the nightly run, its deployment and its run form."""

from __future__ import annotations

from pathlib import Path

import yaml
from prefect.artifacts import Artifact

from flows.delinquency import pause_delinquent_customers
from flows.nightly import nightly
from tests.delinquency.scenario import Scenario
from tests.delinquency.test_flow import OWES

ROOT = Path(__file__).resolve().parents[2]


def own_policy(home: Path, block: str, automatic: bool) -> None:
    folder = home / "policies"
    folder.mkdir(exist_ok=True)
    text = OWES.format(automatic=str(automatic).lower(), customers=5, amount="500")
    (folder / f"{block}.yaml").write_text(text, encoding="utf-8")


def test_the_nightly_run_applies_where_the_billers_policy_allows_it(
    scenario: Scenario, dlq_home: Path
) -> None:
    sc = scenario
    sc.customer("Ann", "pays")
    invoice = sc.invoice("Ann", "100.00", 20)
    own_policy(dlq_home, sc.block, automatic=True)
    (result,) = nightly(billers=[sc.block])
    assert result.ok and result.delinquency.startswith("Applied: 1 customers changed state")
    assert sc.auto_collect(invoice)["paused"]
    summary = Artifact.get("nightly-summary")
    assert summary is not None and "Applied: 1 customers changed state" in str(summary.data)


def test_the_nightly_run_only_plans_under_the_shipped_policy(
    scenario: Scenario, dlq_home: Path
) -> None:
    sc = scenario
    sc.customer("Ann", "pays")
    invoice = sc.invoice("Ann", "100.00", 20)
    own_policy(dlq_home, sc.block, automatic=False)
    (result,) = nightly(billers=[sc.block])
    assert result.ok and result.delinquency.startswith("Planned only: 1 calls for 1 customers")
    assert "apply.automatic: false" in result.delinquency
    assert not sc.auto_collect(invoice)["paused"] and sc.standings() == {}


def test_every_parameter_of_the_run_form_is_described_and_none_approves() -> None:
    properties = pause_delinquent_customers.parameters.model_dump_for_openapi()["properties"]
    assert [name for name, field in properties.items() if not field.get("description")] == []
    assert "worker's disk" in properties["policy"]["description"]
    assert not set(properties) & {"approved_by", "approval_reason", "approver", "reason"}


def test_the_deployment_runs_the_flow_as_a_dry_run_by_default() -> None:
    config = yaml.safe_load((ROOT / "deployments" / "prefect.yaml").read_text(encoding="utf-8"))
    (deployment,) = [d for d in config["deployments"] if d["name"] == "pause-delinquent-customers"]
    assert deployment["entrypoint"] == "flows.delinquency:pause_delinquent_customers"
    assert deployment["parameters"]["dry_run"] is True
    assert deployment["enforce_parameter_schema"] is True
