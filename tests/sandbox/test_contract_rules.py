"""The sandbox refuses what the contract's schemas forbid, and answers what they declare.

Each case was found by fuzzing the sandbox against the contract: a value the schema forbids that
was accepted (numbers read as dates, ``0`` read as false, a URI with characters RFC 3986 does not
allow, an empty JSON Patch), or an answer the contract did not describe (``Allow: GET`` on every
405).
"""

from __future__ import annotations

import pytest

from tests.support.billing import error_of, new_customer, ok
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin


def test_a_405_names_every_method_the_path_answers(admin: SandboxAdmin, biller_token) -> None:
    response = admin.api.delete("/customers", headers=biller_token.headers)
    assert response.status_code == 405
    assert response.headers["allow"] == "GET, POST, PUT"
    response = admin.api.post("/biller", headers=biller_token.headers, json={})
    assert (response.status_code, response.headers["allow"]) == (405, "GET, PATCH")


def test_an_empty_json_patch_is_refused(admin: SandboxAdmin, biller_token) -> None:
    response = admin.api.patch("/biller", headers=biller_token.headers, json=[])
    assert error_of(response, 400)["type"] == "BAD_REQUEST"


def test_the_contracts_own_patch_example_works_on_a_new_biller(
    admin: SandboxAdmin, biller_token
) -> None:
    import yaml

    from tests.test_contract import CONTRACT

    contract = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    body = contract["paths"]["/biller"]["patch"]["requestBody"]["content"]
    example = body["application/json-patch+json"]["examples"]["rename"]["value"]
    biller = ok(admin.api.patch("/biller", headers=biller_token.headers, json=example))
    assert biller["statementName"] == "ACME TRADING"


@pytest.mark.parametrize("path", ["/customers", "/customers/{id}"])
def test_a_boolean_query_value_is_true_or_false(
    admin: SandboxAdmin, biller_token: BillerTokens, path: str
) -> None:
    customer = new_customer(admin, biller_token)
    url = path.format(id=customer["id"])
    for value in ("x", "1", "yes"):
        response = admin.api.get(
            url, headers=biller_token.headers, params={"includeCustomerFinancialDetails": value}
        )
        assert error_of(response, 400)["field"] == "includeCustomerFinancialDetails"
    answer = ok(
        admin.api.get(
            url, headers=biller_token.headers, params={"includeCustomerFinancialDetails": "true"}
        )
    )
    shown = answer["customers"][0] if "customers" in answer else answer
    assert "financialDetails" in shown


@pytest.mark.parametrize(
    ("path", "body", "field"),
    [
        ("/customers/payment_settings", {"ddRetryCount": False}, "ddRetryCount"),
        ("/customers/workflow_settings", {"remindersEnabled": 0}, "remindersEnabled"),
    ],
)
def test_numbers_and_booleans_are_not_each_other(
    admin: SandboxAdmin, biller_token: BillerTokens, path: str, body: dict, field: str
) -> None:
    customer = new_customer(admin, biller_token)
    response = admin.api.put(
        path, headers=biller_token.headers, json={"customerId": customer["id"], **body}
    )
    assert error_of(response, 422)["field"] == field


@pytest.mark.parametrize("url", ["https://\u0084", "https://example.com/a b", "https://x/%zz"])
def test_a_redirect_url_must_be_a_uri(admin: SandboxAdmin, biller_token, url: str) -> None:
    customer = new_customer(admin, biller_token)
    response = admin.api.put(
        f"/customers/{customer['id']}/directdebitmandates",
        headers=biller_token.headers,
        json={"redirectUrl": url},
    )
    assert error_of(response, 422)["field"] == "redirectUrl"


def test_null_where_the_contract_allows_it(admin: SandboxAdmin, biller_token) -> None:
    customer = new_customer(admin, biller_token)
    mandate = admin.api.put(
        f"/customers/{customer['id']}/directdebitmandates",
        headers=biller_token.headers,
        json={"redirectUrl": None},
    )
    assert ok(mandate)["status"] == "CREATED"
    workflow = {"id": None, "name": "Reminders", "type": "ONE_TIME_PAYMENT", "events": []}
    created = ok(admin.api.put("/workflows", headers=biller_token.headers, json=workflow))
    assert created["id"]
    schedule = {
        "cadence": {"timeUnit": "MONTHS", "frequency": 1, "startDate": "2030-01-01"},
        "paymentRequestDetails": {
            "customer": {"id": customer["id"]},
            "amount": 10,
            "currencyCode": "GBP",
            "description": "Rent",
            "distribution": {"approvedForSending": None},
        },
    }
    recurring = admin.api.post(
        "/schedules/payment_requests", headers=biller_token.headers, json=schedule
    )
    details = ok(recurring, 201)["paymentRequestDetails"]
    assert not details["distribution"].get("approvedForSending")


@pytest.mark.parametrize("value", ["", "ACTIVE,", " ACTIVE"])
def test_an_enum_filter_value_is_exactly_one_of_the_list(
    admin: SandboxAdmin, biller_token, value: str
) -> None:
    customer = new_customer(admin, biller_token)
    response = admin.api.get(
        f"/customers/{customer['id']}/cards_on_file",
        headers=biller_token.headers,
        params={"statuses": value},
    )
    assert error_of(response, 400)["field"] == "statuses"
