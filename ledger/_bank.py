"""The bank-payments job's state: the statement lines it set out to record (by stable key), and
what was owed per run.

A line is remembered when an applied run decides to record its payments, before anything is
sent, with the payments it planned (``allocations``: kind, id, number, pennies of each): a rerun
after a crash resumes the same payments instead of matching the line afresh. It is ``done`` once
every one of those payments is settled at the service (recorded, or refused for good), so a file
dropped again finds it done and records nothing new. Open items are kept as a snapshot per run,
so a report can always say what billops believed was owed when it matched.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Boolean,
    Date,
    Index,
    Integer,
    String,
    UniqueConstraint,
    select,
    update,
)
from sqlalchemy.orm import Mapped, mapped_column

from ledger._base import LedgerBase, insert_or_ignore, upsert
from ledger._models import Base
from ledger._types import UTCDateTime
from ledger.bank import BankLine, OpenItemSnapshot, OpenItemsTaken, PlannedPayment

BATCH = 500


class BankLineRow(Base):
    """One statement line a run set out to record, for a biller, by its stable key."""

    __tablename__ = "ledger_bank_lines"
    __table_args__ = (
        UniqueConstraint("biller", "line_key", name="uq_ledger_bank_lines_biller_line_key"),
        Index("ix_ledger_bank_lines_biller_booked_on", "biller", "booked_on"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    line_key: Mapped[str] = mapped_column(String(300))
    file_sha256: Mapped[str] = mapped_column(String(64))
    line: Mapped[int] = mapped_column(Integer)
    booked_on: Mapped[date] = mapped_column(Date)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    klass: Mapped[str] = mapped_column(String(40))
    outcome: Mapped[str] = mapped_column(String(40))
    allocations: Mapped[list[dict[str, Any]]] = mapped_column(JSON)
    run_id: Mapped[str | None] = mapped_column(String(200))
    done: Mapped[bool] = mapped_column(Boolean)
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime)


class BankOpenItemRow(Base):
    """An open invoice or payment request as fetched by one run."""

    __tablename__ = "ledger_bank_open_items"
    __table_args__ = (
        UniqueConstraint("run_id", "item_id", name="uq_ledger_bank_open_items_run_id"),
        Index("ix_ledger_bank_open_items_biller", "biller", "taken_at"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    run_id: Mapped[str] = mapped_column(String(200))
    biller: Mapped[str] = mapped_column(String(200))
    kind: Mapped[str] = mapped_column(String(40))
    item_id: Mapped[str] = mapped_column(String(200))
    number: Mapped[str] = mapped_column(String(200))
    reference: Mapped[str] = mapped_column(String(300))
    customer: Mapped[str] = mapped_column(String(300))
    due_pennies: Mapped[int] = mapped_column(BigInteger)
    paid_pennies: Mapped[int] = mapped_column(BigInteger)
    due_date: Mapped[date | None] = mapped_column(Date)
    status: Mapped[str] = mapped_column(String(40))
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime)


LINES = Base.metadata.tables[BankLineRow.__tablename__]
OPEN_ITEMS = Base.metadata.tables[BankOpenItemRow.__tablename__]


class BankMixin(LedgerBase):
    """The bank-payments half of :class:`~ledger.Ledger`."""

    def start_bank_lines(
        self, biller: str, lines: Sequence[BankLine], *, run_id: str | None
    ) -> None:
        """Remember lines about to be recorded (not done). A line remembered before keeps what
        was planned then: a rerun resumes those payments."""
        now = self._now()
        with self._begin() as connection:
            for line in lines:
                insert_or_ignore(
                    connection, LINES, _row(biller, line, run_id, now), ["biller", "line_key"]
                )

    def finish_bank_lines(self, biller: str, keys: Iterable[str], *, run_id: str | None) -> None:
        """Mark lines done: every payment they planned is settled at the service."""
        wanted = list(dict.fromkeys(keys))
        now = self._now()
        with self._begin() as connection:
            for start in range(0, len(wanted), BATCH):
                connection.execute(
                    update(LINES)
                    .where(
                        LINES.c.biller == biller,
                        LINES.c.line_key.in_(wanted[start : start + BATCH]),
                    )
                    .values(done=True, run_id=run_id, recorded_at=now)
                )

    def record_bank_lines(
        self, biller: str, lines: Sequence[BankLine], *, run_id: str | None
    ) -> None:
        """Remember lines as given (a line seen again is replaced: outcome, plan, state)."""
        now = self._now()
        rows = [_row(biller, line, run_id, now) for line in lines]
        updates = ["file_sha256", "line", "outcome", "allocations", "run_id", "done", "recorded_at"]
        with self._begin() as connection:
            for start in range(0, len(rows), BATCH):
                upsert(
                    connection, LINES, rows[start : start + BATCH], ["biller", "line_key"], updates
                )

    def bank_lines_between(self, biller: str, first: date, last: date) -> list[BankLine]:
        """Every line remembered for ``biller`` booked from ``first`` to ``last`` (one query, by
        the booking-date index: a statement's lines are looked up by its period)."""
        stmt = (
            select(LINES)
            .where(LINES.c.biller == biller, LINES.c.booked_on >= first, LINES.c.booked_on <= last)
            .order_by(LINES.c.id)
        )
        with self._begin() as connection:
            return [_line(r) for r in connection.execute(stmt).mappings()]

    def done_bank_lines(self, biller: str, keys: Iterable[str]) -> set[str]:
        """Which of ``keys`` are lines already done for ``biller``."""
        wanted = list(dict.fromkeys(keys))
        found: set[str] = set()
        with self._begin() as connection:
            for start in range(0, len(wanted), BATCH):
                stmt = select(LINES.c.line_key).where(
                    LINES.c.biller == biller,
                    LINES.c.done.is_(True),
                    LINES.c.line_key.in_(wanted[start : start + BATCH]),
                )
                found.update(str(key) for key in connection.execute(stmt).scalars())
        return found

    def bank_lines(self, biller: str) -> list[BankLine]:
        """Every line remembered for ``biller``, oldest first."""
        stmt = select(LINES).where(LINES.c.biller == biller).order_by(LINES.c.id)
        with self._begin() as connection:
            return [_line(r) for r in connection.execute(stmt).mappings()]

    def record_open_items(
        self,
        biller: str,
        run_id: str,
        items: Sequence[OpenItemSnapshot],
        *,
        taken_at: datetime | None = None,
    ) -> None:
        """Keep what a run believed was owed (a rerun of the same run replaces it);
        ``taken_at``: when the run began asking the service (default now)."""
        now = taken_at or self._now()
        rows = [
            {
                "run_id": run_id,
                "biller": biller,
                "kind": item.kind,
                "item_id": item.item_id,
                "number": item.number,
                "reference": item.reference,
                "customer": item.customer,
                "due_pennies": _pennies(item.due),
                "paid_pennies": _pennies(item.paid),
                "due_date": item.due_date,
                "status": item.status,
                "taken_at": now,
            }
            for item in items
        ]
        updates = [
            "number",
            "reference",
            "customer",
            "due_pennies",
            "paid_pennies",
            "due_date",
            "status",
            "taken_at",
        ]
        with self._begin() as connection:
            for start in range(0, len(rows), BATCH):
                upsert(
                    connection,
                    OPEN_ITEMS,
                    rows[start : start + BATCH],
                    ["run_id", "item_id"],
                    updates,
                )

    def open_items_of_run(self, run_id: str) -> list[OpenItemSnapshot]:
        """The open items one run saw."""
        stmt = select(OPEN_ITEMS).where(OPEN_ITEMS.c.run_id == run_id).order_by(OPEN_ITEMS.c.id)
        with self._begin() as connection:
            return [_snapshot(r) for r in connection.execute(stmt).mappings()]

    def latest_open_items(self, biller: str) -> OpenItemsTaken | None:
        """The open items the biller's latest run saw (by when it asked), if any run did."""
        latest = (
            select(OPEN_ITEMS.c.run_id, OPEN_ITEMS.c.taken_at)
            .where(OPEN_ITEMS.c.biller == biller)
            .order_by(OPEN_ITEMS.c.taken_at.desc(), OPEN_ITEMS.c.id.desc())
            .limit(1)
        )
        with self._begin() as connection:
            found = connection.execute(latest).first()
        if found is None:
            return None
        run_id, taken_at = found
        return OpenItemsTaken(str(run_id), taken_at, self.open_items_of_run(str(run_id)))


def _row(biller: str, line: BankLine, run_id: str | None, now: datetime) -> dict[str, Any]:
    return {
        "biller": biller,
        "line_key": line.line_key,
        "file_sha256": line.file_sha256,
        "line": line.line,
        "booked_on": line.booked_on,
        "amount_pennies": _pennies(line.amount),
        "klass": line.klass,
        "outcome": line.outcome,
        "allocations": [
            {"kind": p.kind, "id": p.item_id, "number": p.number, "pennies": p.pennies}
            for p in line.payments
        ],
        "run_id": run_id,
        "done": line.done,
        "recorded_at": now,
    }


def _line(row: Any) -> BankLine:
    payments = tuple(
        PlannedPayment(str(p["kind"]), str(p["id"]), str(p["number"]), int(p["pennies"]))
        for p in (row["allocations"] or [])
    )
    return BankLine(
        row["line_key"],
        row["file_sha256"],
        row["line"],
        row["booked_on"],
        _pounds(row["amount_pennies"]),
        row["klass"],
        row["outcome"],
        bool(row["done"]),
        payments,
        row["run_id"],
    )


def _snapshot(r: Any) -> OpenItemSnapshot:
    return OpenItemSnapshot(
        r["kind"],
        r["item_id"],
        r["number"],
        r["reference"],
        r["customer"],
        _pounds(r["due_pennies"]),
        r["due_date"],
        r["status"],
        _pounds(r["paid_pennies"]),
    )


def _pennies(amount: Decimal) -> int:
    return int((amount * 100).to_integral_value())


def _pounds(pennies: int) -> Decimal:
    return (Decimal(int(pennies)) / 100).quantize(Decimal("0.01"))
