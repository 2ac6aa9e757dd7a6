"""Recurring invoices and recurring payment requests (``/schedules/...``), over HTTP.

The module runs its own sandbox so a test can move a schedule to ``FINISHED`` (a state only the
simulation reaches) by writing its database.
"""

from __future__ import annotations

from datetime import date
from typing import Any

import pytest
from sqlalchemy import update
from sqlalchemy.orm import Session, sessionmaker

from sandbox.billing.schedules import add_months, number_of_occurrences, occurrence
from sandbox.core.db import session_scope
from sandbox.models.schedules import Schedule
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin

INVOICES = "/schedules/invoices"
REQUESTS = "/schedules/payment_requests"


@pytest.fixture
def admin(private: tuple[SandboxAdmin, str]) -> SandboxAdmin:
    """This module's own sandbox (see ``private`` in tests/sandbox/conftest.py)."""
    return private[0]


def _customer(admin: SandboxAdmin, tokens: BillerTokens, external_id: str = "C-1") -> str:
    body = {"name": f"Customer {external_id}", "externalId": external_id}
    response = admin.api.post("/customers", headers=tokens.headers, json=body)
    assert response.status_code in (200, 201), response.text
    return str(response.json()["id"])


def _invoice_body(customer: dict[str, str], **details: Any) -> dict[str, Any]:
    return {
        "cadence": {"timeUnit": "MONTHS", "frequency": 1, "startDate": "2030-01-31"},
        "invoiceDetails": {
            "customer": customer,
            "description": "Monthly support",
            "items": [
                {"description": "Support", "quantity": 3, "unitAmount": 19.99, "taxRate": 20}
            ],
            **details,
        },
    }


def _request_body(customer: dict[str, str], **details: Any) -> dict[str, Any]:
    return {
        "cadence": {
            "timeUnit": "WEEKS",
            "frequency": 2,
            "startDate": "2030-03-04",
            "endDate": "2030-04-01",
        },
        "paymentRequestDetails": {
            "customer": customer,
            "amount": 1499.99,
            "currencyCode": "GBP",
            "description": "Rent",
            **details,
        },
    }


def _create(admin: SandboxAdmin, tokens: BillerTokens, path: str, body: dict[str, Any]):
    response = admin.api.post(path, headers=tokens.headers, json=body)
    assert response.status_code == 201, response.text
    return response.json()


def _finish(db: sessionmaker[Session], schedule_id: str) -> None:
    with session_scope(db) as session:
        session.execute(
            update(Schedule).where(Schedule.id == schedule_id).values(status="FINISHED")
        )


# --- cadence arithmetic ------------------------------------------------------------------------


def test_month_steps_keep_the_start_day_clipped_to_the_month() -> None:
    cadence = {"timeUnit": "MONTHS", "frequency": 1, "startDate": "2028-01-31", "endDate": None}
    assert [occurrence(cadence, k) for k in range(4)] == [
        date(2028, 1, 31),
        date(2028, 2, 29),
        date(2028, 3, 31),
        date(2028, 4, 30),
    ]
    assert add_months(date(2027, 12, 15), 14) == date(2029, 2, 15)


def test_occurrences_stop_at_the_end_date() -> None:
    weekly = {
        "timeUnit": "WEEKS",
        "frequency": 2,
        "startDate": "2030-03-04",
        "endDate": "2030-04-01",
    }
    assert number_of_occurrences(weekly) == 3
    assert occurrence(weekly, 2) == date(2030, 4, 1) and occurrence(weekly, 3) is None
    yearly = {
        "timeUnit": "YEARS",
        "frequency": 1,
        "startDate": "2024-02-29",
        "endDate": "2027-02-28",
    }
    assert number_of_occurrences(yearly) == 4
    assert occurrence(yearly, 1) == date(2025, 2, 28)
    assert number_of_occurrences({**yearly, "endDate": None}) is None
    huge = {"timeUnit": "YEARS", "frequency": 5000, "startDate": "2030-01-01", "endDate": None}
    assert occurrence(huge, 2) is None  # past year 9999: no further date


# --- recurring invoices -------------------------------------------------------------------------


