"""Invoices over HTTP: create (idempotent by invoiceNo), totals per itemsTaxType, list filters,
update, void and mark-as-paid (activation, plans and the file: test_invoice_activation.py).
Every answer is checked against the contract by the client's hook."""

from __future__ import annotations

import re

import pytest

from tests.support.billing import (
    WIDGET,
    error_of,
    get,
    new_customer,
    new_invoice,
    ok,
    sent_invoice,
)
from tests.support.sandbox_admin import SandboxAdmin


@pytest.fixture
def customer(admin: SandboxAdmin, biller_token) -> dict:
    return new_customer(admin, biller_token)


def _create(admin, tokens, body):
    return admin.api.post("/invoices", headers=tokens.headers, json=body)


def _lines(admin, tokens, customer, tax_type, *items):
    body = {"customer": {"id": customer["id"]}, "itemsTaxType": tax_type, "items": list(items)}
    return ok(_create(admin, tokens, body), 201)


# --- create and totals ---------------------------------------------------------------------------


def test_create_is_a_draft_with_totals_computed_from_the_lines(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])

    assert invoice["status"] == "DRAFT"
    assert invoice["statusReasonCode"] == "PENDING_ACTIVATION"
    # The contract's example: 3 × 19.99 at 20 % → tax 11.994 → 11.99, total 71.96.
    assert (invoice["totalAmount"], invoice["taxAmount"]) == ("71.96", "11.99")
    assert (invoice["dueAmount"], invoice["paidAmount"]) == ("71.96", "0.00")
    assert invoice["items"][0]["totalAmount"] == 71.96
    assert invoice["items"][0]["taxAmount"] == 11.99
    assert invoice["customer"]["id"] == customer["id"]
    assert invoice["paymentRequests"] == []
    assert get(admin, biller_token, f"/invoices/{invoice['id']}") == invoice


def test_invoice_no_is_generated_when_omitted(admin, biller_token, customer):
    first = new_invoice(admin, biller_token, customer["id"])
    second = new_invoice(admin, biller_token, customer["id"])

    assert re.fullmatch(r"INV-\d+", first["invoiceNo"])
    assert first["invoiceNo"] != second["invoiceNo"]


def test_a_repeated_invoice_no_returns_the_existing_invoice_with_200(admin, biller_token, customer):
    first = new_invoice(admin, biller_token, customer["id"], invoiceNo="ACME-1")
    body = {"customer": {"id": customer["id"]}, "invoiceNo": "ACME-1", "items": [WIDGET] * 2}

    repeat = _create(admin, biller_token, body)

    assert repeat.status_code == 200
    assert repeat.json()["id"] == first["id"]
    assert repeat.json()["totalAmount"] == "71.96"  # the body is not compared
    listed = get(admin, biller_token, "/invoices?invoiceNo=ACME-1")
    assert listed["page"]["totalElements"] == 1


def test_exclusive_tax_is_rounded_half_up_per_line(admin, biller_token, customer):
    line = {"description": "Fee", "quantity": 1, "unitAmount": 0.25, "taxRate": 10}
    invoice = _lines(admin, biller_token, customer, "EXCLUSIVE", line, line)

    # 0.025 rounds up to 0.03 on each line: 0.06, not round(0.05).
    assert [item["taxAmount"] for item in invoice["items"]] == [0.03, 0.03]
    assert (invoice["taxAmount"], invoice["totalAmount"]) == ("0.06", "0.56")


def test_inclusive_lines_carry_their_tax_inside_the_amount(admin, biller_token, customer):
    invoice = _lines(
        admin,
        biller_token,
        customer,
        "INCLUSIVE",
        {"description": "A", "quantity": 1, "unitAmount": 120, "taxRate": 20},
        {"description": "B", "quantity": 1, "unitAmount": 10, "taxRate": 17.5},
    )

    # 10 × 17.5 / 117.5 = 1.4893... → 1.49
    assert [item["taxAmount"] for item in invoice["items"]] == [20, 1.49]
    assert (invoice["totalAmount"], invoice["taxAmount"]) == ("130.00", "21.49")


def test_no_tax_ignores_the_rate_and_rounds_the_net(admin, biller_token, customer):
    line = {"description": "Hours", "quantity": 2.5, "unitAmount": 3.33, "taxRate": 20}
    invoice = _lines(admin, biller_token, customer, "NONE", line)

    # 2.5 × 3.33 = 8.325 → 8.33 (half-up)
    assert (invoice["totalAmount"], invoice["taxAmount"]) == ("8.33", "0.00")


