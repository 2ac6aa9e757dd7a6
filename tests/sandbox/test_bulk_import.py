"""Bulk import of payment requests (``/payment_requests/bulk_import``), over HTTP.

The module runs its own sandbox so tests can put payment requests into states only the
simulation reaches (``SUBMITTED``, ``PAID``) by writing its database directly.
"""

from __future__ import annotations

import threading
import time
import uuid
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

import pytest
from sqlalchemy import select, update
from sqlalchemy.orm import Session, sessionmaker

from sandbox.bulk_import import jobs as bulk_import
from sandbox.bulk_import.worker import THREAD_PREFIX, BulkImportWorker
from sandbox.core.db import init_schema, make_engine, make_session_factory, session_scope
from sandbox.models.billing import PaymentRequest
from sandbox.models.imports import BulkImportItem, BulkImportJob
from sandbox.oauth import billers
from tests.support.sandbox_admin import BillerTokens, SandboxAdmin, running_sandbox

HEADER = (
    "externalId,customerExternalId,description,totalAmount,currencyCode,taxRate,reference,payByDate"
)
FINAL = {"COMPLETED", "COMPLETED_WITH_ERRORS", "FAILED"}


@pytest.fixture
def admin(private: tuple[SandboxAdmin, str]) -> SandboxAdmin:
    """This module's own sandbox (see ``private`` in tests/sandbox/conftest.py)."""
    return private[0]


# --- helpers ----------------------------------------------------------------------------------


def _customer(admin: SandboxAdmin, tokens: BillerTokens, external_id: str) -> str:
    body = {"name": f"Customer {external_id}", "externalId": external_id}
    response = admin.api.post("/customers", headers=tokens.headers, json=body)
    assert response.status_code in (200, 201), response.text
    return str(response.json()["id"])


def _upload(
    admin: SandboxAdmin,
    tokens: BillerTokens,
    content: str | bytes,
    *,
    delete_missing: bool = False,
    method: str = "NONE",
    name: str = "june.csv",
):
    data = content.encode() if isinstance(content, str) else content
    params = {
        "collectionMethod": method,
        "deleteMissingPaymentRequests": "true" if delete_missing else "false",
    }
    return admin.api.post(
        "/payment_requests/bulk_import",
        headers=tokens.headers,
        params=params,
        files={"inputFile": (name, data, "text/csv")},
    )


def _wait(admin: SandboxAdmin, tokens: BillerTokens, job_id: str) -> dict[str, Any]:
    deadline = time.monotonic() + 120  # a busy machine; the job itself takes a few seconds
    while True:
        job = admin.api.get(f"/payment_requests/bulk_import/{job_id}", headers=tokens.headers)
        assert job.status_code == 200, job.text
        if job.json()["status"] in FINAL or time.monotonic() > deadline:
            return dict(job.json())
        time.sleep(0.05)


def _run(admin: SandboxAdmin, tokens: BillerTokens, content: str | bytes, **kw: Any):
    """Upload and wait for the job: (job, items)."""
    response = _upload(admin, tokens, content, **kw)
    assert response.status_code == 202, response.text
    job = _wait(admin, tokens, response.json()["jobId"])
    items = _items(admin, tokens, job["jobId"], size=200).json()["items"]
    return job, items


def _items(admin: SandboxAdmin, tokens: BillerTokens, job_id: str, **params: Any):
    path = f"/payment_requests/bulk_import/{job_id}/items"
    return admin.api.get(path, headers=tokens.headers, params=params)


def _csv(*rows: str) -> str:
    return "\n".join((HEADER, *rows)) + "\n"


def _request(db: sessionmaker[Session], request_id: str) -> PaymentRequest | None:
    with session_scope(db) as session:
        return session.get(PaymentRequest, request_id)


def _set_status(db: sessionmaker[Session], request_id: str, status: str, paid: str = "0") -> None:
    with session_scope(db) as session:
        session.execute(
            update(PaymentRequest)
            .where(PaymentRequest.id == request_id)
            .values(status=status, paid_amount=Decimal(paid))
        )


def _counts(job: dict[str, Any]) -> dict[str, int]:
    return {entry["status"]: entry["count"] for entry in job["countsByItemStatus"]}


