"""Payment requests over HTTP: create, list filters (docs/service.md §5), get, update, void,
mark-as-paid, the deprecated cancel, cancel-collection-on-failure, activate and the distribution
bulk update. Every answer is checked against the contract by the client's hook."""

from __future__ import annotations

import re
import uuid

import pytest

from tests.support.billing import (
    error_of,
    get,
    new_customer,
    new_payment_request,
    ok,
    sent_invoice,
)
from tests.support.sandbox_admin import SandboxAdmin


@pytest.fixture
def customer(admin: SandboxAdmin, biller_token) -> dict:
    return new_customer(admin, biller_token)


def _put(admin, tokens, path, body=None):
    return admin.api.put(path, headers=tokens.headers, json=body)


def _activate(admin, tokens, pr_id, method="ONE_TIME_PAYMENT"):
    return _put(admin, tokens, f"/payment_requests/{pr_id}:activate", {"collectionMethod": method})


# --- create and read -----------------------------------------------------------------------------


def test_create_is_a_standalone_draft_with_number_and_link(admin, biller_token, customer):
    pr = new_payment_request(
        admin, biller_token, customer["id"], totalAmount=120, taxRate=20, payByDate="2031-01-15"
    )

    assert re.fullmatch(r"PR-\d+", pr["paymentRequestNo"])
    assert (pr["status"], pr["associationType"], pr["source"]) == ("DRAFT", "SINGLE", "API")
    assert (pr["totalAmount"], pr["taxAmount"], pr["dueAmount"], pr["paidAmount"]) == (
        120,
        20,
        120,
        0,
    )
    assert pr["paymentLink"]["url"] == f"{admin.root}/pay/{pr['id']}"
    assert pr["customer"] == {"id": customer["id"], "name": customer["name"], "externalId": None}
    assert pr["invoiceIds"] == []
    assert pr["distributionTime"] is None
    assert get(admin, biller_token, f"/payment_requests/{pr['id']}") == pr


def test_approved_for_sending_sends_it_at_once(admin, biller_token, customer):
    distribution = {"collectionMethod": "ON_DEMAND", "approvedForSending": True}
    pr = new_payment_request(admin, biller_token, customer["id"], distribution=distribution)

    assert pr["status"] == "UNPAID"
    assert pr["distribution"]["approvedForSending"] is True
    assert pr["distributionTime"] is not None


def test_amounts_keep_their_pennies_exactly(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"], totalAmount=1499.99)
    assert pr["totalAmount"] == 1499.99
    assert re.search(
        r'"totalAmount":\s*1499\.99[,}]',
        admin.api.get(f"/payment_requests/{pr['id']}", headers=biller_token.headers).text,
    )


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"currencyCode": "EUR"}, "currencyCode"),
        ({"totalAmount": 0}, "totalAmount"),
        ({"totalAmount": -5}, "totalAmount"),
        ({"totalAmount": 10.001}, "totalAmount"),
        ({"totalAmount": "10.00"}, "totalAmount"),
        ({"description": ""}, "description"),
        ({"customer": {"id": "nobody"}}, "customer.id"),
        ({"taxRate": -1}, "taxRate"),
        ({"payByDate": "15/01/2031"}, "payByDate"),
        ({"distribution": {"collectionMethod": "CHEQUE"}}, "distribution.collectionMethod"),
        ({"redirectUrl": "not a url"}, "redirectUrl"),
    ],
)
def test_create_rejects_broken_rules_naming_the_field(admin, biller_token, customer, change, field):
    body = {
        "customer": {"id": customer["id"]},
        "description": "Consulting",
        "totalAmount": 100,
        "currencyCode": "GBP",
        **change,
    }
    response = admin.api.post("/payment_requests", headers=biller_token.headers, json=body)
    error = error_of(response, 422)
    assert (error["type"], error["field"]) == ("VALIDATION_ERROR", field)


def test_a_missing_currency_is_refused(admin, biller_token, customer):
    body = {"customer": {"id": customer["id"]}, "description": "X", "totalAmount": 1}
    response = admin.api.post("/payment_requests", headers=biller_token.headers, json=body)
    assert error_of(response, 422)["field"] == "currencyCode"


def test_an_external_id_is_unique_per_biller(admin, biller_token, customer):
    new_payment_request(admin, biller_token, customer["id"], externalId="ROW-1")
    body = {
        "customer": {"id": customer["id"]},
        "description": "Again",
        "totalAmount": 5,
        "currencyCode": "GBP",
        "externalId": "ROW-1",
    }
    response = admin.api.post("/payment_requests", headers=biller_token.headers, json=body)
    assert error_of(response, 422)["field"] == "externalId"