def test_an_amount_equal_to_the_computed_total_is_accepted(admin, biller_token, customer):
    body = {"customer": {"id": customer["id"]}, "items": [WIDGET], "amount": 71.96}
    assert ok(_create(admin, biller_token, body), 201)["totalAmount"] == "71.96"


@pytest.mark.parametrize(
    ("change", "field"),
    [
        ({"amount": 71.95}, "amount"),
        ({"amount": "71.96"}, "amount"),
        ({"customer": {"id": "no-such-customer"}}, "customer.id"),
        ({"customer": {"externalId": "nobody"}}, "customer.externalId"),
        ({"items": []}, "items"),
        ({"items": [{**WIDGET, "quantity": 0}]}, "items[0].quantity"),
        ({"items": [WIDGET, {**WIDGET, "unitAmount": 1.005}]}, "items[1].unitAmount"),
        ({"items": [{**WIDGET, "taxRate": 101}]}, "items[0].taxRate"),
        ({"items": [{**WIDGET, "taxRateId": "unknown"} | {"taxRate": None}]}, "items[0].taxRateId"),
        ({"items": [{"quantity": 1, "unitAmount": 1}]}, "items[0].description"),
        ({"currencyCode": "EUR"}, "currencyCode"),
        ({"issueDate": "2026-05-10", "dueDate": "2026-05-09"}, "dueDate"),
        ({"dueDate": "2026-02-30"}, "dueDate"),
        ({"itemsTaxType": "SOMETIMES"}, "itemsTaxType"),
        ({"invoiceNo": ""}, "invoiceNo"),
    ],
)
def test_create_rejects_broken_rules_naming_the_field(admin, biller_token, customer, change, field):
    body = {"customer": {"id": customer["id"]}, "items": [WIDGET], **change}
    error = error_of(_create(admin, biller_token, body), 422)
    assert (error["type"], error["field"]) == ("VALIDATION_ERROR", field)


def test_an_unreadable_body_is_a_bad_request(admin, biller_token):
    headers = {**biller_token.headers, "Content-Type": "application/json"}
    response = admin.api.post("/invoices", headers=headers, content=b"{not json")
    assert error_of(response, 400)["type"] == "BAD_REQUEST"


def test_the_customer_can_be_named_by_external_id(admin, biller_token):
    customer = new_customer(admin, biller_token, externalId="XERO-42")
    body = {"customer": {"externalId": "XERO-42"}, "items": [WIDGET]}
    assert ok(_create(admin, biller_token, body), 201)["customer"]["id"] == customer["id"]


def test_another_billers_invoice_and_customer_do_not_exist(admin, biller_token, customer):
    other = admin.connect_biller("Other Ltd")
    invoice = new_invoice(admin, biller_token, customer["id"])

    assert error_of(admin.api.get(f"/invoices/{invoice['id']}", headers=other.headers), 404)
    body = {"customer": {"id": customer["id"]}, "items": [WIDGET]}
    assert error_of(_create(admin, other, body), 422)["field"] == "customer.id"


def test_read_only_and_platform_tokens_cannot_create(admin, customer):
    body = {"customer": {"id": customer["id"]}, "items": [WIDGET]}
    read_only = admin.connect_biller(read_only=True)
    assert error_of(_create(admin, read_only, body), 403)["type"] == "FORBIDDEN"
    assert error_of(_create(admin, admin.platform_token(), body), 403)["type"] == "FORBIDDEN"


# --- list ----------------------------------------------------------------------------------------