def _by_external_id(items: list[dict[str, Any]]) -> dict[str, dict[str, Any]]:
    return {item["externalId"]: item for item in items}


# --- upload -----------------------------------------------------------------------------------


def test_upload_answers_202_with_a_pending_job_and_counts_it(admin, biller_token) -> None:
    _customer(admin, biller_token, "C-1")
    before = admin.biller_stats(biller_token.biller_id).get("bulkImportJobs", 0)

    response = _upload(admin, biller_token, _csv("A-1,C-1,June fees,120.50,GBP,20,R-1,2025-06-30"))

    assert response.status_code == 202, response.text
    job = response.json()
    assert job["status"] == "PENDING"
    assert job["type"] == "BULK_PAYMENT_REQUEST_IMPORT"
    assert job["countsByItemStatus"] == [] and job["totalRows"] is None
    assert job["fileName"] == "june.csv" and job["collectionMethod"] == "NONE"
    assert job["deleteMissingPaymentRequests"] is False
    assert response.headers["location"] == f"/api/payment_requests/bulk_import/{job['jobId']}"
    stats = admin.biller_stats(biller_token.biller_id)
    assert stats["bulkImportJobs"] == before + 1


def test_the_worker_creates_payment_requests_with_exact_amounts(admin, biller_token, db) -> None:
    customer_id = _customer(admin, biller_token, "C-1")
    job, items = _run(
        admin,
        biller_token,
        _csv(
            "A-1,C-1,June fees,120.50,GBP,20,R-1,2025-06-30",
            "A-2,C-1,Tiny,0.10,,,,",
            "A-3,C-1,Large,1234567.89,GBP,17.5,,",
        ),
    )

    assert job["status"] == "COMPLETED", job
    assert job["totalRows"] == 3 and job["completionTime"] is not None
    assert job["countsByItemStatus"] == [{"status": "CREATED", "count": 3}]
    assert [item["rowNumber"] for item in items] == [1, 2, 3]
    first = _request(db, _by_external_id(items)["A-1"]["paymentRequestId"])
    assert first is not None
    assert first.total_amount == Decimal("120.50") and first.tax_rate == Decimal("20")
    assert (first.customer_id, first.status, first.association_type) == (
        customer_id,
        "DRAFT",
        "SINGLE",
    )
    assert first.reference == "R-1" and first.pay_by_date.isoformat() == "2025-06-30"
    assert first.import_job_id == job["jobId"] and first.payment_request_no.startswith("PR-")
    assert first.currency_code == "GBP" and first.distribution == {"collectionMethod": "NONE"}
    assert _request(db, _by_external_id(items)["A-2"]["paymentRequestId"]).total_amount == Decimal(
        "0.10"
    )
    large = _request(db, _by_external_id(items)["A-3"]["paymentRequestId"])
    assert large.total_amount == Decimal("1234567.89") and large.tax_rate == Decimal("17.5")


def test_an_imported_request_reads_back_over_the_api(admin, biller_token) -> None:
    customer_id = _customer(admin, biller_token, "C-1")
    _, items = _run(admin, biller_token, _csv("R-1,C-1,June fees,120.50,GBP,20,REF-1,2025-06-30"))

    response = admin.api.get(
        f"/payment_requests/{items[0]['paymentRequestId']}", headers=biller_token.headers
    )

    assert response.status_code == 200, response.text
    shown = response.json()
    assert shown["externalId"] == "R-1" and shown["customer"]["id"] == customer_id
    assert shown["totalAmount"] == 120.5 and shown["taxRate"] == 20
    assert shown["status"] == "DRAFT" and shown["associationType"] == "SINGLE"
    assert shown["source"] == "BULK_IMPORT" and shown["payByDate"] == "2025-06-30"
    listed = admin.api.get(
        "/payment_requests", headers=biller_token.headers, params={"externalIds": "R-1"}
    ).json()["paymentRequests"]
    assert [pr["id"] for pr in listed] == [items[0]["paymentRequestId"]]