def test_create_recurring_invoice_as_draft(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)

    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))

    assert created["status"] == "DRAFT"
    assert created["recurringInvoiceNo"] == "SCH-1"
    assert created["nextDate"] == "2030-01-31"
    assert created["totalAmount"] == "71.96"  # 3 × 19.99 = 59.97 + 11.99 tax
    assert created["generatedCount"] == 0 and created["numberOfOccurrences"] is None
    details = created["invoiceDetails"]
    assert details["customer"] == {"id": customer_id, "externalId": "C-1"}
    assert details["items"][0]["unitAmount"] == 19.99 and details["items"][0]["quantity"] == 3
    assert details["paymentTerm"] == {"timeUnit": "DAYS", "value": 30}
    assert details["autoSend"] is False and details["currencyCode"] == "GBP"
    fetched = admin.api.get(f"{INVOICES}/{created['id']}", headers=biller_token.headers)
    assert fetched.status_code == 200 and fetched.json() == created
    second = _create(admin, biller_token, INVOICES, _invoice_body({"externalId": "C-1"}))
    assert second["recurringInvoiceNo"] == "SCH-2"
    assert second["invoiceDetails"]["customer"]["id"] == customer_id


@pytest.mark.parametrize(
    ("tax_type", "total"), [("EXCLUSIVE", "71.96"), ("INCLUSIVE", "59.97"), ("NONE", "59.97")]
)
def test_total_follows_items_tax_type(admin, biller_token, tax_type, total) -> None:
    customer_id = _customer(admin, biller_token)
    body = _invoice_body({"id": customer_id}, itemsTaxType=tax_type)
    assert _create(admin, biller_token, INVOICES, body)["totalAmount"] == total


def test_a_catalogue_tax_rate_id_sets_the_line_rate(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    rates = admin.api.get("/catalogs/tax_rates", headers=biller_token.headers).json()["taxRates"]
    five = next(rate for rate in rates if float(rate["rate"]) == 5)
    item = {"description": "Energy", "quantity": 10, "unitAmount": 10, "taxRateId": five["id"]}

    created = _create(
        admin, biller_token, INVOICES, _invoice_body({"id": customer_id}, items=[item])
    )

    assert created["totalAmount"] == "105.00"
    assert created["invoiceDetails"]["items"][0]["taxRate"] == 5


def _invalid_cases() -> list[tuple[str, Any, str]]:
    return [
        ("unknown customer", {"customer": {"id": "nope"}}, "invoiceDetails.customer.id"),
        (
            "unknown external",
            {"customer": {"externalId": "X"}},
            "invoiceDetails.customer.externalId",
        ),
        ("no customer", {"customer": {}}, "invoiceDetails.customer"),
        ("no items", {"items": []}, "invoiceDetails.items"),
        ("currency", {"currencyCode": "EUR"}, "invoiceDetails.currencyCode"),
        (
            "unit amount",
            {"items": [{"description": "x", "quantity": 1, "unitAmount": 1.005}]},
            "invoiceDetails.items[0].unitAmount",
        ),
        (
            "quantity",
            {"items": [{"description": "x", "quantity": 0, "unitAmount": 1}]},
            "invoiceDetails.items[0].quantity",
        ),
        (
            "tax rate id",
            {"items": [{"description": "x", "quantity": 1, "unitAmount": 1, "taxRateId": "no"}]},
            "invoiceDetails.items[0].taxRateId",
        ),
        ("tax type", {"itemsTaxType": "SOME"}, "invoiceDetails.itemsTaxType"),
        (
            "direct debit term",
            {
                "paymentTerm": {"timeUnit": "DAYS", "value": 2},
                "autoSend": True,
                "activation": {"collectionMethod": "DIRECT_DEBIT_PAYMENT"},
            },
            "invoiceDetails.paymentTerm.value",
        ),
    ]


@pytest.mark.parametrize(
    ("details", "field"),
    [case[1:] for case in _invalid_cases()],
    ids=[c[0] for c in _invalid_cases()],
)
def test_invalid_recurring_invoice_details_answer_422(admin, biller_token, details, field) -> None:
    customer_id = _customer(admin, biller_token)
    body = _invoice_body({"id": customer_id})
    body["invoiceDetails"].update(details)

    response = admin.api.post(INVOICES, headers=biller_token.headers, json=body)

    assert response.status_code == 422, response.text
    error = response.json()["errors"][0]
    assert error["type"] == "VALIDATION_ERROR" and error["field"] == field


@pytest.mark.parametrize(
    ("cadence", "field"),
    [
        ({"timeUnit": "DAYS"}, "cadence.timeUnit"),
        ({"frequency": 0}, "cadence.frequency"),
        ({"frequency": 1.5}, "cadence.frequency"),
        ({"startDate": "31/01/2030"}, "cadence.startDate"),
        ({"startDate": "2030-02-30"}, "cadence.startDate"),
        ({"endDate": "2029-12-31"}, "cadence.endDate"),
    ],
)
def test_invalid_cadence_answers_422(admin, biller_token, cadence, field) -> None:
    customer_id = _customer(admin, biller_token)
    body = _invoice_body({"id": customer_id})
    body["cadence"].update(cadence)

    response = admin.api.post(INVOICES, headers=biller_token.headers, json=body)

    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field


def test_missing_parts_and_unreadable_bodies(admin, biller_token) -> None:
    h = biller_token.headers
    no_cadence = admin.api.post(INVOICES, headers=h, json={"invoiceDetails": {}})
    assert no_cadence.status_code == 422
    assert {e["field"] for e in no_cadence.json()["errors"]} >= {"cadence"}
    garbled = admin.api.post(
        INVOICES, headers={**h, "Content-Type": "application/json"}, content=b"{nope"
    )
    assert garbled.status_code == 400 and garbled.json()["errors"][0]["type"] == "BAD_REQUEST"


def test_activate_moves_draft_to_active_once(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))

    active = admin.api.put(f"{INVOICES}/{created['id']}:activate", headers=biller_token.headers)

    assert active.status_code == 200, active.text
    assert active.json()["status"] == "ACTIVE" and active.json()["nextDate"] == "2030-01-31"
    assert active.json()["generatedCount"] == 0
    again = admin.api.put(f"{INVOICES}/{created['id']}:activate", headers=biller_token.headers)
    assert again.status_code == 400 and again.json()["errors"][0]["type"] == "INVALID_STATE"