def test_list_filters_by_status_customer_and_due_dates(admin, biller_token):
    first = new_customer(admin, biller_token, externalId="EXT-1")
    second = new_customer(admin, biller_token)
    draft = new_invoice(admin, biller_token, first["id"], dueDate="2030-01-10")
    sent = sent_invoice(admin, biller_token, first["id"], dueDate="2030-02-10")
    other = new_invoice(admin, biller_token, second["id"], dueDate="2030-03-10")

    def ids(query: str) -> list[str]:
        return [i["id"] for i in get(admin, biller_token, f"/invoices?{query}")["invoices"]]

    assert ids("") == [draft["id"], sent["id"], other["id"]]
    assert ids("statuses=UNPAID") == [sent["id"]]
    assert ids("statuses=UNPAID,DRAFT") == [draft["id"], sent["id"], other["id"]]
    assert ids("statuses=DRAFT&statuses=VOID") == [draft["id"], other["id"]]
    assert ids(f"customerId={second['id']}") == [other["id"]]
    assert ids("externalCustomerId=EXT-1") == [draft["id"], sent["id"]]
    assert ids("dueStartDate=2030-02-10&dueEndDate=2030-03-10") == [sent["id"], other["id"]]
    assert ids(f"invoiceNo={sent['invoiceNo']}") == [sent["id"]]
    assert ids("sort=dueDate,DESC") == [other["id"], sent["id"], draft["id"]]
    assert ids("createdStartDate=2000-01-01&createdEndDate=2001-01-01") == []


def test_list_pages(admin, biller_token, customer):
    created = [new_invoice(admin, biller_token, customer["id"])["id"] for _ in range(3)]

    first = get(admin, biller_token, "/invoices?size=2&page=0")
    second = get(admin, biller_token, "/invoices?size=2&page=1")

    assert [i["id"] for i in first["invoices"] + second["invoices"]] == created
    assert first["page"] == first["pagination"]
    assert (first["page"]["totalPages"], first["page"]["totalElements"]) == (2, 3)
    assert second["page"]["numberOfElements"] == 1


@pytest.mark.parametrize(
    ("query", "field"),
    [
        ("statuses=LOST", "statuses"),
        ("dueStartDate=tomorrow", "dueStartDate"),
        ("size=0", "size"),
        ("invoiceNo=A%00B", "invoiceNo"),
    ],
)
def test_list_rejects_bad_parameters(admin, biller_token, query, field):
    error = error_of(admin.api.get(f"/invoices?{query}", headers=biller_token.headers), 400)
    assert (error["type"], error["field"]) == ("BAD_REQUEST", field)


def test_list_rejects_an_unknown_sort_property(admin, biller_token):
    response = admin.api.get("/invoices?sort=colour,asc", headers=biller_token.headers)
    assert error_of(response, 400)["type"] == "BAD_REQUEST"


# --- update --------------------------------------------------------------------------------------


def _put(admin, tokens, invoice_id, body):
    return admin.api.put(f"/invoices/{invoice_id}", headers=tokens.headers, json=body)


