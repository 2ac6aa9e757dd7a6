"""The bank job's deployment in deployments/prefect.yaml: its entrypoint is the flow, its
parameters are valid for the flow's form, and it is a dry run unless a person turns that off."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import yaml
from prefect.utilities.callables import parameter_schema

from flows.bank_payments import import_bank_payments

PREFECT_YAML = Path(__file__).resolve().parents[2] / "deployments" / "prefect.yaml"


def _deployment(name: str) -> dict[str, Any]:
    document = yaml.safe_load(PREFECT_YAML.read_text(encoding="utf-8"))
    (found,) = [d for d in document["deployments"] if d["name"] == name]
    return dict(found)


def test_the_bank_deployment_is_the_flow_as_a_dry_run_with_a_described_form() -> None:
    deployment = _deployment("import-bank-payments")
    assert deployment["entrypoint"] == "flows.bank_payments:import_bank_payments"
    assert deployment["parameters"]["dry_run"] is True
    assert deployment["enforce_parameter_schema"] is True
    schema = parameter_schema(import_bank_payments.fn).model_dump()
    properties = schema["properties"]
    assert set(deployment["parameters"]) <= set(properties)
    assert set(schema["required"]) == {"file", "biller"}
    # every parameter of the form says what it does
    assert all(properties[name].get("description") for name in properties), properties
    assert properties["on_bad_lines"]["enum"] == ["reject_file", "skip"]