def test_customer_by_id_and_by_external_id(admin, biller_token, db) -> None:
    by_ext = _customer(admin, biller_token, "C-EXT")
    by_id = _customer(admin, biller_token, "C-ID")
    content = (
        "externalId,customerId,customerExternalId,description,totalAmount\n"
        f"B-1,,C-EXT,one,10\nB-2,{by_id},,two,20\nB-3,{by_id},C-EXT,mismatch,30\n"
    )

    job, items = _run(admin, biller_token, content)

    rows = _by_external_id(items)
    assert _request(db, rows["B-1"]["paymentRequestId"]).customer_id == by_ext
    assert _request(db, rows["B-2"]["paymentRequestId"]).customer_id == by_id
    assert rows["B-3"]["status"] == "FAILED"
    assert rows["B-3"]["errors"][0]["field"] == "customerExternalId"
    assert job["status"] == "COMPLETED_WITH_ERRORS"


@pytest.mark.parametrize(
    ("row", "error_type", "field"),
    [
        ("X,C-1,,10,,,,", "VALIDATION_ERROR", "description"),
        ("X,C-1,d,,,,,", "VALIDATION_ERROR", "totalAmount"),
        ("X,C-1,d,1.005,,,,", "VALIDATION_ERROR", "totalAmount"),
        ("X,C-1,d,0,,,,", "VALIDATION_ERROR", "totalAmount"),
        ("X,C-1,d,-5,,,,", "VALIDATION_ERROR", "totalAmount"),
        ("X,C-1,d,ten,,,,", "VALIDATION_ERROR", "totalAmount"),
        ("X,C-1,d,10,EUR,,,", "VALIDATION_ERROR", "currencyCode"),
        ("X,C-1,d,10,,120,,", "VALIDATION_ERROR", "taxRate"),
        ("X,C-1,d,10,,,,30/06/2025", "VALIDATION_ERROR", "payByDate"),
        ("X,C-1,d,10,,,,2025-02-30", "VALIDATION_ERROR", "payByDate"),
        ("X,C-404,d,10,,,,", "NOT_FOUND", "customerExternalId"),
        ("X,,d,10,,,,", "VALIDATION_ERROR", "customerId"),
        (",C-1,d,10,,,,", "VALIDATION_ERROR", "externalId"),
    ],
)
def test_a_bad_row_fails_with_its_error_while_good_rows_proceed(
    admin, biller_token, row, error_type, field
) -> None:
    _customer(admin, biller_token, "C-1")

    job, items = _run(admin, biller_token, _csv("GOOD-1,C-1,fine,10,,,,", row))

    assert job["status"] == "COMPLETED_WITH_ERRORS"
    assert _counts(job) == {"CREATED": 1, "FAILED": 1}
    good, bad = items
    assert good["status"] == "CREATED" and good["paymentRequestId"]
    assert bad["status"] == "FAILED" and bad["rowNumber"] == 2 and bad["paymentRequestId"] is None
    assert {"type": error_type, "field": field} in [
        {"type": e["type"], "field": e.get("field")} for e in bad["errors"]
    ]


def test_a_row_with_the_wrong_number_of_fields_fails(admin, biller_token) -> None:
    _customer(admin, biller_token, "C-1")
    job, items = _run(admin, biller_token, _csv("A,C-1,d,10,,,,,extra", "B,C-1,d,10"))
    assert [item["status"] for item in items] == ["FAILED", "FAILED"]
    assert all(item["errors"][0]["type"] == "VALIDATION_ERROR" for item in items)


def test_a_duplicate_external_id_fails_both_rows(admin, biller_token, db) -> None:
    _customer(admin, biller_token, "C-1")

    job, items = _run(
        admin, biller_token, _csv("D-1,C-1,one,10,,,,", "D-2,C-1,ok,11,,,,", "D-1,C-1,two,12,,,,")
    )

    assert _counts(job) == {"CREATED": 1, "FAILED": 2}
    failed = [item for item in items if item["status"] == "FAILED"]
    assert [item["rowNumber"] for item in failed] == [1, 3]
    assert all(item["errors"][-1]["field"] == "externalId" for item in failed)
    with session_scope(db) as session:
        assert (
            session.scalars(select(PaymentRequest).where(PaymentRequest.external_id == "D-1")).all()
            == []
        )


