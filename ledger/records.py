"""What the ledger hands out: frozen dataclasses, never ORM rows."""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from enum import StrEnum
from typing import Any


class OperationState(StrEnum):
    """Where one write to the service stands (``docs/conventions.md`` §6 Writes).

    ``intended``: recorded, not sent. ``sent``: a worker has claimed it and sent (or is sending)
    it; ``remote_id`` is set once the service's answer named the job or resource. ``confirmed`` and
    ``failed`` are final. ``unknown``: sent, but the answer never arrived (timeout, dropped
    connection): ask the service before sending again.
    """

    INTENDED = "intended"
    SENT = "sent"
    CONFIRMED = "confirmed"
    FAILED = "failed"
    UNKNOWN = "unknown"

    @property
    def settled(self) -> bool:
        """True for the final states."""
        return self in (OperationState.CONFIRMED, OperationState.FAILED)


UNSETTLED_STATES = (OperationState.INTENDED, OperationState.SENT, OperationState.UNKNOWN)


class FileState(StrEnum):
    """What became of an input file: being imported, imported (whole or the good rows), or
    rejected (nothing of it was sent)."""

    IMPORTING = "importing"
    IMPORTED = "imported"
    REJECTED = "rejected"


@dataclass(frozen=True)
class Operation:
    """One intended write to the service, as the ledger last recorded it."""

    key: str
    kind: str
    biller: str
    request_digest: str
    state: OperationState
    remote_id: str | None
    run_id: str | None
    payload: dict[str, Any] | None
    result: dict[str, Any] | None
    error: str | None
    attempts: int
    created_at: datetime
    updated_at: datetime
    sent_at: datetime | None
    settled_at: datetime | None
    claimed_by: str | None = None
    claimed_at: datetime | None = None

    @property
    def in_flight(self) -> bool:
        """Claimed by a worker that has not yet reported what the service answered."""
        return self.state == OperationState.SENT and self.remote_id is None


@dataclass(frozen=True)
class IntentResult:
    """What :meth:`Ledger.record_intent` found: the row, and whether this call created it."""

    operation: Operation
    created: bool


@dataclass(frozen=True)
class ItemOutcome:
    """The outcome of one row of a bulk import (CREATED, UPDATED, UNCHANGED, FAILED, ...)."""

    operation_key: str
    external_id: str
    row_number: int | None
    status: str
    payment_request_id: str | None = None
    errors: list[str] = field(default_factory=list)
    run_id: str | None = None


@dataclass(frozen=True)
class FileRecord:
    """An input file the ledger has seen (by content), and what became of it.

    ``created_at`` is when it was first recorded; ``run_id`` the run that last processed it;
    ``generation`` counts the times it was imported again on purpose.
    """

    sha256: str
    name: str
    size: int
    folder: str
    biller: str
    kind: str
    run_id: str | None
    state: FileState
    report_path: str | None
    created_at: datetime
    updated_at: datetime
    generation: int = 0


@dataclass(frozen=True)
class AuditEntry:
    """One audit record: who (``actor``) did what (``action``) to what (``subject``), and why."""

    id: int
    at: datetime
    actor: str
    action: str
    subject: str
    reason: str | None
    approver: str | None
    comment: str | None
    run_id: str | None
    details: dict[str, Any] | None


@dataclass(frozen=True)
class Resolution:
    """What the service says about an unsettled operation (the answer of a resolver).

    - ``confirmed`` (with ``remote_id``/``result``) or ``failed`` (with ``error``): final;
    - ``sent`` with ``remote_id``: the service has it and is still working on it;
    - ``intended``: the service never received it, so it may be sent again;
    - ``unknown`` (with ``error``): still cannot tell; left for a later resolve.
    """

    state: OperationState
    remote_id: str | None = None
    result: dict[str, Any] | None = None
    error: str | None = None
    note: str = ""
