"""The sandbox's main paths on each database (SQLite, and PostgreSQL when configured): a customer
with a mandate, an invoice sent by direct debit and paid by an imported payment, a payment request
paused and resumed, and a bulk import processed by the background worker. The full rule-by-rule
suites run on SQLite; this one proves the same code stands on PostgreSQL."""

from __future__ import annotations

import time

from tests.support.billing import (
    activate_invoice,
    get,
    methods,
    new_customer,
    new_invoice,
    new_payment_request,
    ok,
)
from tests.support.sandbox_admin import running_sandbox

CSV = "externalId,customerId,description,totalAmount,currencyCode,payByDate\n"


def _wait_for_job(admin, tokens, job_id: str) -> dict:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        job = get(admin, tokens, f"/payment_requests/bulk_import/{job_id}")
        if job["status"] not in ("PENDING", "PROCESSING"):
            return job
        time.sleep(0.1)
    raise AssertionError(f"bulk import job {job_id} did not finish in 30 s")


def test_main_paths_work_on_this_database(database_url) -> None:
    with running_sandbox(database_url) as admin:
        tokens = admin.connect_biller("Smoke Ltd")
        customer = new_customer(admin, tokens, mandate="ACTIVE")

        invoice = new_invoice(admin, tokens, customer["id"])
        sent = activate_invoice(admin, tokens, invoice["id"], "DIRECT_DEBIT_PAYMENT")
        assert sent["status"] == "SCHEDULED"
        paid = ok(
            admin.api.post(
                "/payments:import",
                headers=tokens.headers,
                json={
                    "invoiceId": invoice["id"],
                    "amount": float(sent["dueAmount"]),
                    "reference": "BACS-1",
                },
            )
        )
        assert paid["payments"][0]["paymentMethod"] == "IMPORTED"
        assert get(admin, tokens, f"/invoices/{invoice['id']}")["status"] == "PAID"

        request = new_payment_request(admin, tokens, customer["id"])
        pause = {"collectionMethods": ["AUTO_COLLECT"]}
        path = f"/payment_requests/{request['id']}"
        assert (
            admin.api.put(
                f"{path}:pause_collection", headers=tokens.headers, json=pause
            ).status_code
            == 204
        )
        assert methods(get(admin, tokens, path))["AUTO_COLLECT"]["paused"] is True
        assert (
            admin.api.put(
                f"{path}:resume_collection", headers=tokens.headers, json=pause
            ).status_code
            == 204
        )
        assert methods(get(admin, tokens, path))["AUTO_COLLECT"]["paused"] is False

        rows = CSV + f"SMOKE-1,{customer['id']},Rent,1250.50,GBP,2099-01-31\n"
        upload = admin.api.post(
            "/payment_requests/bulk_import",
            headers=tokens.headers,
            params={"collectionMethod": "NONE", "deleteMissingPaymentRequests": "false"},
            files={"inputFile": ("requests.csv", rows.encode(), "text/csv")},
        )
        assert upload.status_code == 202, upload.text
        job = _wait_for_job(admin, tokens, upload.json()["jobId"])
        assert job["status"] == "COMPLETED"
        assert job["countsByItemStatus"] == [{"status": "CREATED", "count": 1}]
        assert admin.biller_stats(tokens.biller_id)["bulkImportJobs"] == 1


def test_bulk_import_rows_emit_payment_request_events(admin, biller_token) -> None:
    customer = new_customer(admin, biller_token)
    rows = CSV + f"EV-1,{customer['id']},Rent,10.00,GBP,2099-01-31\n"
    upload = admin.api.post(
        "/payment_requests/bulk_import",
        headers=biller_token.headers,
        params={"collectionMethod": "NONE", "deleteMissingPaymentRequests": "false"},
        files={"inputFile": ("requests.csv", rows.encode(), "text/csv")},
    )
    job = _wait_for_job(admin, biller_token, upload.json()["jobId"])
    assert job["status"] == "COMPLETED"
    emitted = admin.http.get(
        "/_sandbox/webhooks/events",
        params={"billerId": biller_token.biller_id, "eventType": "PAYMENT_REQUEST_CREATED"},
    ).json()["events"]
    assert len(emitted) == 1


def test_billers_and_customer_level_pauses_emit_events(admin, biller_token) -> None:
    customer = new_customer(admin, biller_token, mandate="ACTIVE")
    settings = {"customerId": customer["id"], "pausedCollectionMethods": ["AUTO_COLLECT"]}
    ok(admin.api.put("/customers/payment_settings", headers=biller_token.headers, json=settings))
    settings["pausedCollectionMethods"] = []
    ok(admin.api.put("/customers/payment_settings", headers=biller_token.headers, json=settings))
    emitted = admin.http.get(
        "/_sandbox/webhooks/events", params={"billerId": biller_token.biller_id}
    ).json()["events"]
    types = [e["type"] for e in emitted]
    assert types[0] == "BILLER_CREATED"
    assert types.index("CUSTOMER_COLLECTION_PAUSED") < types.index("CUSTOMER_COLLECTION_RESUMED")