def test_another_billers_payment_request_does_not_exist(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"])
    other = admin.connect_biller("Other Ltd")
    response = admin.api.get(f"/payment_requests/{pr['id']}", headers=other.headers)
    assert error_of(response, 404)["type"] == "NOT_FOUND"


# --- list ----------------------------------------------------------------------------------------


def test_list_filters(admin, biller_token):
    first = new_customer(admin, biller_token, externalId="EXT-7")
    second = new_customer(admin, biller_token)
    draft = new_payment_request(admin, biller_token, first["id"], payByDate="2031-01-10")
    sent = new_payment_request(
        admin,
        biller_token,
        first["id"],
        payByDate="2031-02-10",
        externalId="ROW-9",
        distribution={"approvedForSending": True},
    )
    voided = new_payment_request(admin, biller_token, second["id"], payByDate="2031-03-10")
    ok(_put(admin, biller_token, f"/payment_requests/{voided['id']}:void"))
    invoice = sent_invoice(admin, biller_token, second["id"])
    raised = invoice["paymentRequests"][0]

    def ids(query: str) -> list[str]:
        page = get(admin, biller_token, f"/payment_requests?{query}")
        return [pr["id"] for pr in page["paymentRequests"]]

    assert ids("") == [draft["id"], sent["id"], voided["id"], raised["id"]]
    assert ids(f"customerId={first['id']}") == [draft["id"], sent["id"]]
    assert ids("externalCustomerId=EXT-7") == [draft["id"], sent["id"]]
    assert ids("statuses=UNPAID") == [sent["id"], raised["id"]]
    assert ids("statuses=REQUESTED") == ids("statuses=UNPAID")
    assert ids("statuses=CANCELLED") == [voided["id"]]
    assert ids("statuses=DRAFT,VOID") == [draft["id"], voided["id"]]
    assert ids("associationTypes=ONE_TO_ONE") == [raised["id"]]
    assert ids("associationTypes=SINGLE&associationTypes=BATCH") == ids("associationTypes=SINGLE")
    assert ids("payByStartDate=2031-02-10&payByEndDate=2031-03-10") == [sent["id"], voided["id"]]
    assert ids(f"invoiceId={invoice['id']}") == [raised["id"]]
    assert ids("externalIds=ROW-9&externalIds=ROW-404") == [sent["id"]]
    assert ids("createdEndDate=2001-01-01") == []
    assert ids("sort=payByDate,desc&size=2") == [voided["id"], sent["id"]]


def test_list_filters_on_the_paid_time(admin, biller_token, customer):
    pr = new_payment_request(
        admin, biller_token, customer["id"], distribution={"approvedForSending": True}
    )
    paid = ok(_put(admin, biller_token, f"/payment_requests/{pr['id']}:mark-as-paid"))

    def ids(query: str) -> list[str]:
        page = get(admin, biller_token, f"/payment_requests?{query}")
        return [found["id"] for found in page["paymentRequests"]]

    at = paid["paidTime"]  # milliseconds: the stored time is at or just after it
    assert ids(f"paidStartTime={at}&paidEndTime=2100-01-01T00:00:00Z") == [pr["id"]]
    assert ids("paidEndTime=2001-01-01T00:00:00Z") == []
    assert ids("paidStartTime=2100-01-01T00:00:00%2B01:00") == []


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("statuses=REQUESTING", "statuses"),
        ("associationTypes=MANY", "associationTypes"),
        ("paidStartTime=yesterday", "paidStartTime"),
        # format: date-time is RFC 3339: a zone-less time or a number is not one
        ("paidStartTime=2100-01-01T00:00:00", "paidStartTime"),
        ("lastUpdatedStartTime=0.5", "lastUpdatedStartTime"),
        ("payByStartDate=0", "payByStartDate"),
        ("sort=creationTime,", "sort"),
        ("sort=%20creationTime", "sort"),
    ],
)
def test_list_rejects_bad_parameters(admin, biller_token, query, field):
    response = admin.api.get(f"/payment_requests?{query}", headers=biller_token.headers)
    error = error_of(response, 400)
    assert (error["type"], error["field"]) == ("BAD_REQUEST", field)


# --- update --------------------------------------------------------------------------------------