def test_update_replaces_the_lines_and_recomputes(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"], description="Old")
    line = {"description": "Other", "quantity": 1, "unitAmount": 50, "taxRate": 0}

    updated = ok(_put(admin, biller_token, invoice["id"], {"items": [line]}))

    assert (updated["totalAmount"], updated["taxAmount"]) == ("50.00", "0.00")
    assert [item["description"] for item in updated["items"]] == ["Other"]
    assert updated["description"] is None  # a full object: left out means removed
    assert updated["dueDate"] == invoice["dueDate"]
    assert get(admin, biller_token, f"/invoices/{invoice['id']}")["totalAmount"] == "50.00"


def test_the_payment_request_of_an_activated_invoice_follows_an_edit(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    line = {"description": "More", "quantity": 2, "unitAmount": 60, "taxRate": 0}

    updated = ok(
        _put(admin, biller_token, invoice["id"], {"items": [line], "dueDate": "2031-01-31"})
    )

    (request,) = updated["paymentRequests"]
    assert (request["amount"], request["payByDate"]) == (120, "2031-01-31")
    assert updated["status"] == "UNPAID"


def test_the_invoice_no_cannot_change(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])
    body = {"items": [WIDGET], "invoiceNo": "NEW-1"}
    assert error_of(_put(admin, biller_token, invoice["id"], body), 422)["field"] == "invoiceNo"


def test_the_customer_changes_only_in_draft(admin, biller_token, customer):
    other = new_customer(admin, biller_token)
    draft = new_invoice(admin, biller_token, customer["id"])
    sent = sent_invoice(admin, biller_token, customer["id"])
    body = {"customer": {"id": other["id"]}, "items": [WIDGET]}

    assert ok(_put(admin, biller_token, draft["id"], body))["customer"]["id"] == other["id"]
    error = error_of(_put(admin, biller_token, sent["id"], body), 400)
    assert (error["type"], error["field"]) == ("INVALID_STATE", "customer")


@pytest.mark.parametrize("action", [":void", ":mark-as-paid"])
def test_void_and_paid_invoices_cannot_be_edited(admin, biller_token, customer, action):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    ok(admin.api.put(f"/invoices/{invoice['id']}{action}", headers=biller_token.headers))

    response = _put(admin, biller_token, invoice["id"], {"items": [WIDGET]})
    assert error_of(response, 400)["type"] == "INVALID_STATE"


def test_update_of_an_unknown_invoice_is_404(admin, biller_token):
    response = _put(admin, biller_token, "nope", {"items": [WIDGET]})
    assert error_of(response, 404)["type"] == "NOT_FOUND"


# --- void and mark as paid -----------------------------------------------------------------------


def test_void_keeps_the_reason_and_voids_the_open_payment_requests(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    path = f"/invoices/{invoice['id']}:void"

    voided = ok(admin.api.put(path, headers=biller_token.headers, json={"reason": "Duplicate"}))

    assert (voided["status"], voided["voidReason"]) == ("VOID", "Duplicate")
    assert [pr["status"] for pr in voided["paymentRequests"]] == ["VOID"]
    again = ok(admin.api.put(path, headers=biller_token.headers))
    assert again == voided


def test_a_draft_can_be_voided_without_a_body(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])
    response = admin.api.put(f"/invoices/{invoice['id']}:void", headers=biller_token.headers)
    assert ok(response)["status"] == "VOID"


def test_a_paid_invoice_cannot_be_voided(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    ok(admin.api.put(f"/invoices/{invoice['id']}:mark-as-paid", headers=biller_token.headers))

    response = admin.api.put(f"/invoices/{invoice['id']}:void", headers=biller_token.headers)
    assert error_of(response, 400)["type"] == "INVALID_STATE"


def test_a_void_reason_longer_than_500_characters_is_refused(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])
    path = f"/invoices/{invoice['id']}:void"
    response = admin.api.put(path, headers=biller_token.headers, json={"reason": "x" * 501})
    assert error_of(response, 422)["field"] == "reason"


def test_mark_as_paid_clears_the_due_amount_and_pays_the_requests(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    path = f"/invoices/{invoice['id']}:mark-as-paid"

    paid = ok(admin.api.put(path, headers=biller_token.headers))

    assert (paid["status"], paid["dueAmount"], paid["paidAmount"]) == ("PAID", "0.00", "0.00")
    assert [pr["status"] for pr in paid["paymentRequests"]] == ["PAID"]
    assert ok(admin.api.put(path, headers=biller_token.headers)) == paid


@pytest.mark.parametrize("void_first", [False, True])
def test_draft_and_void_invoices_cannot_be_marked_as_paid(
    admin, biller_token, customer, void_first
):
    invoice = new_invoice(admin, biller_token, customer["id"])
    if void_first:
        ok(admin.api.put(f"/invoices/{invoice['id']}:void", headers=biller_token.headers))
    response = admin.api.put(
        f"/invoices/{invoice['id']}:mark-as-paid", headers=biller_token.headers
    )
    assert error_of(response, 400)["type"] == "INVALID_STATE"


# --- more rules: catalogue tax rates, external references, plans ---------------------------------


def test_a_line_may_take_its_rate_from_the_catalogue(admin, biller_token, customer):
    rates = get(admin, biller_token, "/catalogs/tax_rates")["taxRates"]
    twenty = next(rate for rate in rates if rate["rate"] == 20)
    line = {"description": "Catalogued", "quantity": 1, "unitAmount": 10, "taxRateId": twenty["id"]}

    invoice = new_invoice(admin, biller_token, customer["id"], items=[line])

    assert (invoice["items"][0]["taxRate"], invoice["taxAmount"]) == (20, "2.00")


def test_external_references_are_kept_and_checked(admin, biller_token, customer):
    reference = {"connectorType": "XERO", "id": "abc-123", "name": "INV-0042"}
    invoice = new_invoice(admin, biller_token, customer["id"], externalData=[reference])
    assert invoice["externalData"] == [reference]

    body = {
        "customer": {"id": customer["id"]},
        "items": [WIDGET],
        "externalData": [{"connectorType": "ABACUS", "id": "1"}],
    }
    error = error_of(_create(admin, biller_token, body), 422)
    assert error["field"] == "externalData[0].connectorType"
