"""``POST /payments:import``: an IMPORTED payment against an invoice moves its paid and due
amounts and its status; the contract's rules on amounts, unknown, draft and void invoices."""

from __future__ import annotations

import pytest

from tests.support.billing import (
    activate_invoice,
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


@pytest.fixture
def invoice(admin: SandboxAdmin, biller_token, customer) -> dict:
    """An UNPAID invoice of 71.96 with one payment request."""
    return sent_invoice(admin, biller_token, customer["id"])


def _import(admin, tokens, invoice_id, amount, reference="BANK-REF-1"):
    body = {"invoiceId": invoice_id, "amount": amount, "reference": reference}
    return admin.api.post("/payments:import", headers=tokens.headers, json=body)


def test_a_partial_payment_moves_the_amounts_but_not_the_status(admin, biller_token, invoice):
    answer = ok(_import(admin, biller_token, invoice["id"], 20.5))

    (payment,) = answer["payments"]
    pr_id = invoice["paymentRequests"][0]["id"]
    assert (payment["paymentMethod"], payment["status"]) == ("IMPORTED", "SUCCESS")
    assert (payment["amount"], payment["reference"]) == (20.5, "BANK-REF-1")
    assert (payment["invoiceId"], payment["paymentRequestId"]) == (invoice["id"], pr_id)
    assert payment["paymentTime"] is not None
    after = get(admin, biller_token, f"/invoices/{invoice['id']}")
    assert (after["status"], after["paidAmount"], after["dueAmount"]) == (
        "UNPAID",
        "20.50",
        "51.46",
    )
    request = get(admin, biller_token, f"/payment_requests/{pr_id}")
    assert (request["status"], request["paidAmount"], request["dueAmount"]) == (
        "UNPAID",
        20.5,
        51.46,
    )


def test_paying_the_rest_makes_the_invoice_and_its_request_paid(admin, biller_token, invoice):
    ok(_import(admin, biller_token, invoice["id"], 50))
    ok(_import(admin, biller_token, invoice["id"], 21.96, reference="BANK-REF-2"))

    after = get(admin, biller_token, f"/invoices/{invoice['id']}")
    assert (after["status"], after["paidAmount"], after["dueAmount"]) == ("PAID", "71.96", "0.00")
    assert [pr["status"] for pr in after["paymentRequests"]] == ["PAID"]


def test_a_payment_is_allocated_to_the_earliest_instalments_first(admin, biller_token, customer):
    plan = {
        "cadence": {"type": "INTERVAL_COUNT", "timeUnit": "MONTH", "count": 3}
        | {"startDate": "2031-01-10"}
    }
    line = {"description": "Course", "quantity": 1, "unitAmount": 90, "taxRate": 0}
    draft = new_invoice(
        admin, biller_token, customer["id"], items=[line], instalmentPlanDetails=plan
    )
    invoice = activate_invoice(admin, biller_token, draft["id"])
    first, second, third = (pr["id"] for pr in invoice["paymentRequests"])

    answer = ok(_import(admin, biller_token, invoice["id"], 40))

    assert [(p["paymentRequestId"], p["amount"]) for p in answer["payments"]] == [
        (first, 30),
        (second, 10),
    ]
    statuses = [
        (pr["status"], pr["paidAmount"])
        for pr in (
            get(admin, biller_token, f"/payment_requests/{i}") for i in (first, second, third)
        )
    ]
    assert statuses == [("PAID", 30), ("UNPAID", 10), ("UNPAID", 0)]
    assert get(admin, biller_token, f"/invoices/{invoice['id']}")["dueAmount"] == "50.00"


@pytest.mark.parametrize("amount", [71.97, 1000])
def test_more_than_the_due_amount_is_refused(admin, biller_token, invoice, amount):
    error = error_of(_import(admin, biller_token, invoice["id"], amount), 422)
    assert (error["type"], error["field"]) == ("VALIDATION_ERROR", "amount")
    assert get(admin, biller_token, f"/invoices/{invoice['id']}")["paidAmount"] == "0.00"


def test_nothing_can_be_imported_once_an_invoice_is_paid(admin, biller_token, invoice):
    ok(admin.api.put(f"/invoices/{invoice['id']}:mark-as-paid", headers=biller_token.headers))
    assert error_of(_import(admin, biller_token, invoice["id"], 1), 422)["field"] == "amount"


@pytest.mark.parametrize(
    ("body", "field"),
    [
        ({"amount": 0}, "amount"),
        ({"amount": -1}, "amount"),
        ({"amount": 1.001}, "amount"),
        ({"amount": "10"}, "amount"),
        ({"amount": None}, "amount"),
        ({"reference": ""}, "reference"),
        ({"reference": "   "}, "reference"),
        ({"reference": "r" * 256}, "reference"),
        ({"invoiceId": None}, "invoiceId"),
    ],
)
def test_bad_fields_are_refused(admin, biller_token, invoice, body, field):
    full = {"invoiceId": invoice["id"], "amount": 10, "reference": "REF", **body}
    response = admin.api.post("/payments:import", headers=biller_token.headers, json=full)
    error = error_of(response, 422)
    assert (error["type"], error["field"]) == ("VALIDATION_ERROR", field)


def test_an_unknown_or_foreign_invoice_is_refused(admin, biller_token, invoice):
    other = admin.connect_biller("Other Ltd")
    assert error_of(_import(admin, biller_token, "no-such-invoice", 1), 422)["field"] == "invoiceId"
    assert error_of(_import(admin, other, invoice["id"], 1), 422)["field"] == "invoiceId"


def test_draft_and_void_invoices_refuse_payments(admin, biller_token, customer):
    draft = new_invoice(admin, biller_token, customer["id"])
    voided = sent_invoice(admin, biller_token, customer["id"])
    ok(admin.api.put(f"/invoices/{voided['id']}:void", headers=biller_token.headers))

    for target in (draft, voided):
        assert error_of(_import(admin, biller_token, target["id"], 1), 400)["type"] == (
            "INVALID_STATE"
        )


def test_a_read_only_token_cannot_import(admin, invoice):
    read_only = admin.connect_biller(read_only=True)
    assert error_of(_import(admin, read_only, invoice["id"], 1), 403)["type"] == "FORBIDDEN"


def test_an_unreadable_body_is_a_bad_request(admin, biller_token):
    headers = {**biller_token.headers, "Content-Type": "application/json"}
    response = admin.api.post("/payments:import", headers=headers, content=b"[1,")
    assert error_of(response, 400)["type"] == "BAD_REQUEST"