def test_nothing_is_generated_by_a_draft(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    body = _invoice_body({"id": customer_id})
    body["cadence"]["startDate"] = "2020-01-01"  # long past: a generator would be due at once
    created = _create(admin, biller_token, INVOICES, body)

    invoices = admin.api.get("/invoices", headers=biller_token.headers).json()["invoices"]
    assert invoices == []
    fetched = admin.api.get(f"{INVOICES}/{created['id']}", headers=biller_token.headers).json()
    assert fetched["status"] == "DRAFT" and fetched["generatedCount"] == 0


def test_cancel_stops_the_schedule_and_is_repeatable(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))
    path = f"{INVOICES}/{created['id']}"

    cancelled = admin.api.put(f"{path}:cancel", headers=biller_token.headers)

    assert cancelled.status_code == 200
    assert cancelled.json()["status"] == "CANCELLED" and cancelled.json()["nextDate"] is None
    again = admin.api.put(f"{path}:cancel", headers=biller_token.headers)
    assert again.status_code == 200 and again.json() == cancelled.json()
    for action in (":activate", ""):
        body = _invoice_body({"id": customer_id}) if not action else None
        refused = admin.api.put(f"{path}{action}", headers=biller_token.headers, json=body)
        assert refused.status_code == 400 and refused.json()["errors"][0]["type"] == "INVALID_STATE"


def test_a_finished_schedule_cannot_be_cancelled_or_updated(admin, biller_token, db) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))
    _finish(db, created["id"])
    path = f"{INVOICES}/{created['id']}"
    h = biller_token.headers

    answers = [
        admin.api.put(f"{path}:cancel", headers=h),
        admin.api.put(f"{path}:activate", headers=h),
        admin.api.put(path, headers=h, json=_invoice_body({"id": customer_id})),
    ]

    for response in answers:
        assert (
            response.status_code == 400 and response.json()["errors"][0]["type"] == "INVALID_STATE"
        )


