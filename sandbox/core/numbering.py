"""Human-readable numbers per biller (``INV-12``, ``PR-98``, ``SCH-3``), gap-free and race-free."""

from __future__ import annotations

from sqlalchemy import select, update
from sqlalchemy.dialects.postgresql import insert as pg_insert
from sqlalchemy.dialects.sqlite import insert as sqlite_insert
from sqlalchemy.orm import Session

from sandbox.models.billing import Sequence

PREFIXES = {"invoice": "INV-", "payment_request": "PR-", "schedule": "SCH-"}


def next_number(session: Session, biller_id: str, kind: str) -> str:
    """The next number of ``kind`` for the biller, e.g. ``PR-7``.

    The row is created if missing (an upsert that does nothing on conflict), then incremented
    with a single UPDATE, which takes the row lock on PostgreSQL and the write lock on SQLite.
    """
    insert = pg_insert if session.get_bind().dialect.name == "postgresql" else sqlite_insert
    session.execute(
        insert(Sequence)
        .values(biller_id=biller_id, kind=kind, last_value=0)
        .on_conflict_do_nothing(index_elements=["biller_id", "kind"])
    )
    session.execute(
        update(Sequence)
        .where(Sequence.biller_id == biller_id, Sequence.kind == kind)
        .values(last_value=Sequence.last_value + 1)
    )
    value = session.scalar(
        select(Sequence.last_value).where(Sequence.biller_id == biller_id, Sequence.kind == kind)
    )
    return f"{PREFIXES[kind]}{value}"
