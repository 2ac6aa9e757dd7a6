"""Invoices over HTTP, continued: activation and the payment requests it raises, instalment
plans (preview, and plans on created and sent invoices) and the PDF file. Every answer is checked
against the contract by the client's hook."""

from __future__ import annotations

import pytest

from tests.support.billing import (
    WIDGET,
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


def _create(admin, tokens, body):
    return admin.api.post("/invoices", headers=tokens.headers, json=body)


def _put(admin, tokens, invoice_id, body):
    return admin.api.put(f"/invoices/{invoice_id}", headers=tokens.headers, json=body)


# --- activate ------------------------------------------------------------------------------------


def test_activation_with_the_payment_link_raises_one_payment_request(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"], dueDate="2031-03-01")

    sent = activate_invoice(admin, biller_token, invoice["id"])

    assert (sent["status"], sent["statusReasonCode"]) == ("UNPAID", None)
    (embedded,) = sent["paymentRequests"]
    assert (embedded["amount"], embedded["payByDate"], embedded["status"]) == (
        71.96,
        "2031-03-01",
        "UNPAID",
    )
    assert embedded["paymentLink"]["url"] == f"{admin.root}/pay/{embedded['id']}"
    request = get(admin, biller_token, f"/payment_requests/{embedded['id']}")
    assert request["associationType"] == "ONE_TO_ONE"
    assert request["invoiceIds"] == [invoice["id"]]
    assert request["distribution"]["collectionMethod"] == "ON_DEMAND"


def test_direct_debit_activation_schedules_when_the_mandate_allows(admin, biller_token):
    customer = new_customer(admin, biller_token, mandate="ACTIVE")
    invoice = new_invoice(admin, biller_token, customer["id"])

    sent = activate_invoice(admin, biller_token, invoice["id"], "DIRECT_DEBIT_PAYMENT")

    assert sent["status"] == "SCHEDULED"
    request = get(admin, biller_token, f"/payment_requests/{sent['paymentRequests'][0]['id']}")
    assert (request["status"], request["workflowType"]) == ("SCHEDULED", "AUTO_COLLECT")


@pytest.mark.parametrize("mandate", [None, "CREATED", "CANCELLED"])
def test_direct_debit_activation_needs_a_usable_mandate(admin, biller_token, mandate):
    customer = new_customer(admin, biller_token, mandate=mandate)
    invoice = new_invoice(admin, biller_token, customer["id"])
    body = {"collectionMethod": "DIRECT_DEBIT_PAYMENT"}

    response = admin.api.put(
        f"/invoices/{invoice['id']}:activate", headers=biller_token.headers, json=body
    )

    assert error_of(response, 422)["field"] == "collectionMethod"
    assert get(admin, biller_token, f"/invoices/{invoice['id']}")["status"] == "DRAFT"


def test_an_invoice_that_is_not_a_draft_cannot_be_activated(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    response = admin.api.put(
        f"/invoices/{invoice['id']}:activate",
        headers=biller_token.headers,
        json={"collectionMethod": "NONE"},
    )
    assert error_of(response, 400)["type"] == "INVALID_STATE"


@pytest.mark.parametrize(
    ("body", "status", "type_"),
    [
        (None, 400, "BAD_REQUEST"),
        ({}, 422, "VALIDATION_ERROR"),
        ({"collectionMethod": "CHEQUE"}, 422, "VALIDATION_ERROR"),
        ({"collectionMethod": "NONE", "templateId": "no-such-workflow"}, 422, "VALIDATION_ERROR"),
    ],
)
def test_activation_needs_a_valid_body(admin, biller_token, customer, body, status, type_):
    invoice = new_invoice(admin, biller_token, customer["id"])
    response = admin.api.put(
        f"/invoices/{invoice['id']}:activate", headers=biller_token.headers, json=body
    )
    assert error_of(response, status)["type"] == type_


def test_activation_with_a_plan_raises_one_partial_request_per_instalment(
    admin, biller_token, customer
):
    plan = {
        "cadence": {
            "type": "INTERVAL_COUNT",
            "timeUnit": "MONTH",
            "count": 3,
            "startDate": "2031-01-31",
        }
    }
    line = {"description": "Course", "quantity": 1, "unitAmount": 100, "taxRate": 0}
    invoice = new_invoice(
        admin, biller_token, customer["id"], items=[line], instalmentPlanDetails=plan
    )

    sent = activate_invoice(admin, biller_token, invoice["id"], "NONE")

    requests = sent["paymentRequests"]
    assert [(pr["payByDate"], pr["amount"]) for pr in requests] == [
        ("2031-01-31", 33.33),
        ("2031-02-28", 33.33),
        ("2031-03-31", 33.34),
    ]
    listed = get(admin, biller_token, f"/payment_requests?invoiceId={invoice['id']}")
    assert {pr["associationType"] for pr in listed["paymentRequests"]} == {"PARTIAL"}


# --- instalment preview --------------------------------------------------------------------------


def _preview(admin, tokens, invoice_id, cadence):
    return admin.api.post(
        f"/invoices/{invoice_id}/instalments/preview",
        headers=tokens.headers,
        json={"cadence": cadence},
    )


def test_preview_splits_the_due_amount_exactly(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])  # 71.96
    cadence = {"type": "INTERVAL", "timeUnit": "WEEK", "frequency": 2}
    cadence |= {"startDate": "2031-01-01", "endDate": "2031-02-26"}

    preview = ok(_preview(admin, biller_token, invoice["id"], cadence))

    amounts = [i["amount"] for i in preview["instalments"]]
    assert [i["dueDate"] for i in preview["instalments"]] == [
        "2031-01-01",
        "2031-01-15",
        "2031-01-29",
        "2031-02-12",
        "2031-02-26",
    ]
    assert amounts == [14.39, 14.39, 14.39, 14.39, 14.40]
    assert preview["amount"] == "71.96"
    assert [i["sequence"] for i in preview["instalments"]] == [1, 2, 3, 4, 5]
    # A preview stores nothing.
    assert get(admin, biller_token, f"/invoices/{invoice['id']}")["instalmentPlanDetails"] is None


def test_preview_by_day_of_month_clips_to_the_months_end(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])
    cadence = {"type": "DAY_OF_MONTH", "dayOfMonth": 31, "count": 3, "startDate": "2031-02-01"}

    preview = ok(_preview(admin, biller_token, invoice["id"], cadence))

    assert [i["dueDate"] for i in preview["instalments"]] == [
        "2031-02-28",
        "2031-03-31",
        "2031-04-30",
    ]


def test_preview_of_custom_dates(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])
    cadence = {"type": "CUSTOM", "dates": ["2031-05-01", "2031-04-01"]}
    preview = ok(_preview(admin, biller_token, invoice["id"], cadence))
    assert [(i["dueDate"], i["amount"]) for i in preview["instalments"]] == [
        ("2031-04-01", 35.98),
        ("2031-05-01", 35.98),
    ]


