"""The payout-reconciliation job's state: payouts and their items as the payout reports showed
them, the payment service's credits on the bank statements (and which days each statement
covered), and the latest result of every payout and credit.

Everything is keyed by business ids (the payout's id, the bank line's stable key), so a report or
a statement seen again changes nothing, and a rerun updates a result (``in_transit`` becomes
``matched``) instead of adding one. A payout's items are rewritten only when the report shows
them differently (a digest of the items tells).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import (
    JSON,
    BigInteger,
    Connection,
    Date,
    Index,
    Integer,
    String,
    UniqueConstraint,
    delete,
    func,
    select,
)
from sqlalchemy.orm import Mapped, mapped_column

from ledger._base import LedgerBase, insert_or_ignore, upsert
from ledger._models import Base
from ledger._types import UTCDateTime
from ledger.payouts import (
    ITEM_FIELDS,
    BankCoverage,
    PayoutCredit,
    PayoutRecord,
    PayoutResult,
    PayoutStored,
)

BATCH = 500
SQLITE_INSERT_CACHE_KIB = 64 * 1024  # a bulk insert of items: see _insert_items
PAID_OUT = ("matched", "matched_with_difference")


class PayoutRow(Base):
    """One payout of a biller, as the latest report showing it had it."""

    __tablename__ = "ledger_payouts"
    __table_args__ = (
        UniqueConstraint("biller", "payout_id", name="uq_ledger_payouts_biller_payout_id"),
        Index("ix_ledger_payouts_biller_arrival_date", "biller", "arrival_date"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    payout_id: Mapped[str] = mapped_column(String(200))
    reference: Mapped[str] = mapped_column(String(200))
    arrival_date: Mapped[date] = mapped_column(Date)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    gross_pennies: Mapped[int] = mapped_column(BigInteger)
    deduction_pennies: Mapped[int] = mapped_column(BigInteger)
    item_count: Mapped[int] = mapped_column(Integer)
    items_digest: Mapped[str] = mapped_column(String(64))
    report_sha256: Mapped[str] = mapped_column(String(64))
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PayoutItemRow(Base):
    """One line of a payout: a payment paid out, or a deduction (a late failure)."""

    __tablename__ = "ledger_payout_items"
    __table_args__ = (
        UniqueConstraint(
            "biller", "payout_id", "position", name="uq_ledger_payout_items_biller_payout_id"
        ),
        Index("ix_ledger_payout_items_biller_payment_id", "biller", "payment_id"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    payout_id: Mapped[str] = mapped_column(String(200))
    position: Mapped[int] = mapped_column(Integer)
    kind: Mapped[str] = mapped_column(String(20))
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    payment_id: Mapped[str] = mapped_column(String(200))
    invoice_number: Mapped[str] = mapped_column(String(200))
    payment_request_number: Mapped[str] = mapped_column(String(200))
    invoice_id: Mapped[str] = mapped_column(String(200))
    payment_request_id: Mapped[str] = mapped_column(String(200))
    customer: Mapped[str] = mapped_column(String(300))
    description: Mapped[str] = mapped_column(String(500))


class PayoutCreditRow(Base):
    """A bank credit from the payment service, by the bank line's stable key."""

    __tablename__ = "ledger_payout_credits"
    __table_args__ = (
        UniqueConstraint("biller", "line_key", name="uq_ledger_payout_credits_biller_line_key"),
        Index("ix_ledger_payout_credits_biller_booked_on", "biller", "booked_on"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    line_key: Mapped[str] = mapped_column(String(300))
    booked_on: Mapped[date] = mapped_column(Date)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    payer: Mapped[str] = mapped_column(String(300))
    reference: Mapped[str] = mapped_column(String(300))
    text: Mapped[str] = mapped_column(String(500))
    file_sha256: Mapped[str] = mapped_column(String(64))
    line: Mapped[int] = mapped_column(Integer)
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PayoutStatementRow(Base):
    """A bank statement the job saw: the days it covered."""

    __tablename__ = "ledger_payout_statements"
    __table_args__ = (
        UniqueConstraint(
            "biller", "file_sha256", name="uq_ledger_payout_statements_biller_file_sha256"
        ),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    file_sha256: Mapped[str] = mapped_column(String(64))
    first_day: Mapped[date] = mapped_column(Date)
    last_day: Mapped[date] = mapped_column(Date)
    lines: Mapped[int] = mapped_column(Integer)
    seen_at: Mapped[datetime] = mapped_column(UTCDateTime)


class PayoutResultRow(Base):
    """The latest result of one payout or one credit, and since when it has been in it."""

    __tablename__ = "ledger_payout_results"
    __table_args__ = (
        UniqueConstraint(
            "biller", "subject", "subject_id", name="uq_ledger_payout_results_biller_subject"
        ),
        Index("ix_ledger_payout_results_biller_day", "biller", "day"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    biller: Mapped[str] = mapped_column(String(200))
    subject: Mapped[str] = mapped_column(String(20))
    subject_id: Mapped[str] = mapped_column(String(300))
    state: Mapped[str] = mapped_column(String(40))
    day: Mapped[date] = mapped_column(Date)
    amount_pennies: Mapped[int] = mapped_column(BigInteger)
    difference_pennies: Mapped[int] = mapped_column(BigInteger)
    linked: Mapped[list[str]] = mapped_column(JSON)
    reasons: Mapped[list[str]] = mapped_column(JSON)
    run_id: Mapped[str | None] = mapped_column(String(200))
    first_state: Mapped[str] = mapped_column(String(40))
    state_since: Mapped[datetime] = mapped_column(UTCDateTime)
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime)


PAYOUTS = Base.metadata.tables[PayoutRow.__tablename__]
ITEMS = Base.metadata.tables[PayoutItemRow.__tablename__]
CREDITS = Base.metadata.tables[PayoutCreditRow.__tablename__]
STATEMENTS = Base.metadata.tables[PayoutStatementRow.__tablename__]
RESULTS = Base.metadata.tables[PayoutResultRow.__tablename__]
_PAYOUT_FIELDS = (
    "payout_id",
    "reference",
    "arrival_date",
    "amount_pennies",
    "gross_pennies",
    "deduction_pennies",
    "item_count",
    "items_digest",
    "report_sha256",
)


class PayoutsMixin(LedgerBase):
    """The payout-reconciliation half of :class:`~ledger.Ledger`."""

    def record_payout_report(
        self, biller: str, payouts: Sequence[PayoutRecord], items: Iterable[Sequence[Any]]
    ) -> PayoutStored:
        """Keep a report's payouts and their items (tuples in :data:`ITEM_FIELDS` order). A
        payout seen before with the same items digest is left alone; one whose items changed
        has them replaced. One transaction: a crash keeps the ledger as it was."""
        now = self._now()
        with self._begin() as connection:
            known = self._digests(connection, biller, [p.payout_id for p in payouts])
            fresh = [p for p in payouts if p.payout_id not in known]
            changed = [
                p for p in payouts if known.get(p.payout_id, p.items_digest) != p.items_digest
            ]
            rewrite = {p.payout_id for p in fresh} | {p.payout_id for p in changed}
            for start in range(0, len(changed), BATCH):
                ids = [p.payout_id for p in changed[start : start + BATCH]]
                connection.execute(
                    delete(ITEMS).where(ITEMS.c.biller == biller, ITEMS.c.payout_id.in_(ids))
                )
            rows = [_payout_row(biller, p, now) for p in fresh + changed]
            updates = [*_PAYOUT_FIELDS[1:], "updated_at"]
            for start in range(0, len(rows), BATCH):
                upsert(
                    connection,
                    PAYOUTS,
                    rows[start : start + BATCH],
                    ["biller", "payout_id"],
                    updates,
                )
            if rewrite:
                _insert_items(connection, biller, (i for i in items if i[0] in rewrite))
        return PayoutStored(len(fresh), len(changed), len(payouts) - len(fresh) - len(changed))

    def _digests(self, connection: Any, biller: str, ids: Sequence[str]) -> dict[str, str]:
        found: dict[str, str] = {}
        for start in range(0, len(ids), BATCH):
            stmt = select(PAYOUTS.c.payout_id, PAYOUTS.c.items_digest).where(
                PAYOUTS.c.biller == biller, PAYOUTS.c.payout_id.in_(ids[start : start + BATCH])
            )
            found.update({str(r[0]): str(r[1]) for r in connection.execute(stmt)})
        return found

    def payouts_between(self, biller: str, first: date, last: date) -> list[PayoutRecord]:
        """The biller's payouts arriving from ``first`` to ``last``, by arrival date."""
        stmt = (
            select(PAYOUTS)
            .where(
                PAYOUTS.c.biller == biller,
                PAYOUTS.c.arrival_date >= first,
                PAYOUTS.c.arrival_date <= last,
            )
            .order_by(PAYOUTS.c.arrival_date, PAYOUTS.c.reference)
        )
        with self._begin() as connection:
            return [_payout(r) for r in connection.execute(stmt).mappings()]

    def payouts_by_id(self, biller: str, payout_ids: Sequence[str]) -> list[PayoutRecord]:
        """Those of the biller's payouts the ledger knows."""
        found: list[PayoutRecord] = []
        with self._begin() as connection:
            for start in range(0, len(payout_ids), BATCH):
                stmt = select(PAYOUTS).where(
                    PAYOUTS.c.biller == biller,
                    PAYOUTS.c.payout_id.in_(payout_ids[start : start + BATCH]),
                )
                found.extend(_payout(r) for r in connection.execute(stmt).mappings())
        return found

    def payout_span(self, biller: str) -> tuple[date, date] | None:
        """The first and last arrival date of the biller's payouts (None: none yet)."""
        stmt = select(func.min(PAYOUTS.c.arrival_date), func.max(PAYOUTS.c.arrival_date)).where(
            PAYOUTS.c.biller == biller
        )
        with self._begin() as connection:
            first, last = connection.execute(stmt).one()
        return None if first is None else (first, last)

    def payout_items(self, biller: str, payout_ids: Sequence[str]) -> list[tuple[Any, ...]]:
        """The items of those payouts, as tuples in :data:`ITEM_FIELDS` order."""
        columns = [ITEMS.c[name] for name in ITEM_FIELDS]
        found: list[tuple[Any, ...]] = []
        with self._begin() as connection:
            for start in range(0, len(payout_ids), BATCH):
                stmt = (
                    select(*columns)
                    .where(
                        ITEMS.c.biller == biller,
                        ITEMS.c.payout_id.in_(payout_ids[start : start + BATCH]),
                    )
                    .order_by(ITEMS.c.payout_id, ITEMS.c.position)
                )
                found.extend(tuple(r) for r in connection.execute(stmt))
        return found

    def payout_items_of_documents(
        self, biller: str, numbers: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """Every item naming one of those invoice or payment-request numbers (any payout)."""
        columns = [ITEMS.c[name] for name in ITEM_FIELDS]
        found: list[tuple[Any, ...]] = []
        with self._begin() as connection:
            for start in range(0, len(numbers), BATCH):
                chunk = numbers[start : start + BATCH]
                stmt = select(*columns).where(
                    ITEMS.c.biller == biller,
                    ITEMS.c.invoice_number.in_(chunk) | ITEMS.c.payment_request_number.in_(chunk),
                )
                found.extend(tuple(r) for r in connection.execute(stmt))
        return found

    def payout_items_of_payments(
        self, biller: str, payment_ids: Sequence[str]
    ) -> list[tuple[Any, ...]]:
        """Every item naming one of those payments (any payout)."""
        columns = [ITEMS.c[name] for name in ITEM_FIELDS]
        found: list[tuple[Any, ...]] = []
        with self._begin() as connection:
            for start in range(0, len(payment_ids), BATCH):
                stmt = select(*columns).where(
                    ITEMS.c.biller == biller,
                    ITEMS.c.payment_id.in_(payment_ids[start : start + BATCH]),
                )
                found.extend(tuple(r) for r in connection.execute(stmt))
        return found

    def payout_deduction_items(self, biller: str) -> list[tuple[Any, ...]]:
        """Every deduction item of the biller (any payout): few, late failures only."""
        columns = [ITEMS.c[name] for name in ITEM_FIELDS]
        stmt = select(*columns).where(ITEMS.c.biller == biller, ITEMS.c.kind == "DEDUCTION")
        with self._begin() as connection:
            return [tuple(r) for r in connection.execute(stmt)]

    def payments_paid_out_twice(self, biller: str) -> dict[str, list[str]]:
        """Payments (by id) that more than one payout paid out, with those payouts' ids."""
        twice = (
            select(ITEMS.c.payment_id)
            .where(ITEMS.c.biller == biller, ITEMS.c.kind == "PAYMENT", ITEMS.c.payment_id != "")
            .group_by(ITEMS.c.payment_id)
            .having(func.count(func.distinct(ITEMS.c.payout_id)) > 1)
        )
        stmt = (
            select(ITEMS.c.payment_id, ITEMS.c.payout_id)
            .where(ITEMS.c.biller == biller, ITEMS.c.kind == "PAYMENT")
            .where(ITEMS.c.payment_id.in_(twice))
            .order_by(ITEMS.c.payment_id, ITEMS.c.payout_id)
        )
        found: dict[str, list[str]] = {}
        with self._begin() as connection:
            for payment_id, payout_id in connection.execute(stmt):
                found.setdefault(str(payment_id), []).append(str(payout_id))
        return found

    def payout_net_before(self, biller: str, day: date) -> int:
        """Pennies the biller's payouts arriving before ``day`` carried (items, net)."""
        net = func.coalesce(func.sum(PAYOUTS.c.gross_pennies - PAYOUTS.c.deduction_pennies), 0)
        stmt = select(net).where(PAYOUTS.c.biller == biller, PAYOUTS.c.arrival_date < day)
        with self._begin() as connection:
            return int(connection.execute(stmt).scalar_one())

    def record_payout_credits(
        self, biller: str, credits: Sequence[PayoutCredit], coverage: BankCoverage | None
    ) -> int:
        """Keep the payment service's credits of a statement (a line seen before is kept as it
        was) and the days the statement covered; returns how many credits were new."""
        now = self._now()
        new = 0
        with self._begin() as connection:
            for credit in credits:
                row = {"biller": biller, **_credit_row(credit), "seen_at": now}
                new += insert_or_ignore(connection, CREDITS, row, ["biller", "line_key"])
            if coverage is not None:
                row = {
                    "biller": biller,
                    "file_sha256": coverage.file_sha256,
                    "first_day": coverage.first_day,
                    "last_day": coverage.last_day,
                    "lines": coverage.lines,
                    "seen_at": now,
                }
                insert_or_ignore(connection, STATEMENTS, row, ["biller", "file_sha256"])
        return new

    def payout_credits_between(self, biller: str, first: date, last: date) -> list[PayoutCredit]:
        """The service's credits booked from ``first`` to ``last``, by booking date."""
        stmt = (
            select(CREDITS)
            .where(
                CREDITS.c.biller == biller,
                CREDITS.c.booked_on >= first,
                CREDITS.c.booked_on <= last,
            )
            .order_by(CREDITS.c.booked_on, CREDITS.c.id)
        )
        with self._begin() as connection:
            return [_credit(r) for r in connection.execute(stmt).mappings()]

    def bank_coverage(self, biller: str) -> tuple[date, date] | None:
        """The first and last day the biller's statements seen so far cover (None: none)."""
        stmt = select(func.min(STATEMENTS.c.first_day), func.max(STATEMENTS.c.last_day)).where(
            STATEMENTS.c.biller == biller
        )
        with self._begin() as connection:
            first, last = connection.execute(stmt).one()
        return None if first is None else (first, last)

    def record_payout_results(
        self, biller: str, results: Sequence[PayoutResult], *, run_id: str | None
    ) -> None:
        """Keep each subject's latest result; ``state_since`` moves only when the state does,
        ``first_state`` never (so a report can say "in transit since ..., matched today")."""
        now = self._now()
        with self._begin() as connection:
            before = {
                (r["subject"], r["subject_id"]): r
                for r in connection.execute(
                    select(
                        RESULTS.c.subject,
                        RESULTS.c.subject_id,
                        RESULTS.c.state,
                        RESULTS.c.first_state,
                        RESULTS.c.state_since,
                    ).where(RESULTS.c.biller == biller)
                ).mappings()
            }
            rows = [
                _result_row(biller, r, before.get((r.subject, r.subject_id)), run_id, now)
                for r in results
            ]
            updates = [
                "state",
                "day",
                "amount_pennies",
                "difference_pennies",
                "linked",
                "reasons",
                "run_id",
                "state_since",
                "checked_at",
            ]
            for start in range(0, len(rows), BATCH):
                upsert(
                    connection,
                    RESULTS,
                    rows[start : start + BATCH],
                    ["biller", "subject", "subject_id"],
                    updates,
                )

    def payout_results(self, biller: str, subject: str | None = None) -> list[PayoutResult]:
        """The biller's latest results (of one subject kind when named), by day."""
        stmt = select(RESULTS).where(RESULTS.c.biller == biller)
        if subject is not None:
            stmt = stmt.where(RESULTS.c.subject == subject)
        with self._begin() as connection:
            rows = connection.execute(stmt.order_by(RESULTS.c.day, RESULTS.c.id)).mappings()
            return [_result(r) for r in rows]

    def paid_out_before(self, biller: str, day: date) -> int:
        """Pennies of the service's credits booked before ``day`` that paid a payout out."""
        stmt = select(func.coalesce(func.sum(RESULTS.c.amount_pennies), 0)).where(
            RESULTS.c.biller == biller,
            RESULTS.c.subject == "credit",
            RESULTS.c.state.in_(PAID_OUT),
            RESULTS.c.day < day,
        )
        with self._begin() as connection:
            return int(connection.execute(stmt).scalar_one())


def _insert_items(connection: Connection, biller: str, items: Iterable[Sequence[Any]]) -> None:
    """Insert items through the driver's own executemany: a year of a platform's items is
    hundreds of thousands of rows, and building SQLAlchemy's parameters row by row costs more
    than the database's own work. Columns are the table's, placeholders the driver's style."""
    names = ("biller", *ITEM_FIELDS)
    mark = {"qmark": "?", "numeric": ":{n}", "named": ":{name}"}.get(
        connection.dialect.paramstyle, "%s"
    )
    marks = ", ".join(mark.format(n=n + 1, name=name) for n, name in enumerate(names))
    sql = f"INSERT INTO {ITEMS.name} ({', '.join(names)}) VALUES ({marks})"  # noqa: S608
    rows = [(biller, *item) for item in items]
    if connection.dialect.paramstyle == "named":
        connection.exec_driver_sql(sql, [dict(zip(names, row, strict=True)) for row in rows])
    elif rows and connection.dialect.name == "sqlite":
        # SQLite's default page cache (2 MiB) is smaller than a year of items and their two
        # indexes: pages spill to the WAL mid-transaction and are read back. A larger cache for
        # this insert only saves about a tenth of its time; the connection's own is restored.
        before = connection.exec_driver_sql("PRAGMA cache_size").scalar()
        connection.exec_driver_sql(f"PRAGMA cache_size=-{SQLITE_INSERT_CACHE_KIB}")
        try:
            connection.exec_driver_sql(sql, rows)
        finally:
            connection.exec_driver_sql(f"PRAGMA cache_size={int(before or -2000)}")
    elif rows:
        connection.exec_driver_sql(sql, rows)


def _payout_row(biller: str, payout: PayoutRecord, now: datetime) -> dict[str, Any]:
    row = {name: getattr(payout, name) for name in _PAYOUT_FIELDS}
    return {"biller": biller, **row, "seen_at": now, "updated_at": now}


def _payout(row: Any) -> PayoutRecord:
    return PayoutRecord(**{name: row[name] for name in _PAYOUT_FIELDS})


def _credit_row(credit: PayoutCredit) -> dict[str, Any]:
    return {
        "line_key": credit.line_key,
        "booked_on": credit.booked_on,
        "amount_pennies": credit.amount_pennies,
        "payer": credit.payer[:300],
        "reference": credit.reference[:300],
        "text": credit.text[:500],
        "file_sha256": credit.file_sha256,
        "line": credit.line,
    }


def _credit(row: Any) -> PayoutCredit:
    return PayoutCredit(
        row["line_key"],
        row["booked_on"],
        int(row["amount_pennies"]),
        row["payer"],
        row["reference"],
        row["text"],
        row["file_sha256"],
        int(row["line"]),
    )


def _result_row(
    biller: str, result: PayoutResult, before: Any, run_id: str | None, now: datetime
) -> dict[str, Any]:
    unchanged = before is not None and before["state"] == result.state
    return {
        "biller": biller,
        "subject": result.subject,
        "subject_id": result.subject_id,
        "state": result.state,
        "day": result.day,
        "amount_pennies": result.amount_pennies,
        "difference_pennies": result.difference_pennies,
        "linked": list(result.linked),
        "reasons": list(result.reasons),
        "run_id": run_id,
        "first_state": before["first_state"] if before is not None else result.state,
        "state_since": before["state_since"] if unchanged else now,
        "checked_at": now,
    }


def _result(row: Any) -> PayoutResult:
    return PayoutResult(
        subject=row["subject"],
        subject_id=row["subject_id"],
        state=row["state"],
        day=row["day"],
        amount_pennies=int(row["amount_pennies"]),
        difference_pennies=int(row["difference_pennies"]),
        linked=tuple(row["linked"] or ()),
        reasons=tuple(row["reasons"] or ()),
        run_id=row["run_id"],
        first_state=row["first_state"],
        state_since=row["state_since"],
        checked_at=row["checked_at"],
    )
