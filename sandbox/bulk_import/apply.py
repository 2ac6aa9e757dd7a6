"""Applying a bulk import job's rows to the biller's payment requests (the worker's part).

A good row creates the payment request its ``externalId`` names, or updates the one an earlier
import created (``UNCHANGED`` when nothing differs); a bad row fails alone with its errors. Each
row is applied in a savepoint, so a row that fails in the database fails alone too. With
``deleteMissingPaymentRequests`` the requests earlier imports created and the file no longer lists
are deleted, except those submitted or (partly) paid.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from sqlalchemy import select
from sqlalchemy.exc import SQLAlchemyError
from sqlalchemy.orm import Session

from sandbox.bulk_import.csv_rows import Row, RowData, check_row, error
from sandbox.core import ids, state
from sandbox.core.errors import INTERNAL_ERROR, INVALID_STATE, NOT_FOUND, VALIDATION_ERROR
from sandbox.core.numbering import next_number
from sandbox.models.billing import Customer, PaymentRequest
from sandbox.models.imports import BulkImportItem, BulkImportJob
from sandbox.webhooks import events

# Payment requests an import can no longer edit, and those deleteMissing keeps [I].
NOT_EDITABLE = frozenset({"SUBMITTED", "PAID", "SETTLED", "VOID"})
NOT_DELETABLE = frozenset({"SUBMITTED", "PAID", "SETTLED"})
IMPORTED_STATUS = "DRAFT"  # not distributed: collectionMethod NONE means the service sends nothing
SOURCE = "BULK_IMPORT"

CustomerLookup = tuple[Customer | None, dict[str, str] | None]
CustomerCache = dict[tuple[str | None, str | None], CustomerLookup]


def _new_item(job: BulkImportJob, ordinal: int, row_number: int | None) -> BulkImportItem:
    return BulkImportItem(
        id=ids.new_uuid(),
        job_id=job.id,
        ordinal=ordinal,
        row_number=row_number,
        external_id=None,
        status="PENDING",
        payment_request_id=None,
        errors=[],
    )


def apply_row(
    session: Session,
    job: BulkImportJob,
    row: Row,
    duplicates: set[str],
    customers: CustomerCache,
) -> None:
    item = _new_item(job, row.number, row.number)
    item.external_id = row.external_id[:255] if row.external_id else None
    data, errors = check_row(row)
    if row.external_id in duplicates:
        data = None
        errors.append(
            error(
                VALIDATION_ERROR, "this externalId appears more than once in the file", "externalId"
            )
        )
    if data is None:
        item.status, item.errors = "FAILED", errors
    else:
        try:
            with session.begin_nested():
                item.status, item.payment_request_id, item.errors = _upsert(
                    session, job, data, customers
                )
        except SQLAlchemyError as exc:  # e.g. an API create took the externalId meanwhile
            item.status = "FAILED"
            item.errors = [
                error(INTERNAL_ERROR, f"the row could not be stored: {type(exc).__name__}")
            ]
    session.add(item)


def _cached_customer(
    session: Session, biller_id: str, data: RowData, cache: CustomerCache
) -> CustomerLookup:
    key = (data.customer_id, data.customer_external_id)
    if key not in cache:
        cache[key] = _customer(session, biller_id, data)
    return cache[key]


def _customer(session: Session, biller_id: str, data: RowData) -> CustomerLookup:
    if data.customer_id is not None:
        customer = session.get(Customer, data.customer_id)
        if customer is None or customer.biller_id != biller_id:
            return None, error(NOT_FOUND, "no customer has this id", "customerId")
        if data.customer_external_id not in (None, customer.external_id):
            detail = "customerExternalId is not the externalId of the customer customerId names"
            return None, error(VALIDATION_ERROR, detail, "customerExternalId")
        return customer, None
    matches = session.scalars(
        select(Customer)
        .where(Customer.biller_id == biller_id, Customer.external_id == data.customer_external_id)
        .limit(2)
    ).all()
    if not matches:
        return None, error(NOT_FOUND, "no customer has this externalId", "customerExternalId")
    if len(matches) > 1:
        detail = "several customers have this externalId; use customerId"
        return None, error(VALIDATION_ERROR, detail, "customerExternalId")
    return matches[0], None


def _fields(customer: Customer, data: RowData) -> dict[str, Any]:
    """The payment request's columns a row sets."""
    return {
        "customer_id": customer.id,
        "description": data.description,
        "total_amount": data.total_amount,
        "currency_code": data.currency_code,
        "tax_rate": data.tax_rate,
        "reference": data.reference,
        "pay_by_date": data.pay_by_date,
    }