@pytest.mark.parametrize(
    "cadence",
    [
        {"type": "INTERVAL_COUNT", "timeUnit": "DAY", "count": 61, "startDate": "2031-01-01"},
        {"type": "CUSTOM", "dates": [f"2031-01-{day:02}" for day in range(1, 31)] + ["2031-02-01"]},
        {"type": "INTERVAL_COUNT", "timeUnit": "HOUR", "count": 2, "startDate": "2031-01-01"},
        {"type": "INTERVAL", "timeUnit": "DAY", "startDate": "2031-01-02", "endDate": "2031-01-01"},
        {"type": "CUSTOM", "dates": []},
        {"type": "WEEKLY"},
    ],
    ids=["too-many", "below-one-pound", "hours", "no-date", "no-custom-date", "unknown-type"],
)
def test_preview_refuses_an_unusable_cadence(admin, biller_token, customer, cadence):
    line = {"description": "Small", "quantity": 1, "unitAmount": 30, "taxRate": 0}
    invoice = new_invoice(admin, biller_token, customer["id"], items=[line])  # 31 parts < £1
    error = error_of(_preview(admin, biller_token, invoice["id"], cadence), 422)
    assert error["field"].startswith("cadence")


def test_preview_is_refused_once_the_invoice_has_payments_or_is_finished(
    admin, biller_token, customer
):
    cadence = {"type": "INTERVAL_COUNT", "timeUnit": "MONTH", "count": 2, "startDate": "2031-01-01"}
    paying = sent_invoice(admin, biller_token, customer["id"])
    body = {"invoiceId": paying["id"], "amount": 10, "reference": "BANK-1"}
    ok(admin.api.post("/payments:import", headers=biller_token.headers, json=body))
    voided = new_invoice(admin, biller_token, customer["id"])
    ok(admin.api.put(f"/invoices/{voided['id']}:void", headers=biller_token.headers))

    for invoice in (paying, voided):
        response = _preview(admin, biller_token, invoice["id"], cadence)
        assert error_of(response, 400)["type"] == "INVALID_STATE"


# --- the file ------------------------------------------------------------------------------------


def _check_pdf(document: bytes) -> None:
    """A structurally valid PDF: header, objects where the xref says, startxref at the xref."""
    assert document.startswith(b"%PDF-1.")
    assert document.rstrip().endswith(b"%%EOF")
    start = int(document.rsplit(b"startxref", 1)[1].split()[0])
    assert document[start:].startswith(b"xref")
    rows = document[start:].split(b"\n")
    count = int(rows[1].split()[1])
    for number, row in enumerate(rows[3 : 2 + count], start=1):
        offset = int(row.split()[0])
        assert document[offset:].startswith(b"%d 0 obj" % number)


