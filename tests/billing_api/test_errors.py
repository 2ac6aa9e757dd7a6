"""Typed errors from real sandbox answers, and how requests are built.

Every typed error carries the status, the parsed ``errors[].type`` list, the raw body and the
request id; none of them shows the token.
"""

from __future__ import annotations

import json
import uuid
from collections.abc import Iterator
from typing import Any

import httpx
import pytest

from billing_api import StaticTokenAuth
from billing_api._base_client import SyncAPIClient
from billing_api._base_request import USER_AGENT
from billing_api._exceptions import (
    ApiError,
    BadRequest,
    CollectionMethodNotEligible,
    DirectDebitNotAvailable,
    Forbidden,
    NotFound,
    Unauthorized,
    UnexpectedResponse,
    Unprocessable,
)
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

PERSON = [{"firstName": "Pat", "email": "pat@example.com"}]


@pytest.fixture
def sent() -> list[httpx.Request]:
    return []


@pytest.fixture
def client(
    sandbox: str, biller_token: BillerTokens, sent: list[httpx.Request]
) -> Iterator[SyncAPIClient]:
    hooks = {"request": [sent.append]}
    with (
        httpx.Client(event_hooks=hooks) as http,
        SyncAPIClient(
            f"{sandbox}/api", StaticTokenAuth(biller_token.access_token), http_client=http
        ) as api,
    ):
        yield api


def _assert_no_secret(error: Exception, tokens: BillerTokens) -> None:
    for text in (str(error), repr(error), repr(error.args)):
        assert tokens.access_token not in text
        assert tokens.app.client_secret not in text


def _new_customer(client: SyncAPIClient) -> dict[str, Any]:
    body = {"name": f"Errors {uuid.uuid4().hex[:8]}", "people": PERSON}
    return dict(client.request_json("customers.create", json=body))


def _new_payment_request(client: SyncAPIClient, customer_id: str) -> dict[str, Any]:
    body = {
        "customer": {"id": customer_id},
        "description": "Consulting",
        "totalAmount": 100,
        "currencyCode": "GBP",
    }
    return dict(client.request_json("payment_requests.create", json=body))


# --- one typed error per status -----------------------------------------------------------------


def test_no_token_is_unauthorized(sandbox: str) -> None:
    with SyncAPIClient(f"{sandbox}/api") as client, pytest.raises(Unauthorized) as raised:
        client.request("biller.retrieve")

    error = raised.value
    assert (error.status_code, error.error_types) == (401, ["UNAUTHORIZED"])
    assert error.request_id and error.method == "GET"
    assert error.url == f"{sandbox}/api/biller"


def test_a_write_with_a_read_only_token_is_forbidden(sandbox: str, admin: SandboxAdmin) -> None:
    tokens = admin.connect_biller(read_only=True)
    body = {"name": "Nope Ltd", "people": PERSON}

    with (
        SyncAPIClient(f"{sandbox}/api", StaticTokenAuth(tokens.access_token)) as client,
        pytest.raises(Forbidden) as raised,
    ):
        client.request("customers.create", json=body)

    assert (raised.value.status_code, raised.value.error_types) == (403, ["FORBIDDEN"])
    _assert_no_secret(raised.value, tokens)


def test_an_unknown_id_is_not_found(client: SyncAPIClient, biller_token: BillerTokens) -> None:
    with pytest.raises(NotFound) as raised:
        client.request("customers.retrieve", path_params={"id": str(uuid.uuid4())})

    error = raised.value
    assert error.status_code == 404 and error.error_types == ["NOT_FOUND"]
    assert json.loads(error.raw_body) == error.body
    _assert_no_secret(error, biller_token)


def test_an_invalid_body_is_unprocessable_naming_the_fields(
    client: SyncAPIClient, biller_token: BillerTokens
) -> None:
    with pytest.raises(Unprocessable) as raised:
        client.request("customers.create", json={"people": [{"email": "bad"}]})

    error = raised.value
    assert error.status_code == 422 and set(error.error_types) == {"VALIDATION_ERROR"}
    assert {detail.field for detail in error.details} >= {"name", "people[0].email"}
    assert "name" in str(error) and "customers" in str(error)
    _assert_no_secret(error, biller_token)


def test_a_bad_list_parameter_is_a_bad_request(client: SyncAPIClient) -> None:
    with pytest.raises(BadRequest) as raised:
        client.request("customers.list", params={"sort": "favouriteColour,asc"})

    assert type(raised.value) is BadRequest
    assert (raised.value.status_code, raised.value.error_types) == (400, ["BAD_REQUEST"])


