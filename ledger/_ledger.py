"""The :class:`Ledger`: operations, items, files and audit on one engine."""

from __future__ import annotations

from ledger._bank import BankMixin
from ledger._delinquency import DelinquencyMixin
from ledger._mirror import MirrorMixin
from ledger._operations import OperationsMixin
from ledger._payouts import PayoutsMixin
from ledger._records import RecordsMixin
from ledger._webhooks import WebhooksMixin
from ledger.token_journal import TokenJournalRow  # noqa: F401 - its table is the ledger's


class Ledger(
    OperationsMixin,
    RecordsMixin,
    MirrorMixin,
    BankMixin,
    DelinquencyMixin,
    WebhooksMixin,
    PayoutsMixin,
):
    """The state billops keeps, on SQLite (default, a file under ``$BILLOPS_HOME``) or PostgreSQL.

    Safe to share between threads and processes: every method is one short transaction, and the
    decisions that must be made once (who sends an operation) are single conditional statements.
    Returns frozen dataclasses, never ORM rows.
    """
