"""The :class:`Ledger`: operations, items, files and audit on one engine."""

from __future__ import annotations

from ledger._operations import OperationsMixin
from ledger._records import RecordsMixin


class Ledger(OperationsMixin, RecordsMixin):
    """The state billops keeps, on SQLite (default, a file under ``$BILLOPS_HOME``) or PostgreSQL.

    Safe to share between threads and processes: every method is one short transaction, and the
    decisions that must be made once (who sends an operation) are single conditional statements.
    Returns frozen dataclasses, never ORM rows.
    """
