"""Items (per-row outcomes of bulk imports), files seen, and the audit trail."""

from __future__ import annotations

import re
from collections.abc import Sequence
from typing import Any

from sqlalchemy import Connection, RowMapping, select, update

from ledger._base import LedgerBase, upsert
from ledger._engine import check_json
from ledger._models import AuditRow, Base, FileRow, ItemRow, OperationRow
from ledger.errors import UnknownFile, UnknownOperation
from ledger.records import AuditEntry, FileRecord, FileState, ItemOutcome

ITEMS = Base.metadata.tables[ItemRow.__tablename__]
FILES = Base.metadata.tables[FileRow.__tablename__]
AUDIT = Base.metadata.tables[AuditRow.__tablename__]
OPS = Base.metadata.tables[OperationRow.__tablename__]
_SHA256 = re.compile(r"[0-9a-f]{64}")
_ITEM_UPDATES = (
    "external_id",
    "row_number",
    "status",
    "payment_request_id",
    "errors",
    "run_id",
    "recorded_at",
)
_FILE_UPDATES = (
    "name",
    "size",
    "folder",
    "run_id",
    "state",
    "report_path",
    "updated_at",
    "generation",
)


class RecordsMixin(LedgerBase):
    """The items, files and audit half of :class:`~ledger.Ledger`."""

    def record_items(self, operation_key: str, items: Sequence[ItemOutcome]) -> None:
        """Record per-row outcomes, replacing earlier ones of the same row (same externalId).

        A chunk sent again after an unknown outcome reports its rows again; the newer outcome
        replaces the older, so the ledger never holds two outcomes of one row of one operation.
        """
        now = self._now()
        rows: dict[str, dict[str, Any]] = {}
        for index, item in enumerate(items):
            if item.operation_key != operation_key:
                raise ValueError(
                    f"item {index} (externalId {item.external_id!r}) belongs to operation "
                    f"{item.operation_key!r}, not {operation_key!r}"
                )
            item_key = item.external_id or f"#{item.row_number if item.row_number else index}"
            rows[item_key] = {
                "operation_key": operation_key,
                "item_key": item_key,
                "external_id": item.external_id,
                "row_number": item.row_number,
                "status": item.status,
                "payment_request_id": item.payment_request_id,
                "errors": list(item.errors),
                "run_id": item.run_id,
                "recorded_at": now,
            }
        with self._begin() as connection:
            _require_operation(connection, operation_key)
            upsert(
                connection, ITEMS, list(rows.values()), ["operation_key", "item_key"], _ITEM_UPDATES
            )

    def items(self, operation_key: str) -> list[ItemOutcome]:
        """The per-row outcomes of one operation, in input-row order."""
        stmt = select(ITEMS).where(ITEMS.c.operation_key == operation_key)
        return self._items(stmt.order_by(ITEMS.c.row_number, ITEMS.c.id))

    def items_for_run(self, run_id: str) -> list[ItemOutcome]:
        """The per-row outcomes a run recorded (what ``billops undo-import RUN`` looks at)."""
        stmt = select(ITEMS).where(ITEMS.c.run_id == run_id)
        return self._items(stmt.order_by(ITEMS.c.operation_key, ITEMS.c.row_number, ITEMS.c.id))

    def _items(self, stmt: Any) -> list[ItemOutcome]:
        with self._begin() as connection:
            return [_item(row) for row in connection.execute(stmt).mappings()]

    def file_seen(self, sha256: str, *, biller: str, kind: str) -> FileRecord | None:
        """The file with this content, if it was seen before for this biller and kind."""
        _check_sha256(sha256)
        with self._begin() as connection:
            return _fetch_file(connection, sha256, biller, kind)

    def files(
        self, *, biller: str | None = None, states: Sequence[FileState] | None = None
    ) -> list[FileRecord]:
        """Files seen (of one biller, in these states), most recently changed first."""
        stmt = select(FILES).order_by(FILES.c.updated_at.desc(), FILES.c.id.desc())
        if biller is not None:
            stmt = stmt.where(FILES.c.biller == biller)
        if states is not None:
            stmt = stmt.where(FILES.c.state.in_([FileState(s).value for s in states]))
        with self._begin() as connection:
            rows = connection.execute(stmt).mappings().all()
        return [_file_record(row) for row in rows]

    def record_file(
        self,
        *,
        sha256: str,
        name: str,
        size: int,
        folder: str,
        biller: str,
        kind: str,
        run_id: str | None,
        state: FileState,
        report_path: str | None = None,
        generation: int = 0,
    ) -> FileRecord:
        """Record a file seen (or, seen before, what this run made of it; first-seen date kept)."""
        _check_sha256(sha256)
        if not isinstance(size, int) or size < 0:
            raise ValueError(f"file {name!r}: size must be a whole number of bytes, got {size!r}")
        now = self._now()
        row = {
            "sha256": sha256,
            "biller": biller,
            "kind": kind,
            "name": name,
            "size": size,
            "folder": folder,
            "run_id": run_id,
            "state": FileState(state).value,
            "report_path": report_path,
            "created_at": now,
            "updated_at": now,
            "generation": generation,
        }
        with self._begin() as connection:
            upsert(connection, FILES, [row], ["sha256", "biller", "kind"], _FILE_UPDATES)
            found = _fetch_file(connection, sha256, biller, kind)
        assert found is not None, "the row was just written"
        return found

    def update_file(
        self,
        sha256: str,
        *,
        biller: str,
        kind: str,
        state: FileState,
        report_path: str | None = None,
        run_id: str | None = None,
        generation: int | None = None,
    ) -> FileRecord:
        """Change a recorded file's state (and report path, run or generation, when given)."""
        _check_sha256(sha256)
        values: dict[str, Any] = {"state": FileState(state).value, "updated_at": self._now()}
        if report_path is not None:
            values["report_path"] = report_path
        if run_id is not None:
            values["run_id"] = run_id
        if generation is not None:
            values["generation"] = generation
        where = (FILES.c.sha256 == sha256, FILES.c.biller == biller, FILES.c.kind == kind)
        with self._begin() as connection:
            connection.execute(update(FILES).where(*where).values(**values))
            found = _fetch_file(connection, sha256, biller, kind)
        if found is None:
            raise UnknownFile(
                f"no {kind} file with SHA-256 {sha256} recorded for biller {biller!r} "
                "(record_file first)"
            )
        return found

    def audit(
        self,
        *,
        actor: str,
        action: str,
        subject: str,
        reason: str | None = None,
        approver: str | None = None,
        comment: str | None = None,
        run_id: str | None = None,
        details: dict[str, Any] | None = None,
    ) -> AuditEntry:
        """Write down who or what (``actor``) did what (``action``) to what (``subject``), why."""
        for field_name, value in (("actor", actor), ("action", action), ("subject", subject)):
            if not isinstance(value, str) or not value.strip():
                raise ValueError(f"audit {field_name} must be a non-empty string, got {value!r}")
        check_json("audit details", details)
        row = {
            "at": self._now(),
            "actor": actor,
            "action": action,
            "subject": subject,
            "reason": reason,
            "approver": approver,
            "comment": comment,
            "run_id": run_id,
            "details": details,
        }
        with self._begin() as connection:
            inserted = connection.execute(AUDIT.insert().values(**row)).inserted_primary_key
            assert inserted is not None, "an insert always has a primary key"
            stmt = select(AUDIT).where(AUDIT.c.id == inserted[0])
            return _audit_entry(connection.execute(stmt).mappings().one())

    def audit_entries(
        self, *, subject: str | None = None, run_id: str | None = None
    ) -> list[AuditEntry]:
        """Audit entries about ``subject`` and/or of ``run_id``, oldest first."""
        stmt = select(AUDIT).order_by(AUDIT.c.id)
        if subject is not None:
            stmt = stmt.where(AUDIT.c.subject == subject)
        if run_id is not None:
            stmt = stmt.where(AUDIT.c.run_id == run_id)
        with self._begin() as connection:
            return [_audit_entry(row) for row in connection.execute(stmt).mappings()]


