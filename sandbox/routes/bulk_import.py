"""``/payment_requests/bulk_import``: upload a CSV as a job, read the job and its items.

The upload only stores the file and answers 202; :mod:`sandbox.bulk_import.worker` processes it.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass
from typing import Annotated, Any

from fastapi import APIRouter, Depends, Path, Query, Request, Response
from starlette.datastructures import UploadFile

from sandbox.bulk_import import jobs as bulk_import
from sandbox.bulk_import.csv_rows import MAX_FILE_BYTES
from sandbox.core.deps import BillerId, SessionDep
from sandbox.core.errors import BAD_REQUEST, ApiError
from sandbox.core.pagination import PageDep, paginate
from sandbox.core.validation import QueryBool, enum_filter

router = APIRouter(tags=["payment_requests"])


@dataclass(frozen=True)
class Upload:
    content: bytes
    file_name: str | None


def _missing_file() -> ApiError:
    return ApiError(
        400,
        BAD_REQUEST,
        "send the CSV as multipart/form-data in a part named inputFile",
        field="inputFile",
    )


async def read_upload(request: Request) -> Upload:
    """The ``inputFile`` part (a file, or a plain field holding the CSV text); 400 otherwise."""
    if not request.headers.get("content-type", "").lower().startswith("multipart/form-data"):
        raise _missing_file()
    form = await request.form(max_files=10, max_fields=100, max_part_size=MAX_FILE_BYTES + 1)
    try:
        part = form.get("inputFile")
        if isinstance(part, UploadFile):
            content, name = await part.read(MAX_FILE_BYTES + 1), part.filename
        elif isinstance(part, str):
            content, name = part.encode("utf-8"), None
        else:
            raise _missing_file()
    finally:
        await form.close()
    if len(content) > MAX_FILE_BYTES:
        raise ApiError(400, BAD_REQUEST, "the file is larger than 5 MiB", field="inputFile")
    return Upload(content, name)


@router.post(
    "/payment_requests/bulk_import",
    operation_id="payment_requests.bulk_import",
    status_code=202,
    summary="Start a bulk import job",
)
def start_bulk_import(
    # The file is read first: reading it after authentication would hold the database
    # transaction (on SQLite, the write lock) open while the upload streams in.
    upload: Annotated[Upload, Depends(read_upload)],
    biller_id: BillerId,
    session: SessionDep,
    response: Response,
    collection_method: Annotated[str, Query(alias="collectionMethod")],
    delete_missing: Annotated[QueryBool, Query(alias="deleteMissingPaymentRequests")],
) -> dict[str, Any]:
    """202 with the ``PENDING`` job and ``Location``; the worker processes the file later."""
    job = bulk_import.create_job(
        session,
        biller_id,
        content=upload.content,
        file_name=upload.file_name,
        collection_method=bulk_import.check_collection_method(collection_method),
        delete_missing=delete_missing,
    )
    response.headers["Location"] = f"/api/payment_requests/bulk_import/{job.id}"
    return bulk_import.public_job(session, job)


JobIdPath = Annotated[uuid.UUID, Path(alias="jobId")]


@router.get(
    "/payment_requests/bulk_import/{jobId}",
    operation_id="payment_requests.retrieve_bulk_import",
    summary="Import job details",
)
def retrieve_bulk_import(
    biller_id: BillerId, session: SessionDep, job_id: JobIdPath
) -> dict[str, Any]:
    job = bulk_import.get_job(session, biller_id, str(job_id))
    return bulk_import.public_job(session, job)


@router.get(
    "/payment_requests/bulk_import/{jobId}/items",
    operation_id="payment_requests.list_bulk_import_items",
    summary="Import job items",
)
def list_bulk_import_items(
    biller_id: BillerId,
    session: SessionDep,
    job_id: JobIdPath,
    page: PageDep,
    statuses: Annotated[list[str] | None, Query()] = None,
) -> dict[str, Any]:
    """A page of items, by row number (the deleteMissing items, without one, last)."""
    wanted = enum_filter(statuses, bulk_import.ITEM_STATUSES, "statuses")
    job = bulk_import.get_job(session, biller_id, str(job_id))
    listing = bulk_import.items(job, wanted)
    return paginate(session, listing, page, key="items", render=bulk_import.public_item)