def test_the_file_is_a_pdf_of_the_invoice(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"], invoiceNo="INV/2031 (A)")

    response = admin.api.get(f"/invoices/{invoice['id']}/file", headers=biller_token.headers)

    assert response.status_code == 200
    assert response.headers["content-type"] == "application/pdf"
    assert response.headers["content-disposition"] == 'inline; filename="INV_2031__A_.pdf"'
    _check_pdf(response.content)
    for text in (b"INV/2031 \\(A\\)", customer["name"].encode(), b"Widget", b"71.96", b"11.99"):
        assert text in response.content
    assert b"(DRAFT)" not in response.content


def test_a_draft_file_has_a_watermark(admin, biller_token, customer):
    invoice = new_invoice(admin, biller_token, customer["id"])
    response = admin.api.get(f"/invoices/{invoice['id']}/file", headers=biller_token.headers)
    _check_pdf(response.content)
    assert b"(DRAFT) Tj" in response.content


def test_the_file_of_an_unknown_invoice_is_404(admin, biller_token):
    response = admin.api.get("/invoices/nope/file", headers=biller_token.headers)
    assert error_of(response, 404)["type"] == "NOT_FOUND"


# --- plans on created and sent invoices ------------------------------------------------------


def test_an_unusable_plan_is_refused_at_create(admin, biller_token, customer):
    cadence = {"type": "INTERVAL_COUNT", "timeUnit": "DAY", "count": 60, "startDate": "2031-01-01"}
    line = {"description": "Small", "quantity": 1, "unitAmount": 50, "taxRate": 0}
    body = {
        "customer": {"id": customer["id"]},
        "items": [line],
        "instalmentPlanDetails": {"cadence": cadence},
    }
    error = error_of(_create(admin, biller_token, body), 422)
    assert error["field"] == "instalmentPlanDetails.cadence"


def test_a_new_plan_on_a_sent_invoice_replaces_its_payment_requests(admin, biller_token, customer):
    line = {"description": "Course", "quantity": 1, "unitAmount": 100, "taxRate": 0}
    invoice = sent_invoice(admin, biller_token, customer["id"], items=[line])
    (old,) = invoice["paymentRequests"]
    cadence = {"type": "CUSTOM", "dates": ["2031-01-01", "2031-02-01"]}

    updated = ok(
        _put(
            admin,
            biller_token,
            invoice["id"],
            {"items": [line], "instalmentPlanDetails": {"cadence": cadence}},
        )
    )

    assert get(admin, biller_token, f"/payment_requests/{old['id']}")["status"] == "VOID"
    current = [pr for pr in updated["paymentRequests"] if pr["status"] != "VOID"]
    assert [(pr["payByDate"], pr["amount"]) for pr in current] == [
        ("2031-01-01", 50),
        ("2031-02-01", 50),
    ]


def test_an_invoice_with_payments_keeps_its_plan_and_its_paid_part(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    body = {"invoiceId": invoice["id"], "amount": 50, "reference": "BANK-9"}
    ok(admin.api.post("/payments:import", headers=biller_token.headers, json=body))
    cadence = {"type": "CUSTOM", "dates": ["2031-01-01", "2031-02-01"]}

    replan = {"items": [WIDGET], "instalmentPlanDetails": {"cadence": cadence}}
    assert error_of(_put(admin, biller_token, invoice["id"], replan), 400)["type"] == (
        "INVALID_STATE"
    )
    small = {"description": "Small", "quantity": 1, "unitAmount": 40, "taxRate": 0}
    error = error_of(_put(admin, biller_token, invoice["id"], {"items": [small]}), 422)
    assert error["field"] == "items"


def test_lowering_the_total_to_what_was_paid_makes_the_invoice_paid(admin, biller_token, customer):
    invoice = sent_invoice(admin, biller_token, customer["id"])
    body = {"invoiceId": invoice["id"], "amount": 50, "reference": "BANK-9"}
    ok(admin.api.post("/payments:import", headers=biller_token.headers, json=body))
    line = {"description": "Settled", "quantity": 1, "unitAmount": 50, "taxRate": 0}

    updated = ok(_put(admin, biller_token, invoice["id"], {"items": [line]}))

    assert (updated["status"], updated["dueAmount"], updated["paidAmount"]) == (
        "PAID",
        "0.00",
        "50.00",
    )
    assert [(pr["status"], pr["amount"]) for pr in updated["paymentRequests"]] == [("PAID", 50)]
