"""The payout job's bank side and results in the ledger: the payment service's credits on the
bank statements (and which days each statement covered), and the latest result of every payout
and credit (``docs/service.md`` §6 Payouts).

A statement seen again changes nothing (credits are keyed by the bank line's stable key), and a
rerun updates a result (``in_transit`` becomes ``matched``) instead of adding one.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import date, datetime
from typing import Any

from sqlalchemy import Connection, Table, func, select
from sqlalchemy.dialects import postgresql, sqlite

from ledger._base import LedgerBase, insert_or_ignore, upsert
from ledger._payout_models import CREDITS, RESULTS, STATEMENTS
from ledger.payouts import BankCoverage, PayoutCredit, PayoutResult

BATCH = 500
PAID_OUT = ("matched", "matched_with_difference")


class PayoutBankMixin(LedgerBase):
    """Credits, statements and results: the bank half of the payout job's ledger."""

    def record_payout_credits(
        self, biller: str, credits: Sequence[PayoutCredit], coverage: BankCoverage | None
    ) -> int:
        """Keep the payment service's credits of a statement (a line seen before is kept as it
        was) and the days the statement covered; returns how many credits were new."""
        now = self._now()
        rows = {c.line_key: {"biller": biller, **_credit_row(c), "seen_at": now} for c in credits}
        with self._begin() as connection:
            keys = list(rows)
            for start in range(0, len(keys), BATCH):
                chunk = keys[start : start + BATCH]
                known = connection.execute(
                    select(CREDITS.c.line_key).where(
                        CREDITS.c.biller == biller, CREDITS.c.line_key.in_(chunk)
                    )
                )
                for (key,) in known:
                    rows.pop(key, None)
            # Seen before: kept as it was. Inserted together (one statement per batch, not one
            # per credit); a credit another run inserts meanwhile is left as that run kept it.
            fresh = list(rows.values())
            for start in range(0, len(fresh), BATCH):
                _insert_all_or_ignore(connection, CREDITS, fresh[start : start + BATCH])
            new = len(fresh)
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


def _insert_all_or_ignore(
    connection: Connection, table: Table, rows: Sequence[dict[str, Any]]
) -> None:
    """Insert ``rows`` in one statement, leaving any whose (biller, line_key) exists."""
    dialect = connection.dialect.name
    if dialect in ("sqlite", "postgresql"):
        module: Any = sqlite if dialect == "sqlite" else postgresql
        stmt = module.insert(table).on_conflict_do_nothing(index_elements=["biller", "line_key"])
        connection.execute(stmt, list(rows))
        return
    for row in rows:
        insert_or_ignore(connection, table, row, ["biller", "line_key"])


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
