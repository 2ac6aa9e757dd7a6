"""The contract document, ``billing_api/openapi.yaml``: complete, consistent, and served as is.

The spec's operations are kept in ``tests/data/spec_operations.txt`` (method, path, status codes
its row lists); when a copy of the interface specification the contract was written from sits
beside the checkout, that snapshot is checked against it too, so a change to it cannot slip past.
"""

from __future__ import annotations

import keyword
import re
from pathlib import Path
from typing import Any

import pytest
import yaml
from fastapi.routing import APIRoute
from openapi_spec_validator import validate

from sandbox.app import API_ROUTERS
from tests.support.spec_tables import parse_snapshot, render, spec_operations

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "billing_api" / "openapi.yaml"
SNAPSHOT = Path(__file__).parent / "data" / "spec_operations.txt"
SPEC = ROOT.parent / "shared" / "spec" / "service-interface.md"
METHODS = ("get", "post", "put", "patch", "delete")
# The pause/resume section of the spec lists these for all four operations.
PAUSE_RESUME_CODES = {"204", "400", "401", "403", "404", "500"}


@pytest.fixture(scope="module")
def contract() -> dict[str, Any]:
    return yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))


def _operations(contract: dict[str, Any]) -> dict[tuple[str, str], dict[str, Any]]:
    return {
        (method.upper(), path): operation
        for path, item in contract["paths"].items()
        for method, operation in item.items()
        if method in METHODS
    }


def test_snapshot_matches_the_spec_when_it_is_beside_the_checkout() -> None:
    if not SPEC.is_file():
        pytest.skip(f"{SPEC} is not here; the committed snapshot stands in for it")
    assert render(spec_operations(SPEC.read_text())) == SNAPSHOT.read_text()


def test_the_document_is_valid_openapi_3_1(contract) -> None:
    assert contract["openapi"].startswith("3.1")
    validate(contract)


def test_every_operation_of_the_spec_is_there_and_nothing_else(contract) -> None:
    expected = parse_snapshot(SNAPSHOT)
    assert len(expected) == 75
    assert set(_operations(contract)) == set(expected)


def test_status_codes_of_the_spec_are_declared(contract) -> None:
    missing = {}
    for key, codes in parse_snapshot(SNAPSHOT).items():
        if key[1].endswith((":pause_collection", ":resume_collection")):
            codes = codes | PAUSE_RESUME_CODES
        declared = set(map(str, _operations(contract)[key]["responses"]))
        if codes - declared:
            missing[f"{key[0]} {key[1]}"] = sorted(codes - declared)
    assert missing == {}


def test_secured_operations_declare_401_and_addressed_ones_404(contract) -> None:
    gaps = []
    for (method, path), operation in _operations(contract).items():
        responses = set(map(str, operation["responses"]))
        secured = operation.get("security", contract.get("security")) not in (None, [])
        if secured and "401" not in responses:
            gaps.append(f"{method} {path}: 401")
        addressed = re.sub(r"\{clientId\}", "", path)  # a foreign clientId is 403, not 404
        if "{" in addressed and "404" not in responses:
            gaps.append(f"{method} {path}: 404")
    assert gaps == []


def test_operation_ids_tags_and_method_names(contract) -> None:
    tags = {tag["name"] for tag in contract["tags"]}
    ids = []
    for (method, path), operation in _operations(contract).items():
        where = f"{method} {path}"
        assert len(operation["tags"]) == 1, where
        tag, name = operation["tags"][0], operation["x-method"]
        assert tag in tags, where
        assert re.fullmatch(r"[a-z][a-z0-9_]*", name) and not keyword.iskeyword(name), where
        assert operation["operationId"] == f"{tag}.{name}", where
        ids.append(operation["operationId"])
    assert len(ids) == len(set(ids))
    assert {
        "invoices",
        "payment_requests",
        "customers",
        "customer_autopilot_settings",
        "mandates",
        "recurring_invoices",
        "webhooks",
        "oauth",
    } <= tags


def _expected_idempotent(method: str, path: str) -> bool:
    """The issue's rule: creates, PATCH /biller, payments:import, bulk_import, webhooks/digest,
    PUT /workflows, card_on_file:request, every :activate and the /oauth2 writes are not."""
    if method == "GET":
        return True
    if method == "POST":
        return path.endswith("/instalments/preview")
    if method == "PATCH" or path.startswith("/oauth2/"):
        return False
    return not (
        path in ("/workflows", "/apps/{clientId}/webhooks/digest")
        or path.endswith((":activate", "card_on_file:request"))
    )


def test_every_operation_says_whether_it_is_idempotent(contract) -> None:
    wrong = {
        f"{method} {path}": operation.get("x-idempotent")
        for (method, path), operation in _operations(contract).items()
        if operation.get("x-idempotent") is not _expected_idempotent(method, path)
    }
    assert wrong == {}


def test_security_schemes(contract) -> None:
    schemes = contract["components"]["securitySchemes"]
    assert schemes["oauthProduction"]["type"] == "oauth2"
    assert schemes["oauthStaging"]["type"] == "oauth2"
    assert schemes["platformBearer"] == {
        **schemes["platformBearer"],
        "type": "http",
        "scheme": "bearer",
    }
    for (_method, path), operation in _operations(contract).items():
        if path.startswith("/apps/"):
            assert operation["security"] == [{"platformBearer": []}], path


def _resolve(contract: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    while "$ref" in node:
        target: Any = contract
        for part in node["$ref"].removeprefix("#/").split("/"):
            target = target[part]
        node = target
    return node


def test_webhooks_section_covers_the_seven_event_kinds(contract) -> None:
    kinds = {"payment", "dd-mandate", "invoice", "biller", "customer", "payment-request", "payout"}
    headers = {
        "adfin-webhook-id",
        "adfin-webhook-instance-id",
        "adfin-webhook-type",
        "adfin-webhook-signature",
        "adfin-webhook-signature-timestamp",
    }
    assert set(contract["webhooks"]) == kinds
    for kind, item in contract["webhooks"].items():
        parameters = [_resolve(contract, p) for p in item["post"]["parameters"]]
        assert {p["name"] for p in parameters if p["in"] == "header"} >= headers, kind


def test_the_sandbox_serves_the_document(admin) -> None:
    served = admin.api.get("/openapi.json")
    assert served.status_code == 200
    assert served.json() == yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))


def test_sandbox_routes_are_contract_operations(contract) -> None:
    """Every sandbox route under /api names the contract operation it answers, at its path."""
    by_id = {op["operationId"]: key for key, op in _operations(contract).items()}
    routed = {}
    for router in API_ROUTERS:
        for route in router.routes:
            assert isinstance(route, APIRoute) and route.operation_id, route
            (method,) = route.methods
            routed[route.operation_id] = (method, route.path)
    assert {oid: by_id.get(oid) for oid in routed} == routed