def test_quoting_bom_and_crlf_are_read(admin, biller_token, db) -> None:
    _customer(admin, biller_token, "C-1")
    content = "\ufeff" + HEADER + '\r\nQ-1,C-1,"Fees, June\r\nline two",99.99,GBP,,"R ""1""",\r\n'

    job, items = _run(admin, biller_token, content.encode("utf-8"))

    assert job["status"] == "COMPLETED", items
    created = _request(db, items[0]["paymentRequestId"])
    assert created.description == "Fees, June\r\nline two" and created.reference == 'R "1"'


# --- re-import: update, unchanged, not editable ------------------------------------------------


def test_reimport_updates_changed_rows_and_keeps_the_rest_unchanged(
    admin, biller_token, db
) -> None:
    _customer(admin, biller_token, "C-1")
    _, first = _run(admin, biller_token, _csv("U-1,C-1,one,10.50,,,,", "U-2,C-1,two,20,,20,,"))

    job, items = _run(admin, biller_token, _csv("U-1,C-1,one,10.5,,,,", "U-2,C-1,two,25.75,,20,,"))

    assert _counts(job) == {"UPDATED": 1, "UNCHANGED": 1}
    rows = _by_external_id(items)
    assert rows["U-1"]["status"] == "UNCHANGED"
    assert rows["U-2"]["status"] == "UPDATED"
    assert rows["U-2"]["paymentRequestId"] == _by_external_id(first)["U-2"]["paymentRequestId"]
    updated = _request(db, rows["U-2"]["paymentRequestId"])
    assert updated.total_amount == Decimal("25.75") and updated.import_job_id == job["jobId"]


@pytest.mark.parametrize("status", ["SUBMITTED", "PAID", "SETTLED", "VOID"])
def test_a_row_for_a_request_that_can_no_longer_be_edited_fails(
    admin, biller_token, db, status
) -> None:
    _customer(admin, biller_token, "C-1")
    _, first = _run(admin, biller_token, _csv("L-1,C-1,one,10,,,,"))
    _set_status(db, first[0]["paymentRequestId"], status)

    job, items = _run(admin, biller_token, _csv("L-1,C-1,one,99,,,,"))

    assert job["status"] == "COMPLETED_WITH_ERRORS"
    assert items[0]["status"] == "FAILED" and items[0]["errors"][0]["type"] == "INVALID_STATE"
    assert _request(db, first[0]["paymentRequestId"]).total_amount == Decimal("10.00")


def test_an_external_id_of_a_request_not_created_by_an_import_fails(
    admin, biller_token, db
) -> None:
    customer_id = _customer(admin, biller_token, "C-1")
    _, first = _run(admin, biller_token, _csv("API-1,C-1,one,10,,,,"))
    with session_scope(db) as session:  # as if created by POST /payment_requests
        session.get(PaymentRequest, first[0]["paymentRequestId"]).import_job_id = None

    _, items = _run(admin, biller_token, _csv("API-1,C-1,one,12,,,,"))

    assert items[0]["status"] == "FAILED" and items[0]["errors"][0]["field"] == "externalId"
    assert _request(db, first[0]["paymentRequestId"]).customer_id == customer_id


# --- deleteMissingPaymentRequests -------------------------------------------------------------


def test_delete_missing_deletes_unlisted_imports_and_keeps_paid_or_submitted(
    admin, biller_token, db
) -> None:
    _customer(admin, biller_token, "C-1")
    _, first = _run(
        admin,
        biller_token,
        _csv(*(f"S-{n},C-1,row {n},10,,,," for n in range(1, 7))),
    )
    ids = {item["externalId"]: item["paymentRequestId"] for item in first}
    _set_status(db, ids["S-3"], "SUBMITTED")
    _set_status(db, ids["S-4"], "PAID", paid="10")
    _set_status(db, ids["S-5"], "UNPAID", paid="4")  # partly paid: kept
    _set_status(db, ids["S-6"], "VOID")
    with session_scope(db) as session:  # S-2 was created by the API, not by an import
        session.get(PaymentRequest, ids["S-2"]).import_job_id = None

    job, items = _run(admin, biller_token, _csv("S-1,C-1,row 1,10,,,,"), delete_missing=True)

    assert job["status"] == "COMPLETED_WITH_ERRORS"
    assert _counts(job) == {"UNCHANGED": 1, "DELETED": 1, "NOT_DELETED": 3}
    rows = _by_external_id(items)
    assert rows["S-1"]["rowNumber"] == 1
    assert rows["S-6"]["status"] == "DELETED" and rows["S-6"]["rowNumber"] is None
    assert rows["S-6"]["paymentRequestId"] == ids["S-6"]
    for kept in ("S-3", "S-4", "S-5"):
        assert rows[kept]["status"] == "NOT_DELETED" and rows[kept]["rowNumber"] is None
        assert rows[kept]["errors"][0]["type"] == "INVALID_STATE"
        assert _request(db, ids[kept]) is not None
    assert "S-2" not in rows and _request(db, ids["S-2"]) is not None
    assert _request(db, ids["S-6"]) is None


