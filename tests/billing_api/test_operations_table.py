"""``billing_api/_operations.py`` says exactly what the contract says (parsed data, not text).

The table is generated; when the contract changes this test fails until the table is regenerated
with ``python scripts/gen_operations.py``.
"""

from __future__ import annotations

import pathlib
from typing import Any

import pytest
import yaml

from billing_api._operations import OPERATIONS, Operation

CONTRACT = pathlib.Path(__file__).resolve().parents[2] / "billing_api" / "openapi.yaml"
METHODS = ("get", "post", "put", "patch", "delete", "head", "options")
REGENERATE = "regenerate it: .venv/bin/python scripts/gen_operations.py"


@pytest.fixture(scope="module")
def contract_operations() -> dict[str, tuple[str, str, Any, dict[str, Any]]]:
    """operationId -> (METHOD, path, x-idempotent, the operation object) from the contract."""
    document = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    found: dict[str, tuple[str, str, Any, dict[str, Any]]] = {}
    for path, item in document["paths"].items():
        for method in METHODS:
            operation = item.get(method)
            if operation is not None:
                found[operation["operationId"]] = (
                    method.upper(),
                    path,
                    operation.get("x-idempotent"),
                    operation,
                )
    return found


def test_the_table_lists_every_operation_of_the_contract_and_no_other(
    contract_operations: dict[str, tuple[str, str, Any, dict[str, Any]]],
) -> None:
    missing = sorted(set(contract_operations) - set(OPERATIONS))
    extra = sorted(set(OPERATIONS) - set(contract_operations))

    assert not missing and not extra, (
        f"_operations.py is stale (missing {missing}, not in the contract {extra}); {REGENERATE}"
    )


def test_method_path_and_idempotency_match_the_contract(
    contract_operations: dict[str, tuple[str, str, Any, dict[str, Any]]],
) -> None:
    expected = {
        op_id: Operation(op_id, method, path, idempotent)
        for op_id, (method, path, idempotent, _) in contract_operations.items()
    }
    differing = {
        op_id: (OPERATIONS.get(op_id), wanted)
        for op_id, wanted in expected.items()
        if OPERATIONS.get(op_id) != wanted
    }

    assert not differing, f"_operations.py disagrees with the contract: {differing}; {REGENERATE}"


def test_every_operation_declares_x_idempotent_as_a_boolean(
    contract_operations: dict[str, tuple[str, str, Any, dict[str, Any]]],
) -> None:
    undeclared = sorted(
        op_id
        for op_id, (_, _, flag, _) in contract_operations.items()
        if not isinstance(flag, bool)
    )

    assert not undeclared, (
        f"operations without a boolean x-idempotent in the contract: {undeclared}"
    )


def test_operation_ids_are_tag_dot_x_method(
    contract_operations: dict[str, tuple[str, str, Any, dict[str, Any]]],
) -> None:
    wrong = {
        op_id: f"{operation['tags'][0]}.{operation['x-method']}"
        for op_id, (_, _, _, operation) in contract_operations.items()
        if op_id != f"{operation['tags'][0]}.{operation['x-method']}"
    }

    assert not wrong, f"operationId is not <tag>.<x-method>: {wrong}"
    assert all(OPERATIONS[op_id].namespace == op_id.split(".")[0] for op_id in OPERATIONS)


def test_the_table_knows_the_writes_that_must_not_be_resent() -> None:
    # The writes that are never resent blindly; a regenerated table must keep them so.
    for op_id in ("payments.import_payment", "payment_requests.bulk_import", "customers.create"):
        assert OPERATIONS[op_id].idempotent is False, op_id
    assert OPERATIONS["customers.list"].idempotent is True
