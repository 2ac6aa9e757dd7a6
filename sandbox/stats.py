"""Counters of what the service saw, so tests can assert on it (``GET /_sandbox/stats``)."""

from __future__ import annotations

from collections import defaultdict
from typing import Any

from sqlalchemy import select
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from sandbox.models import Counter

TOKEN_GRANTS = "token_grants"
INVALID_GRANT = "invalid_grant"
REQUESTS = "requests"
BULK_IMPORT_JOBS = "bulk_import_jobs"

_JSON_NAMES = {
    TOKEN_GRANTS: "tokenGrants",
    INVALID_GRANT: "invalidGrant",
    REQUESTS: "requests",
    BULK_IMPORT_JOBS: "bulkImportJobs",
}


def increment(session: Session, owner: str, name: str, key: str = "", by: int = 1) -> None:
    """Add ``by`` to one counter with a single upsert (atomic under concurrent requests)."""
    dialect = session.get_bind().dialect.name
    insert = pg_insert if dialect == "postgresql" else sqlite_insert
    stmt = insert(Counter).values(owner=owner, name=name, key=key, count=by)
    stmt = stmt.on_conflict_do_update(
        index_elements=["owner", "name", "key"], set_={"count": Counter.count + by}
    )
    session.execute(stmt)


def snapshot(session: Session, owner: str | None = None) -> dict[str, Any]:
    """``{"billers": {id: {...}}, "apps": {clientId: {...}}, "anonymous": {...}}``.

    Per owner: ``tokenGrants`` and ``requests`` are maps (grant type, operationId → count);
    ``invalidGrant`` and ``bulkImportJobs`` are plain counts.
    """
    query = select(Counter)
    if owner is not None:
        query = query.where(Counter.owner == owner)
    result: dict[str, Any] = {"billers": {}, "apps": {}, "anonymous": {}}
    per_owner: dict[str, dict[str, Any]] = defaultdict(dict)
    for counter in session.scalars(query):
        family = _JSON_NAMES.get(counter.name, counter.name)
        if counter.name in (INVALID_GRANT, BULK_IMPORT_JOBS):
            per_owner[counter.owner][family] = (
                per_owner[counter.owner].get(family, 0) + counter.count
            )
        else:
            per_owner[counter.owner].setdefault(family, {})[counter.key] = counter.count
    for key, counters in per_owner.items():
        kind, _, ident = key.partition(":")
        if kind == "biller":
            result["billers"][ident] = counters
        elif kind == "app":
            result["apps"][ident] = counters
        else:
            result["anonymous"] = counters
    return result