def test_update_replaces_cadence_and_details(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))
    body = _invoice_body(
        {"externalId": "C-1"},
        items=[{"description": "Licence", "quantity": 1, "unitAmount": 1200, "taxRate": 20}],
        autoSend=True,
        activation={"collectionMethod": "ONE_TIME_PAYMENT"},
    )
    body["cadence"] = {
        "timeUnit": "YEARS",
        "frequency": 1,
        "startDate": "2031-06-01",
        "endDate": "2035-06-01",
    }

    response = admin.api.put(f"{INVOICES}/{created['id']}", headers=biller_token.headers, json=body)

    assert response.status_code == 200, response.text
    updated = response.json()
    assert updated["totalAmount"] == "1440.00" and updated["nextDate"] == "2031-06-01"
    assert updated["numberOfOccurrences"] == 5 and updated["invoiceDetails"]["autoSend"] is True
    assert updated["recurringInvoiceNo"] == created["recurringInvoiceNo"]
    assert updated["lastUpdatedTime"] >= created["lastUpdatedTime"]
    fetched = admin.api.get(f"{INVOICES}/{created['id']}", headers=biller_token.headers).json()
    assert fetched == updated


def test_the_customer_of_a_schedule_cannot_change(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    other_id = _customer(admin, biller_token, "C-2")
    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))

    response = admin.api.put(
        f"{INVOICES}/{created['id']}",
        headers=biller_token.headers,
        json=_invoice_body({"id": other_id}),
    )

    assert response.status_code == 422
    assert response.json()["errors"][0]["field"] == "invoiceDetails.customer.id"


def test_delete_answers_204_then_404(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))
    path = f"{INVOICES}/{created['id']}"

    assert admin.api.delete(path, headers=biller_token.headers).status_code == 204
    assert admin.api.get(path, headers=biller_token.headers).status_code == 404
    assert admin.api.delete(path, headers=biller_token.headers).status_code == 404


def test_schedules_of_another_biller_answer_404(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    invoice = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))
    request = _create(admin, biller_token, REQUESTS, _request_body({"id": customer_id}))
    other = admin.connect_biller("Other Ltd")
    h = other.headers
    ipath, rpath = f"{INVOICES}/{invoice['id']}", f"{REQUESTS}/{request['id']}"

    answers = [
        admin.api.get(ipath, headers=h),
        admin.api.put(ipath, headers=h, json=_invoice_body({"id": customer_id})),
        admin.api.delete(ipath, headers=h),
        admin.api.put(f"{ipath}:cancel", headers=h),
        admin.api.put(f"{ipath}:activate", headers=h),
        admin.api.get(rpath, headers=h),
        admin.api.put(rpath, headers=h, json=_request_body({"id": customer_id})),
        admin.api.delete(rpath, headers=h),
        admin.api.put(f"{rpath}:cancel", headers=h),
        # a schedule of the other kind is not found either
        admin.api.get(f"{INVOICES}/{request['id']}", headers=biller_token.headers),
        admin.api.get(f"{REQUESTS}/{invoice['id']}", headers=biller_token.headers),
    ]

    assert [r.status_code for r in answers] == [404] * len(answers)
    assert admin.api.get(ipath, headers=biller_token.headers).json()["status"] == "DRAFT"


def test_tokens_that_may_not_write_schedules(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, INVOICES, _invoice_body({"id": customer_id}))
    read_only = admin.connect_biller(read_only=True)
    platform = admin.platform_token()

    body = _invoice_body({"id": customer_id})
    assert admin.api.post(INVOICES, headers=read_only.headers, json=body).status_code == 403
    assert admin.api.post(INVOICES, headers=platform.headers, json=body).status_code == 403
    assert admin.api.get(f"{INVOICES}/{created['id']}", headers=platform.headers).status_code == 403
    assert admin.api.post(INVOICES, json=body).status_code == 401


# --- recurring payment requests -----------------------------------------------------------------