def test_pausing_auto_collect_without_a_mandate_is_not_eligible(client: SyncAPIClient) -> None:
    request = _new_payment_request(client, _new_customer(client)["id"])

    with pytest.raises(CollectionMethodNotEligible) as raised:
        client.request(
            "payment_requests.pause_collection",
            path_params={"paymentRequestId": request["id"]},
            json={"collectionMethods": ["ON_DEMAND", "AUTO_COLLECT"]},
        )

    assert isinstance(raised.value, BadRequest)
    assert raised.value.error_types == ["COLLECTION_METHOD_NOT_ELIGIBLE"]


def test_resuming_auto_collect_without_a_mandate_is_direct_debit_not_available(
    client: SyncAPIClient,
) -> None:
    request_id = _new_payment_request(client, _new_customer(client)["id"])["id"]
    where = {"paymentRequestId": request_id}
    client.request(
        "payment_requests.pause_collection",
        path_params=where,
        json={"collectionMethods": ["ON_DEMAND"]},
    )

    with pytest.raises(DirectDebitNotAvailable) as raised:
        client.request(
            "payment_requests.resume_collection",
            path_params=where,
            json={"collectionMethods": ["ON_DEMAND", "AUTO_COLLECT"]},
        )

    assert isinstance(raised.value, BadRequest) and raised.value.status_code == 400
    assert raised.value.error_types == ["DIRECT_DEBIT_NOT_AVAILABLE"]


# --- bad input to the client itself -------------------------------------------------------------


def test_an_unknown_operation_is_named(client: SyncAPIClient) -> None:
    with pytest.raises(ValueError, match=r"unknown operation 'customers\.frobnicate'"):
        client.request("customers.frobnicate")


def test_a_missing_path_parameter_is_named(client: SyncAPIClient) -> None:
    with pytest.raises(ValueError, match=r"customers\.retrieve: missing path parameter\(s\) id"):
        client.request("customers.retrieve")


def test_an_unknown_path_parameter_is_named(client: SyncAPIClient) -> None:
    with pytest.raises(ValueError, match=r"unknown path parameter\(s\) customerId"):
        client.request("customers.retrieve", path_params={"id": "x", "customerId": "y"})


def test_a_base_url_that_is_not_http_is_refused() -> None:
    with pytest.raises(ValueError, match="base_url must be an http"):
        SyncAPIClient("127.0.0.1:8765/api")


def test_a_body_that_is_not_json_is_an_unexpected_response(client: SyncAPIClient) -> None:
    customer = _new_customer(client)
    invoice = client.request_json(
        "invoices.create",
        json={
            "customer": {"id": customer["id"]},
            "items": [{"description": "Widget", "quantity": 1, "unitAmount": 10}],
        },
    )

    pdf = client.request("invoices.retrieve_file", path_params={"id": invoice["id"]})
    with pytest.raises(UnexpectedResponse, match=r"invoices\.retrieve_file: .* not JSON"):
        client.request_json("invoices.retrieve_file", path_params={"id": invoice["id"]})

    assert pdf.content.startswith(b"%PDF")


# --- how requests are built ---------------------------------------------------------------------


def test_requests_carry_user_agent_accept_and_a_request_id_echoed_back(
    client: SyncAPIClient, sent: list[httpx.Request]
) -> None:
    response = client.request("biller.retrieve")

    (request,) = sent
    assert request.headers["User-Agent"] == USER_AGENT and USER_AGENT.startswith("billops/")
    assert request.headers["Accept"] == "application/json"
    assert response.headers["X-Request-Id"] == request.headers["X-Request-Id"]


def test_none_params_are_dropped_and_lists_repeat(
    client: SyncAPIClient, sent: list[httpx.Request]
) -> None:
    client.request(
        "customers.list",
        params={"searchText": None, "financialStatuses": ["OVERDUE", None, "DRAFT"], "size": 5},
    )

    query = sent[0].url.params
    assert "searchText" not in query
    assert query.get_list("financialStatuses") == ["OVERDUE", "DRAFT"]
    assert query["size"] == "5"


def test_path_parameters_are_quoted_so_they_cannot_change_the_path(
    client: SyncAPIClient, sent: list[httpx.Request]
) -> None:
    with pytest.raises(NotFound) as raised:
        client.request("customers.retrieve", path_params={"id": "a/../b:void"})

    assert sent[0].url.raw_path == b"/api/customers/a%2F..%2Fb%3Avoid"
    assert isinstance(raised.value, ApiError)


def test_a_callers_own_request_id_is_kept(client: SyncAPIClient, sent: list[httpx.Request]) -> None:
    response = client.request("biller.retrieve", headers={"x-request-id": "ledger-key-42"})

    assert sent[0].headers.get_list("X-Request-Id") == ["ledger-key-42"]
    assert response.headers["X-Request-Id"] == "ledger-key-42"
