"""The delinquency half of :class:`~ledger.Ledger`: snapshots, observed failures, standings, and
the job's operations by customer (tables in ``ledger/_delinquency_models.py``)."""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from datetime import date
from typing import Any

from sqlalchemy import Connection, delete, func, insert, select

from ledger._base import LedgerBase, insert_or_ignore, upsert
from ledger._delinquency_models import (
    DelinquencyCustomerRow,
    DelinquencyFailureRow,
    DelinquencyItemRow,
    DelinquencySnapshotRow,
    DelinquencyStandingRow,
)
from ledger._engine import check_json
from ledger._models import Base, OperationRow
from ledger._operations import _operation
from ledger.delinquency import Failure, Rows, SnapshotHeader, Standing, operation_prefix
from ledger.records import Operation

SNAPSHOTS = Base.metadata.tables[DelinquencySnapshotRow.__tablename__]
CUSTOMERS = Base.metadata.tables[DelinquencyCustomerRow.__tablename__]
ITEMS = Base.metadata.tables[DelinquencyItemRow.__tablename__]
FAILURES = Base.metadata.tables[DelinquencyFailureRow.__tablename__]
STANDINGS = Base.metadata.tables[DelinquencyStandingRow.__tablename__]
OPS = Base.metadata.tables[OperationRow.__tablename__]
CUSTOMER_FIELDS = tuple(c.name for c in CUSTOMERS.columns if c.name != "snapshot_id")
ITEM_FIELDS = tuple(c.name for c in ITEMS.columns if c.name != "snapshot_id")
_STANDING_UPDATES = tuple(
    c.name for c in STANDINGS.columns if c.name not in ("biller", "customer_id")
)
KEEP_SNAPSHOTS = 7  # per biller: enough to compare runs and to look back a week
_BATCH = 5000  # rows per INSERT executemany (bounded memory on either database)
_PREFIXES_PER_QUERY = 5000  # customers per SELECT (well under either database's parameter limit)