def _upsert(
    session: Session, job: BulkImportJob, data: RowData, customers: CustomerCache
) -> tuple[str, str | None, list[dict[str, str]]]:
    """Create or update the payment request of one good row: (item status, its id, errors)."""
    customer, problem = _cached_customer(session, job.biller_id, data, customers)
    if customer is None:
        return "FAILED", None, [problem] if problem else []
    existing = session.scalars(
        select(PaymentRequest).where(
            PaymentRequest.biller_id == job.biller_id,
            PaymentRequest.external_id == data.external_id,
        )
    ).first()
    fields = _fields(customer, data)
    now = state.now(session)
    if existing is None:
        request = PaymentRequest(
            id=ids.new_uuid(),
            biller_id=job.biller_id,
            invoice_id=None,
            payment_request_no=next_number(session, job.biller_id, "payment_request"),
            external_id=data.external_id,
            import_job_id=job.id,
            status=IMPORTED_STATUS,
            association_type="SINGLE",
            paid_amount=Decimal("0.00"),
            distribution={"collectionMethod": job.collection_method},
            collection_override={},
            document={"source": SOURCE},
            created_at=now,
            updated_at=now,
            **fields,
        )
        session.add(request)
        session.flush()
        events.payment_request_event(session, request, "PAYMENT_REQUEST_CREATED")
        return "CREATED", request.id, []
    if existing.import_job_id is None:
        detail = "a payment request not created by a bulk import already has this externalId"
        return "FAILED", existing.id, [error(VALIDATION_ERROR, detail, "externalId")]
    if existing.status in NOT_EDITABLE:
        detail = f"the payment request is {existing.status} and can no longer be edited"
        return "FAILED", existing.id, [error(INVALID_STATE, detail)]
    changed = {name: value for name, value in fields.items() if getattr(existing, name) != value}
    if not changed:
        return "UNCHANGED", existing.id, []
    for name, value in changed.items():
        setattr(existing, name, value)
    existing.import_job_id = job.id
    existing.updated_at = now
    session.flush()
    events.payment_request_event(session, existing, "PAYMENT_REQUEST_UPDATED")
    return "UPDATED", existing.id, []


def delete_missing(session: Session, job: BulkImportJob, listed: set[str]) -> None:
    """Full sync: delete what earlier imports created and the file no longer lists, except what
    is submitted or (partly) paid, which is kept as a ``NOT_DELETED`` item."""
    handled = set(
        session.scalars(
            select(BulkImportItem.payment_request_id).where(
                BulkImportItem.job_id == job.id, BulkImportItem.row_number.is_(None)
            )
        )
    )
    ordinal = (job.total_rows or 0) + len(handled)
    candidates = session.scalars(
        select(PaymentRequest)
        .where(
            PaymentRequest.biller_id == job.biller_id,
            PaymentRequest.import_job_id.is_not(None),
            PaymentRequest.external_id.is_not(None),
        )
        .order_by(PaymentRequest.created_at, PaymentRequest.id)
    ).all()
    for request in candidates:
        if request.external_id in listed or request.id in handled:
            continue
        ordinal += 1
        item = _new_item(job, ordinal, None)
        item.external_id, item.payment_request_id = request.external_id, request.id
        item.status, item.errors = _delete_one(session, request)
        session.add(item)


def _delete_one(session: Session, request: PaymentRequest) -> tuple[str, list[dict[str, str]]]:
    if request.status in NOT_DELETABLE or request.paid_amount > 0:
        detail = f"the payment request is {request.status} (paid {request.paid_amount}); kept"
        return "NOT_DELETED", [error(INVALID_STATE, detail)]
    try:
        with session.begin_nested():  # the event goes with the delete, or neither happens
            events.payment_request_event(session, request, "PAYMENT_REQUEST_DELETED")
            session.delete(request)
            session.flush()
    except SQLAlchemyError as exc:  # something else still refers to it
        return "NOT_DELETED", [error(INVALID_STATE, f"it cannot be deleted: {type(exc).__name__}")]
    return "DELETED", []