def _require_operation(connection: Connection, key: str) -> None:
    if connection.execute(select(OPS.c.id).where(OPS.c.key == key)).first() is None:
        raise UnknownOperation(f"no operation {key!r} in the ledger: items need their operation")


def _fetch_file(connection: Connection, sha256: str, biller: str, kind: str) -> FileRecord | None:
    stmt = select(FILES).where(
        FILES.c.sha256 == sha256, FILES.c.biller == biller, FILES.c.kind == kind
    )
    row = connection.execute(stmt).mappings().one_or_none()
    return None if row is None else _file_record(row)


def _file_record(row: RowMapping) -> FileRecord:
    fields = {k: v for k, v in row.items() if k != "id"}
    fields["state"] = FileState(fields["state"])
    return FileRecord(**fields)


def _item(row: RowMapping) -> ItemOutcome:
    return ItemOutcome(
        operation_key=row["operation_key"],
        external_id=row["external_id"],
        row_number=row["row_number"],
        status=row["status"],
        payment_request_id=row["payment_request_id"],
        errors=list(row["errors"] or []),
        run_id=row["run_id"],
    )


def _audit_entry(row: RowMapping) -> AuditEntry:
    return AuditEntry(
        id=int(row["id"]),
        at=row["at"],
        actor=row["actor"],
        action=row["action"],
        subject=row["subject"],
        reason=row["reason"],
        approver=row["approver"],
        comment=row["comment"],
        run_id=row["run_id"],
        details=row["details"],
    )


def _check_sha256(sha256: str) -> None:
    if not isinstance(sha256, str) or not _SHA256.fullmatch(sha256):
        raise ValueError(f"a file's sha256 must be 64 lowercase hex digits, got {sha256!r}")
