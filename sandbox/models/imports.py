"""Tables of bulk payment-request imports: the jobs and their items.

A job keeps the uploaded file (``content``) until the worker finished it, so a sandbox stopped in
the middle of a job picks it up again on its next start (rows that already have an item are not
applied twice).
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

from sqlalchemy import ForeignKey, Index, LargeBinary, String, UniqueConstraint
from sqlalchemy.orm import Mapped, mapped_column

from sandbox.models.base import Base


class BulkImportJob(Base):
    """One upload of ``POST /payment_requests/bulk_import``.

    ``seq`` is the upload order within the biller (jobs of a biller run in that order);
    ``errors`` holds the file-level errors of a ``FAILED`` job.
    """

    __tablename__ = "bulk_import_jobs"
    __table_args__ = (UniqueConstraint("biller_id", "seq"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    biller_id: Mapped[str] = mapped_column(ForeignKey("billers.id", ondelete="CASCADE"), index=True)
    seq: Mapped[int]
    status: Mapped[str] = mapped_column(String(32), index=True)
    collection_method: Mapped[str] = mapped_column(String(16))
    delete_missing: Mapped[bool]
    file_name: Mapped[str | None] = mapped_column(String(255))
    content: Mapped[bytes | None] = mapped_column(LargeBinary)
    total_rows: Mapped[int | None]
    errors: Mapped[list[Any]]
    created_at: Mapped[datetime]
    updated_at: Mapped[datetime]
    completed_at: Mapped[datetime | None]


class BulkImportItem(Base):
    """The outcome of one data row, or of one payment request handled by
    ``deleteMissingPaymentRequests`` (``row_number`` null).

    ``ordinal`` orders the items: data rows by row number, then the deletion items.
    ``payment_request_id`` has no foreign key: a ``DELETED`` item names a request that is gone.
    """

    __tablename__ = "bulk_import_items"
    __table_args__ = (UniqueConstraint("job_id", "ordinal"),)
    id: Mapped[str] = mapped_column(String(36), primary_key=True)
    job_id: Mapped[str] = mapped_column(ForeignKey("bulk_import_jobs.id", ondelete="CASCADE"))
    ordinal: Mapped[int]
    row_number: Mapped[int | None]
    external_id: Mapped[str | None] = mapped_column(String(255))
    status: Mapped[str] = mapped_column(String(16))
    payment_request_id: Mapped[str | None] = mapped_column(String(36))
    errors: Mapped[list[Any]]


Index("ix_bulk_import_items__job_status", BulkImportItem.job_id, BulkImportItem.status)