def test_update_replaces_the_editable_fields(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"], reference="REF-1")
    body = {"description": "Revised", "totalAmount": 80.5, "payByDate": "2031-06-30"}

    updated = ok(_put(admin, biller_token, f"/payment_requests/{pr['id']}", body))

    assert (updated["description"], updated["totalAmount"]) == ("Revised", 80.5)
    assert (updated["payByDate"], updated["reference"]) == ("2031-06-30", None)
    assert get(admin, biller_token, f"/payment_requests/{pr['id']}") == updated


def test_the_amount_of_an_invoices_payment_request_follows_the_invoice(
    admin, biller_token, customer
):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    pr_id = invoice["paymentRequests"][0]["id"]

    same = {"description": "Renamed", "totalAmount": 71.96}
    assert ok(_put(admin, biller_token, f"/payment_requests/{pr_id}", same))["description"] == (
        "Renamed"
    )
    other = {"description": "Renamed", "totalAmount": 70}
    response = _put(admin, biller_token, f"/payment_requests/{pr_id}", other)
    assert error_of(response, 422)["field"] == "totalAmount"


def test_a_paid_payment_request_cannot_be_edited(admin, biller_token, customer):
    pr = new_payment_request(
        admin, biller_token, customer["id"], distribution={"approvedForSending": True}
    )
    ok(_put(admin, biller_token, f"/payment_requests/{pr['id']}:mark-as-paid"))
    body = {"description": "Late edit", "totalAmount": 1}
    response = _put(admin, biller_token, f"/payment_requests/{pr['id']}", body)
    assert error_of(response, 400)["type"] == "INVALID_STATE"


def test_update_needs_description_and_amount(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"])
    response = _put(admin, biller_token, f"/payment_requests/{pr['id']}", {"description": "X"})
    assert error_of(response, 422)["field"] == "totalAmount"


# --- void, cancel, mark as paid ------------------------------------------------------------------


def test_void_and_a_repeat_of_it(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"])
    path = f"/payment_requests/{pr['id']}:void"

    voided = ok(_put(admin, biller_token, path))

    assert voided["status"] == "VOID"
    assert ok(_put(admin, biller_token, path)) == voided


def test_a_paid_payment_request_cannot_be_voided(admin, biller_token, customer):
    pr = new_payment_request(
        admin, biller_token, customer["id"], distribution={"approvedForSending": True}
    )
    ok(_put(admin, biller_token, f"/payment_requests/{pr['id']}:mark-as-paid"))
    for action in (":void", ":cancel"):
        response = _put(admin, biller_token, f"/payment_requests/{pr['id']}{action}")
        assert error_of(response, 400)["type"] == "INVALID_STATE"


def test_the_deprecated_cancel_voids_and_points_at_void(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"])

    response = _put(admin, biller_token, f"/payment_requests/{pr['id']}:cancel")

    assert ok(response)["status"] == "VOID"
    assert response.headers["Deprecation"] == "@1762819200"
    assert response.headers["Link"] == (
        f'</api/payment_requests/{pr["id"]}:void>; rel="successor-version"'
    )


def test_mark_as_paid_of_a_standalone_request(admin, biller_token, customer):
    pr = new_payment_request(
        admin, biller_token, customer["id"], distribution={"approvedForSending": True}
    )
    path = f"/payment_requests/{pr['id']}:mark-as-paid"

    paid = ok(_put(admin, biller_token, path))

    assert (paid["status"], paid["dueAmount"], paid["paidAmount"]) == ("PAID", 0, 0)
    assert paid["paidTime"] is not None
    assert ok(_put(admin, biller_token, path)) == paid


def test_mark_as_paid_refuses_invoice_requests_drafts_and_void(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    draft = new_payment_request(admin, biller_token, customer["id"])
    voided = new_payment_request(admin, biller_token, customer["id"])
    ok(_put(admin, biller_token, f"/payment_requests/{voided['id']}:void"))

    for pr_id in (invoice["paymentRequests"][0]["id"], draft["id"], voided["id"]):
        response = _put(admin, biller_token, f"/payment_requests/{pr_id}:mark-as-paid")
        assert error_of(response, 400)["type"] == "INVALID_STATE"


@pytest.mark.parametrize("action", [":mark-as-paid", ":cancel-collection-on-failure"])
def test_uuid_operations_refuse_a_malformed_id(admin, biller_token, action):
    response = _put(admin, biller_token, f"/payment_requests/not-a-uuid{action}")
    assert error_of(response, 400)["type"] == "BAD_REQUEST"
    response = _put(admin, biller_token, f"/payment_requests/{uuid.uuid4()}{action}")
    assert error_of(response, 404)["type"] == "NOT_FOUND"


# --- collection on failure -----------------------------------------------------------------------


def test_cancel_collection_on_failure_is_recorded_on_a_scheduled_direct_debit(admin, biller_token):
    customer = new_customer(admin, biller_token, mandate="ACTIVE")
    pr = new_payment_request(admin, biller_token, customer["id"])
    assert ok(_activate(admin, biller_token, pr["id"], "DIRECT_DEBIT_PAYMENT"))["status"] == (
        "SCHEDULED"
    )
    path = f"/payment_requests/{pr['id']}:cancel-collection-on-failure"

    recorded = ok(_put(admin, biller_token, path))

    assert recorded["cancelCollectionOnFailure"] is True
    assert ok(_put(admin, biller_token, path)) == recorded


def test_cancel_collection_on_failure_needs_a_direct_debit_in_progress(
    admin, biller_token, customer
):
    pr = new_payment_request(
        admin, biller_token, customer["id"], distribution={"approvedForSending": True}
    )
    response = _put(
        admin, biller_token, f"/payment_requests/{pr['id']}:cancel-collection-on-failure"
    )
    assert error_of(response, 422)["type"] == "INVALID_STATE"
    assert get(admin, biller_token, f"/payment_requests/{pr['id']}")[
        "cancelCollectionOnFailure"
    ] is (False)


# --- activate ------------------------------------------------------------------------------------


def test_activate_sends_a_draft(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"])

    sent = ok(_activate(admin, biller_token, pr["id"]))

    assert sent["status"] == "UNPAID"
    assert sent["distribution"]["collectionMethod"] == "ON_DEMAND"
    assert sent["workflowType"] == "ON_DEMAND"
    assert sent["distributionTime"] is not None
    assert error_of(_activate(admin, biller_token, pr["id"]), 400)["type"] == "INVALID_STATE"


def test_direct_debit_activation_needs_a_pending_or_active_mandate(admin, biller_token):
    without = new_customer(admin, biller_token, mandate="CREATED")
    pending = new_customer(admin, biller_token, mandate="PENDING")
    refused = new_payment_request(admin, biller_token, without["id"])
    accepted = new_payment_request(admin, biller_token, pending["id"])

    response = _activate(admin, biller_token, refused["id"], "DIRECT_DEBIT_PAYMENT")
    assert error_of(response, 422)["field"] == "collectionMethod"
    scheduled = ok(_activate(admin, biller_token, accepted["id"], "DIRECT_DEBIT_PAYMENT"))
    assert (scheduled["status"], scheduled["workflowType"]) == ("SCHEDULED", "AUTO_COLLECT")


def test_activation_needs_a_body(admin, biller_token, customer):
    pr = new_payment_request(admin, biller_token, customer["id"])
    response = _put(admin, biller_token, f"/payment_requests/{pr['id']}:activate")
    assert error_of(response, 400)["type"] == "BAD_REQUEST"
    response = _activate(admin, biller_token, pr["id"], "CARRIER_PIGEON")
    assert error_of(response, 422)["field"] == "collectionMethod"


# --- distribution --------------------------------------------------------------------------------


def test_distribution_update_sends_drafts_once_in_the_given_order(admin, biller_token, customer):
    first = new_payment_request(admin, biller_token, customer["id"])
    second = new_payment_request(admin, biller_token, customer["id"])
    body = {
        "paymentRequestIds": [second["id"], first["id"]],
        "distribution": {"collectionMethod": "NONE", "approvedForSending": True},
    }

    answer = ok(_put(admin, biller_token, "/payment_requests/distribution", body))

    assert [pr["id"] for pr in answer["paymentRequests"]] == [second["id"], first["id"]]
    assert {pr["status"] for pr in answer["paymentRequests"]} == {"UNPAID"}
    assert {pr["distribution"]["collectionMethod"] for pr in answer["paymentRequests"]} == {"NONE"}
    repeat = ok(_put(admin, biller_token, "/payment_requests/distribution", body))
    assert repeat == answer


def test_distribution_update_is_all_or_nothing(admin, biller_token, customer):
    draft = new_payment_request(admin, biller_token, customer["id"])
    voided = new_payment_request(admin, biller_token, customer["id"])
    ok(_put(admin, biller_token, f"/payment_requests/{voided['id']}:void"))
    change = {"approvedForSending": True}

    unknown = {"paymentRequestIds": [draft["id"], "nope"], "distribution": change}
    error = error_of(_put(admin, biller_token, "/payment_requests/distribution", unknown), 422)
    assert error["field"] == "paymentRequestIds[1]"
    blocked = {"paymentRequestIds": [draft["id"], voided["id"]], "distribution": change}
    error = error_of(_put(admin, biller_token, "/payment_requests/distribution", blocked), 400)
    assert error["type"] == "INVALID_STATE"
    assert get(admin, biller_token, f"/payment_requests/{draft['id']}")["status"] == "DRAFT"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"paymentRequestIds": [], "distribution": {}}, "paymentRequestIds"),
        ({"paymentRequestIds": ["x"] * 201, "distribution": {}}, "paymentRequestIds"),
        ({"paymentRequestIds": ["x"]}, "distribution"),
    ],
)
def test_distribution_update_checks_its_body(admin, biller_token, body, field):
    response = _put(admin, biller_token, "/payment_requests/distribution", body)
    assert error_of(response, 422)["field"] == field
