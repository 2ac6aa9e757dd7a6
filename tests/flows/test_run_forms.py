"""The run forms of the Prefect UI, as the deployments' parameter schemas define them: every field
described, no None/str switch, files said to be on the worker's disk, the billers offered as a
list; and no run parameter that could carry an approval."""

from __future__ import annotations

import importlib
import pkgutil
from typing import Any

import pytest
from prefect import Flow

import flows
from billops.deploy_cli import _with_choices
from flows.nightly import nightly
from flows.payment_requests import import_payment_requests


def _every_flow() -> list[Flow[Any, Any]]:
    """Every flow of the ``flows`` package: a new job's flow is checked without being listed."""
    found = []
    for module in pkgutil.iter_modules(flows.__path__):
        loaded = importlib.import_module(f"flows.{module.name}")
        found += [
            obj
            for obj in vars(loaded).values()
            if isinstance(obj, Flow) and obj.fn.__module__ == loaded.__name__
        ]
    return found


FLOWS = _every_flow()


def _schema(flow: Flow[Any, Any]) -> dict[str, Any]:
    return flow.parameters.model_dump_for_openapi()


@pytest.mark.parametrize("flow", FLOWS, ids=lambda f: f.name)
def test_every_parameter_is_described(flow: Flow[Any, Any]) -> None:
    properties = _schema(flow)["properties"]

    undescribed = [name for name, field in properties.items() if not field.get("description")]

    assert not undescribed, f"{flow.name}: no description for {undescribed}"


@pytest.mark.parametrize("flow", FLOWS, ids=lambda f: f.name)
def test_no_parameter_can_carry_an_approval(flow: Flow[Any, Any]) -> None:
    names = set(_schema(flow)["properties"])

    assert not names & {"approved_by", "approval_reason", "approver", "approve_as", "reason"}


def test_the_import_form_says_where_the_file_must_be_and_has_no_none_switch() -> None:
    properties = _schema(import_payment_requests)["properties"]

    assert "worker's disk" in properties["file"]["description"]
    assert properties["sheet"] == {**properties["sheet"], "type": "string", "default": ""}
    assert not any("anyOf" in field for field in properties.values())


def test_deploy_offers_the_biller_blocks_as_choices() -> None:
    single = _schema(import_payment_requests)
    several = _schema(nightly)

    assert _with_choices(single, ["acme", "bright"]) and _with_choices(several, ["acme"])

    assert single["properties"]["biller"]["enum"] == ["acme", "bright"]
    (array,) = [o for o in several["properties"]["billers"]["anyOf"] if o.get("type") == "array"]
    assert array["items"]["enum"] == ["acme"]
    assert not _with_choices(single, ["acme", "bright"])  # already offered: nothing to update
