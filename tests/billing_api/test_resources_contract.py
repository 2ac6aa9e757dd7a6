"""Every operation of the contract has a method on both clients, named ``<tag>.<x-method>``,
and that method builds a request for exactly that operation."""

from __future__ import annotations

import inspect
import warnings
from collections.abc import Iterator
from decimal import Decimal
from pathlib import Path
from typing import Any

import pytest
import yaml

from billing_api._client import BillingClient
from billing_api._operations import OPERATIONS
from billing_api._pagination import SyncPager
from billing_api.resources._core import Call, ListCall

CONTRACT = Path(__file__).resolve().parents[2] / "billing_api" / "openapi.yaml"
HTTP_METHODS = {"get", "put", "post", "delete", "patch"}

# Values for the builders' required arguments, by parameter name (anything else gets an id).
SAMPLES: dict[str, Any] = {
    "file": b"externalId\nX-1\n",
    "name": "n",
    "customer": "c-1",
    "items": [{"description": "d", "quantity": 1, "unitAmount": Decimal("1.50")}],
    "description": "d",
    "total_amount": Decimal("10.25"),
    "amount": Decimal("10.25"),
    "collection_method": "NONE",
    "cadence": {"timeUnit": "MONTHS", "frequency": 1, "startDate": "2030-01-01"},
    "invoice_details": {"customer": {"id": "c-1"}, "items": []},
    "payment_request_details": {"customer": {"id": "c-1"}, "amount": 1},
    "payment_request_ids": ["pr-1"],
    "distribution": {"collectionMethod": "NONE"},
    "methods": ["ON_DEMAND"],
    "reference": "r",
    "guidance": "g",
    "type": "DD_PAYMENT",
    "url": "http://127.0.0.1/hook",
    "events": ["invoice"],
    "grant_type": "client_credentials",
    "token": "t",
    "redirect_uri": "http://127.0.0.1/cb",
    "operations": [{"op": "replace", "path": "/website", "value": "x"}],
    "basic_authentication": {"username": "u", "password": "p"},
}


def contract_operations() -> list[tuple[str, str]]:
    """(tag, x-method) of every operation of ``openapi.yaml``, read from the file itself."""
    document = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    found = []
    for item in document["paths"].values():
        for verb, operation in item.items():
            if verb in HTTP_METHODS:
                (tag,) = operation["tags"]
                found.append((tag, operation["x-method"]))
    return sorted(found)


OPERATION_PAIRS = contract_operations()
ROOT = "http://127.0.0.1:1/api"  # never contacted: these tests only build requests


@pytest.fixture(scope="module")
def sync_client() -> Iterator[BillingClient]:
    with BillingClient(ROOT) as client:
        yield client


def test_the_contract_has_the_75_operations_of_the_table() -> None:
    assert len(OPERATION_PAIRS) == 75
    assert {f"{tag}.{method}" for tag, method in OPERATION_PAIRS} == set(OPERATIONS)


def _arguments(builder: Any) -> tuple[list[Any], dict[str, Any]]:
    args: list[Any] = []
    kwargs: dict[str, Any] = {}
    for parameter in inspect.signature(builder).parameters.values():
        known = parameter.name in SAMPLES
        if parameter.default is not inspect.Parameter.empty and not known:
            continue
        value = SAMPLES.get(parameter.name, f"{parameter.name}-1")
        if parameter.kind is inspect.Parameter.KEYWORD_ONLY:
            kwargs[parameter.name] = value
        else:
            args.append(value)
    return args, kwargs


@pytest.mark.parametrize(("tag", "method"), OPERATION_PAIRS)
def test_sync_client_has_a_method_building_the_operation(
    sync_client: BillingClient, tag: str, method: str
) -> None:
    namespace = getattr(sync_client, tag)
    bound = getattr(namespace, method)
    assert callable(bound) and not inspect.iscoroutinefunction(bound)
    builder = bound.__wrapped__
    args, kwargs = _arguments(builder)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", DeprecationWarning)
        call = builder(*args, **kwargs)

    assert isinstance(call, Call | ListCall)
    assert call.operation_id == f"{tag}.{method}"


def test_list_methods_return_a_pager(sync_client: BillingClient) -> None:
    assert isinstance(sync_client.invoices.list(statuses=["PAID"]), SyncPager)


def test_methods_keep_the_contract_name_and_docstring(sync_client: BillingClient) -> None:
    method = sync_client.customers.list
    assert method.__name__ == "list"
    assert method.__doc__ and "customer" in method.__doc__