def test_without_delete_missing_unlisted_requests_stay(admin, biller_token, db) -> None:
    _customer(admin, biller_token, "C-1")
    _, first = _run(admin, biller_token, _csv("K-1,C-1,one,10,,,,", "K-2,C-1,two,10,,,,"))

    job, items = _run(admin, biller_token, _csv("K-1,C-1,one,10,,,,"))

    assert job["status"] == "COMPLETED" and len(items) == 1
    assert _request(db, first[1]["paymentRequestId"]) is not None


def test_delete_missing_leaves_other_billers_alone(admin, biller_token, db) -> None:
    other = admin.connect_biller("Other Ltd")
    _customer(admin, other, "C-1")
    _, theirs = _run(admin, other, _csv("O-1,C-1,theirs,10,,,,"))
    _customer(admin, biller_token, "C-1")

    job, items = _run(admin, biller_token, _csv("M-1,C-1,mine,10,,,,"), delete_missing=True)

    assert job["status"] == "COMPLETED" and [i["externalId"] for i in items] == ["M-1"]
    assert _request(db, theirs[0]["paymentRequestId"]) is not None


# --- files that fail as a whole ---------------------------------------------------------------


@pytest.mark.parametrize(
    ("content", "error_type", "field"),
    [
        (
            "externalId,customerExternalId,description,totalAmount\nA,C-1,£5,5\n".encode("latin-1"),
            "BAD_REQUEST",
            "inputFile",
        ),
        (b"", "BAD_REQUEST", "inputFile"),
        (
            b"externalId,customerExternalId,totalAmount\nA,C-1,5\n",
            "VALIDATION_ERROR",
            "description",
        ),
        (b"externalId,description,totalAmount\nA,d,5\n", "VALIDATION_ERROR", "customerId"),
        (
            b'externalId,customerExternalId,description,totalAmount\nA,C-1,"open,5\n',
            "BAD_REQUEST",
            "inputFile",
        ),
        (
            (
                "externalId,customerExternalId,description,totalAmount\n"
                + "".join(f"R{n},C-1,d,1\n" for n in range(10_001))
            ).encode(),
            "BAD_REQUEST",
            "inputFile",
        ),
    ],
    ids=[
        "not-utf8",
        "empty",
        "missing-column",
        "no-customer-column",
        "bad-quoting",
        "too-many-rows",
    ],
)
def test_an_unreadable_file_fails_the_job_and_applies_nothing(
    admin, biller_token, db, content, error_type, field
) -> None:
    _customer(admin, biller_token, "C-1")

    job, items = _run(admin, biller_token, content)

    assert job["status"] == "FAILED"
    assert job["errors"] and job["errors"][0]["type"] == error_type
    assert job["errors"][0]["field"] == field
    assert items == [] and job["countsByItemStatus"] == []
    with session_scope(db) as session:
        assert (
            session.scalars(
                select(PaymentRequest).where(PaymentRequest.import_job_id == job["jobId"])
            ).all()
            == []
        )


def test_ten_thousand_rows_are_accepted(admin, biller_token) -> None:
    """The row limit is inclusive (rows fail on the unknown customer, which is quick)."""
    content = "externalId,customerExternalId,description,totalAmount\n" + "".join(
        f"T{n},NOPE,d,1\n" for n in range(10_000)
    )
    job, _ = _run(admin, biller_token, content)
    assert job["status"] == "COMPLETED_WITH_ERRORS" and job["totalRows"] == 10_000
    assert _counts(job) == {"FAILED": 10_000}