def test_create_recurring_payment_request_starts_active(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)

    created = _create(admin, biller_token, REQUESTS, _request_body({"id": customer_id}))

    assert created["status"] == "ACTIVE" and created["recurringPaymentRequestNo"].startswith("SCH-")
    assert created["nextDate"] == "2030-03-04" and created["numberOfOccurrences"] == 3
    details = created["paymentRequestDetails"]
    assert details["amount"] == 1499.99 and details["currencyCode"] == "GBP"
    assert details["paymentTerm"] == {"timeUnit": "DAYS", "value": 30}
    assert "totalAmount" not in created
    fetched = admin.api.get(f"{REQUESTS}/{created['id']}", headers=biller_token.headers)
    assert fetched.status_code == 200 and fetched.json() == created


@pytest.mark.parametrize(
    ("details", "field"),
    [
        ({"amount": 0}, "paymentRequestDetails.amount"),
        ({"amount": 10.001}, "paymentRequestDetails.amount"),
        ({"currencyCode": None}, "paymentRequestDetails.currencyCode"),
        ({"currencyCode": "USD"}, "paymentRequestDetails.currencyCode"),
        ({"description": ""}, "paymentRequestDetails.description"),
        ({"taxRate": 101}, "paymentRequestDetails.taxRate"),
        ({"customer": {"id": "missing"}}, "paymentRequestDetails.customer.id"),
        (
            {"distribution": {"collectionMethod": "BY_POST"}},
            "paymentRequestDetails.distribution.collectionMethod",
        ),
        (
            {
                "distribution": {"collectionMethod": "AUTO_COLLECT"},
                "paymentTerm": {"timeUnit": "DAYS", "value": 2},
            },
            "paymentRequestDetails.paymentTerm.value",
        ),
    ],
)
def test_invalid_recurring_payment_requests_answer_422(admin, biller_token, details, field) -> None:
    customer_id = _customer(admin, biller_token)
    body = _request_body({"id": customer_id})
    body["paymentRequestDetails"].update(details)
    body["paymentRequestDetails"] = {
        k: v for k, v in body["paymentRequestDetails"].items() if v is not None
    }

    response = admin.api.post(REQUESTS, headers=biller_token.headers, json=body)

    assert response.status_code == 422, response.text
    assert response.json()["errors"][0]["field"] == field


def test_direct_debit_with_three_days_is_accepted(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token)
    body = _request_body(
        {"id": customer_id},
        distribution={"collectionMethod": "AUTO_COLLECT"},
        paymentTerm={"timeUnit": "DAYS", "value": 3},
    )
    created = _create(admin, biller_token, REQUESTS, body)
    assert created["paymentRequestDetails"]["distribution"]["collectionMethod"] == "AUTO_COLLECT"


def test_recurring_payment_request_update_cancel_and_delete(admin, biller_token, db) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, REQUESTS, _request_body({"id": customer_id}))
    path, h = f"{REQUESTS}/{created['id']}", biller_token.headers

    body = _request_body({"id": customer_id}, amount=250, reference="RENT-1")
    updated = admin.api.put(path, headers=h, json=body)
    assert updated.status_code == 200, updated.text
    assert updated.json()["paymentRequestDetails"]["amount"] == 250
    assert updated.json()["paymentRequestDetails"]["reference"] == "RENT-1"
    other_id = _customer(admin, biller_token, "C-2")
    moved = admin.api.put(path, headers=h, json=_request_body({"id": other_id}))
    assert moved.status_code == 422
    assert moved.json()["errors"][0]["field"] == "paymentRequestDetails.customer.id"

    cancelled = admin.api.put(f"{path}:cancel", headers=h)
    assert cancelled.status_code == 200 and cancelled.json()["status"] == "CANCELLED"
    assert admin.api.put(path, headers=h, json=body).status_code == 400
    assert admin.api.delete(path, headers=h).status_code == 204
    assert admin.api.get(path, headers=h).status_code == 404


def test_a_finished_recurring_payment_request_cannot_be_cancelled(admin, biller_token, db) -> None:
    customer_id = _customer(admin, biller_token)
    created = _create(admin, biller_token, REQUESTS, _request_body({"id": customer_id}))
    _finish(db, created["id"])

    response = admin.api.put(f"{REQUESTS}/{created['id']}:cancel", headers=biller_token.headers)

    assert response.status_code == 400 and response.json()["errors"][0]["type"] == "INVALID_STATE"