class DelinquencyMixin(LedgerBase):
    """Snapshots, observed failures, standings (see the module docstring)."""

    def save_delinquency_snapshot(
        self,
        *,
        biller: str,
        run_id: str,
        as_of: date,
        policy_name: str,
        policy_digest: str,
        customers: Sequence[Mapping[str, Any]],
        items: Sequence[Mapping[str, Any]],
        failures: Sequence[Mapping[str, Any]] = (),
        keep: int = KEEP_SNAPSHOTS,
    ) -> SnapshotHeader:
        """Store what a run saw, in one transaction, replacing the same run's earlier attempt;
        keep the newest ``keep`` snapshots of the biller. Failures are kept (once per payment
        request and run) however old the snapshots they came from."""
        if keep < 2:
            raise ValueError("keep at least 2 snapshots: failures are seen between two of them")
        now = self._now()
        with self._begin() as connection:
            again = select(SNAPSHOTS.c.id).where(
                SNAPSHOTS.c.biller == biller, SNAPSHOTS.c.run_id == run_id
            )
            _delete_snapshots(connection, [int(i) for i in connection.execute(again).scalars()])
            header = {
                "biller": biller,
                "run_id": run_id,
                "as_of": as_of,
                "taken_at": now,
                "policy_name": policy_name,
                "policy_digest": policy_digest,
                "customers": len(customers),
                "items": len(items),
            }
            inserted = connection.execute(insert(SNAPSHOTS).values(**header)).inserted_primary_key
            assert inserted is not None, "an insert always has a primary key"
            snapshot_id = int(inserted[0])
            _insert_all(connection, CUSTOMERS, snapshot_id, customers, CUSTOMER_FIELDS)
            _insert_all(connection, ITEMS, snapshot_id, items, ITEM_FIELDS)
            for failure in failures:
                row = {
                    "biller": biller,
                    "customer_id": failure["customer_id"],
                    "payment_request_id": failure["payment_request_id"],
                    "observed_on": failure["observed_on"],
                    "evidence": failure["evidence"],
                    "run_id": run_id,
                    "recorded_at": now,
                }
                insert_or_ignore(
                    connection, FAILURES, row, ["biller", "payment_request_id", "run_id"]
                )
            _prune(connection, biller, keep)
            return SnapshotHeader(id=snapshot_id, **header)  # type: ignore[arg-type]

    def delinquency_snapshot(
        self, biller: str, *, run_id: str | None = None, before_run: str | None = None
    ) -> SnapshotHeader | None:
        """The biller's snapshot of ``run_id``; or its newest one (taken before ``before_run``'s,
        when given: the previous look, to compare with)."""
        stmt = select(SNAPSHOTS).where(SNAPSHOTS.c.biller == biller)
        if run_id is not None:
            stmt = stmt.where(SNAPSHOTS.c.run_id == run_id)
        if before_run is not None:
            mine = select(SNAPSHOTS.c.id).where(
                SNAPSHOTS.c.biller == biller, SNAPSHOTS.c.run_id == before_run
            )
            stmt = stmt.where(SNAPSHOTS.c.id < func.coalesce(mine.scalar_subquery(), 2**62))
        with self._begin() as connection:
            row = connection.execute(stmt.order_by(SNAPSHOTS.c.id.desc()).limit(1)).mappings()
            found = row.first()
        return None if found is None else SnapshotHeader(**dict(found))

    def delinquency_snapshot_rows(self, snapshot_id: int) -> tuple[Rows, Rows]:
        """A snapshot's customers and items, in bulk."""
        with self._begin() as connection:
            customers = connection.execute(
                select(*(CUSTOMERS.c[name] for name in CUSTOMER_FIELDS)).where(
                    CUSTOMERS.c.snapshot_id == snapshot_id
                )
            ).all()
            items = connection.execute(
                select(*(ITEMS.c[name] for name in ITEM_FIELDS)).where(
                    ITEMS.c.snapshot_id == snapshot_id
                )
            ).all()
        return (
            Rows(CUSTOMER_FIELDS, [tuple(r) for r in customers]),
            Rows(ITEM_FIELDS, [tuple(r) for r in items]),
        )

    def delinquency_request_statuses(self, snapshot_id: int) -> dict[str, tuple[str, str]]:
        """Payment request id → (status, status reason), as a snapshot saw them."""
        stmt = select(ITEMS.c.item_id, ITEMS.c.status, ITEMS.c.reason_code).where(
            ITEMS.c.snapshot_id == snapshot_id, ITEMS.c.kind == "payment_request"
        )
        with self._begin() as connection:
            return {str(i): (str(s), str(r)) for i, s, r in connection.execute(stmt)}

    def delinquency_failures(self, biller: str, *, since: date | None = None) -> list[Failure]:
        """Failed collections observed for the biller (on or after ``since``), oldest first."""
        stmt = select(FAILURES).where(FAILURES.c.biller == biller)
        if since is not None:
            stmt = stmt.where(FAILURES.c.observed_on >= since)
        with self._begin() as connection:
            rows = connection.execute(stmt.order_by(FAILURES.c.observed_on, FAILURES.c.id))
            return [
                Failure(
                    customer_id=r["customer_id"],
                    payment_request_id=r["payment_request_id"],
                    observed_on=r["observed_on"],
                    evidence=r["evidence"],
                    run_id=r["run_id"],
                )
                for r in rows.mappings()
            ]

    def delinquency_standings(self, biller: str) -> list[Standing]:
        """Every customer of the biller that is or was in a state, by customer id."""
        stmt = select(STANDINGS).where(STANDINGS.c.biller == biller)
        with self._begin() as connection:
            rows = connection.execute(stmt.order_by(STANDINGS.c.customer_id)).mappings()
            return [Standing(**dict(row)) for row in rows]

    def save_delinquency_standings(self, biller: str, standings: Iterable[Standing]) -> int:
        """Record customers' new standings (one transaction); returns how many were written."""
        now = self._now()
        rows = []
        for s in standings:
            if s.biller != biller:
                raise ValueError(f"standing of {s.customer_id!r} is for biller {s.biller!r}")
            check_json(f"standing of customer {s.customer_id!r}", [s.left_on, s.reasons])
            row = {c.name: getattr(s, c.name) for c in STANDINGS.columns}
            rows.append({**row, "updated_at": now})
        with self._begin() as connection:
            for start in range(0, len(rows), _BATCH):
                upsert(
                    connection,
                    STANDINGS,
                    rows[start : start + _BATCH],
                    ["biller", "customer_id"],
                    _STANDING_UPDATES,
                )
        return len(rows)

    def delinquency_operations(self, biller: str, customer_ids: Iterable[str]) -> list[Operation]:
        """Every delinquency operation of these customers (any period, any state), by key.

        Keys start with the customer's prefix (:func:`~ledger.delinquency.operation_prefix`);
        prefixes of one length are matched with one ``substr(key, 1, n) IN (...)`` (exact and
        case-sensitive on both databases, unlike ``LIKE``, and one pass over the biller's rows).
        """
        by_length: dict[int, list[str]] = {}
        for customer in set(customer_ids):
            prefix = operation_prefix(biller, customer)
            by_length.setdefault(len(prefix), []).append(prefix)
        found: list[Operation] = []
        with self._begin() as connection:
            for length, prefixes in sorted(by_length.items()):
                for start in range(0, len(prefixes), _PREFIXES_PER_QUERY):
                    chunk = prefixes[start : start + _PREFIXES_PER_QUERY]
                    stmt = select(OPS).where(
                        OPS.c.biller == biller, func.substr(OPS.c.key, 1, length).in_(chunk)
                    )
                    found.extend(_operation(row) for row in connection.execute(stmt).mappings())
        return sorted(found, key=lambda op: op.key)


def _insert_all(
    connection: Connection,
    table: Any,
    snapshot_id: int,
    rows: Sequence[Mapping[str, Any]],
    fields: Sequence[str],
) -> None:
    for start in range(0, len(rows), _BATCH):
        batch = [
            {"snapshot_id": snapshot_id, **{name: row[name] for name in fields}}
            for row in rows[start : start + _BATCH]
        ]
        if batch:
            connection.execute(insert(table), batch)


def _prune(connection: Connection, biller: str, keep: int) -> None:
    newest = (
        select(SNAPSHOTS.c.id)
        .where(SNAPSHOTS.c.biller == biller)
        .order_by(SNAPSHOTS.c.id.desc())
        .limit(keep)
    )
    old = [
        int(i)
        for i in connection.execute(
            select(SNAPSHOTS.c.id).where(
                SNAPSHOTS.c.biller == biller, SNAPSHOTS.c.id.not_in(newest.scalar_subquery())
            )
        ).scalars()
    ]
    _delete_snapshots(connection, old)


def _delete_snapshots(connection: Connection, ids: list[int]) -> None:
    if ids:
        # Children first: the delete does not depend on the database enforcing the cascade.
        connection.execute(delete(CUSTOMERS).where(CUSTOMERS.c.snapshot_id.in_(ids)))
        connection.execute(delete(ITEMS).where(ITEMS.c.snapshot_id.in_(ids)))
        connection.execute(delete(SNAPSHOTS).where(SNAPSHOTS.c.id.in_(ids)))