def test_a_header_only_file_completes_with_no_items(admin, biller_token) -> None:
    job, items = _run(admin, biller_token, HEADER + "\n")
    assert job["status"] == "COMPLETED" and job["totalRows"] == 0 and items == []


# --- bad uploads: 400, no job ------------------------------------------------------------------


@pytest.mark.parametrize("method", ["AUTO_COLLECT", "ON_DEMAND", "SOMETHING"])
def test_collection_methods_other_than_none_answer_400(admin, biller_token, method) -> None:
    response = _upload(admin, biller_token, _csv(), method=method)
    assert response.status_code == 400
    assert response.json()["errors"][0] == {
        **response.json()["errors"][0],
        "type": "BAD_REQUEST",
        "field": "collectionMethod",
    }


@pytest.mark.parametrize("missing", ["collectionMethod", "deleteMissingPaymentRequests"])
def test_required_query_parameters_answer_400(admin, biller_token, missing) -> None:
    params = {"collectionMethod": "NONE", "deleteMissingPaymentRequests": "false"}
    params.pop(missing)
    response = admin.api.post(
        "/payment_requests/bulk_import",
        headers=biller_token.headers,
        params=params,
        files={"inputFile": ("a.csv", _csv().encode(), "text/csv")},
    )
    assert response.status_code == 400
    assert response.json()["errors"][0]["field"] == missing


def test_uploads_without_an_input_file_answer_400_and_create_no_job(admin, biller_token) -> None:
    url = "/payment_requests/bulk_import?collectionMethod=NONE&deleteMissingPaymentRequests=false"
    h = biller_token.headers
    answers = [
        admin.api.post(url, headers=h, files={"other": ("a.csv", b"x", "text/csv")}),
        admin.api.post(url, headers=h, json={"inputFile": HEADER}),
        admin.api.post(
            url, headers=h, files={"inputFile": ("big.csv", b"x" * (5 * 1024 * 1024 + 1))}
        ),
    ]
    for response in answers:
        assert response.status_code == 400, response.text
        assert response.json()["errors"][0]["field"] == "inputFile"
    assert admin.biller_stats(biller_token.biller_id).get("bulkImportJobs", 0) == 0


def test_a_plain_form_field_holding_the_csv_is_accepted(admin, biller_token) -> None:
    url = "/payment_requests/bulk_import?collectionMethod=NONE&deleteMissingPaymentRequests=false"
    response = admin.api.post(
        url, headers=biller_token.headers, data={"inputFile": HEADER + "\n"}, files={"x": b""}
    )
    assert response.status_code == 202, response.text
    assert _wait(admin, biller_token, response.json()["jobId"])["status"] == "COMPLETED"


def test_tokens_that_may_not_import(admin, biller_token) -> None:
    read_only = admin.connect_biller(read_only=True)
    platform = admin.platform_token()
    assert _upload(admin, read_only, _csv()).status_code == 403
    assert _upload(admin, platform, _csv()).status_code == 403
    anonymous = admin.api.post(
        "/payment_requests/bulk_import?collectionMethod=NONE&deleteMissingPaymentRequests=false",
        files={"inputFile": ("a.csv", b"x")},
    )
    assert anonymous.status_code == 401


# --- reading jobs and items --------------------------------------------------------------------


def test_jobs_of_another_biller_answer_404_and_bad_ids_400(admin, biller_token) -> None:
    job_id = _upload(admin, biller_token, _csv()).json()["jobId"]
    other = admin.connect_biller("Other Ltd")
    base = "/payment_requests/bulk_import"
    assert admin.api.get(f"{base}/{job_id}", headers=other.headers).status_code == 404
    assert admin.api.get(f"{base}/{job_id}/items", headers=other.headers).status_code == 404
    unknown = admin.api.get(f"{base}/{uuid.uuid4()}", headers=biller_token.headers)
    assert unknown.status_code == 404 and unknown.json()["errors"][0]["type"] == "NOT_FOUND"
    malformed = admin.api.get(f"{base}/not-a-uuid", headers=biller_token.headers)
    assert malformed.status_code == 400 and malformed.json()["errors"][0]["field"] == "jobId"


def test_items_are_paged_and_filtered_by_status(admin, biller_token) -> None:
    _customer(admin, biller_token, "C-1")
    job, _ = _run(
        admin,
        biller_token,
        _csv(*(f"P-{n},C-1,d,{'0' if n % 2 else '1'},,,," for n in range(1, 6))),
    )

    first = _items(admin, biller_token, job["jobId"], size=2).json()
    assert [item["rowNumber"] for item in first["items"]] == [1, 2]
    assert first["page"]["totalElements"] == 5 and first["page"]["totalPages"] == 3
    last = _items(admin, biller_token, job["jobId"], size=2, page=2).json()
    assert [item["rowNumber"] for item in last["items"]] == [5]
    failed = _items(admin, biller_token, job["jobId"], statuses="FAILED").json()
    assert [item["rowNumber"] for item in failed["items"]] == [1, 3, 5]
    both = _items(admin, biller_token, job["jobId"], statuses=["FAILED", "CREATED"]).json()
    assert both["page"]["totalElements"] == 5
    comma = _items(admin, biller_token, job["jobId"], statuses="CREATED,UPDATED").json()
    assert [item["rowNumber"] for item in comma["items"]] == [2, 4]
    backwards = _items(admin, biller_token, job["jobId"], sort="rowNumber,desc").json()
    assert [item["rowNumber"] for item in backwards["items"]] == [5, 4, 3, 2, 1]
    unknown = _items(admin, biller_token, job["jobId"], statuses="LOST")
    assert unknown.status_code == 400 and unknown.json()["errors"][0]["field"] == "statuses"


def test_jobs_of_one_biller_run_in_upload_order(admin, biller_token, db) -> None:
    _customer(admin, biller_token, "C-1")
    first = _upload(admin, biller_token, _csv("O-1,C-1,one,10,,,,")).json()["jobId"]
    second = _upload(admin, biller_token, _csv("O-1,C-1,one,20,,,,")).json()["jobId"]

    assert _counts(_wait(admin, biller_token, first)) == {"CREATED": 1}
    assert _counts(_wait(admin, biller_token, second)) == {"UPDATED": 1}
    items = _items(admin, biller_token, second).json()["items"]
    assert _request(db, items[0]["paymentRequestId"]).total_amount == Decimal("20.00")


# --- the worker --------------------------------------------------------------------------------


def _workers() -> int:
    return sum(1 for t in threading.enumerate() if t.name.startswith(THREAD_PREFIX))


def test_the_worker_thread_stops_with_the_sandbox(tmp_path) -> None:
    before = _workers()
    with running_sandbox(f"sqlite:///{tmp_path / 'w.db'}"):
        assert _workers() == before + 1
    assert _workers() == before


def test_a_stopped_worker_leaves_the_job_processing_and_resumes_it(tmp_path) -> None:
    """Stopping between chunks leaves the job PROCESSING; the next run finishes it."""
    engine = make_engine(f"sqlite:///{tmp_path / 'r.db'}")
    init_schema(engine)
    sessions = make_session_factory(engine)
    with session_scope(sessions) as session:
        biller = billers.new_biller("Resume Ltd", {}, datetime.now(UTC))
        session.add(biller)
        session.flush()
        job_id = bulk_import.create_job(
            session,
            biller.id,
            content=b"externalId,customerExternalId,description,totalAmount\nA,X,d,1\n",
            file_name=None,
            collection_method="NONE",
            delete_missing=False,
        ).id
    worker = BulkImportWorker(sessions)
    stop = threading.Event()
    stop.set()
    with session_scope(sessions) as session:
        assert bulk_import.claim_next_job(session) == job_id
    bulk_import.process_job(sessions, job_id, stop)
    with session_scope(sessions) as session:
        assert session.get(BulkImportJob, job_id).status == "PROCESSING"

    assert worker.run_once() is True

    with session_scope(sessions) as session:
        finished = session.get(BulkImportJob, job_id)
        assert finished.status == "COMPLETED_WITH_ERRORS" and finished.content is None
        items = session.scalars(select(BulkImportItem).where(BulkImportItem.job_id == job_id))
        assert [item.status for item in items] == ["FAILED"]
    engine.dispose()
