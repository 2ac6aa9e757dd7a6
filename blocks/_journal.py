"""Where the credential blocks' write-ahead journal lives (``docs/credentials.md`` §3, §4).

``BILLOPS_TOKEN_JOURNAL=local`` (the default): a directory on the worker's disk,
``$BILLOPS_HOME/recovery`` (``ledger/settings.py`` knows where that is), one file per block, 0600 in
a 0700 directory. ``BILLOPS_TOKEN_JOURNAL=ledger``: the ledger's table ``ledger_token_journal``,
encrypted with ``BILLOPS_TOKEN_JOURNAL_KEY``, shared by every machine using the same ledger.
"""

from __future__ import annotations

from billing_api import RecoveryDirectory, TokenJournal


def default_journal() -> TokenJournal:
    """The journal the settings name."""
    from ledger.settings import BillopsSettings

    settings = BillopsSettings()
    if settings.token_journal == "ledger":
        from ledger.token_journal import LedgerTokenJournal

        key = settings.token_journal_key
        return LedgerTokenJournal(
            settings.ledger_database_url, key.get_secret_value() if key else None
        )
    return RecoveryDirectory(settings.recovery_dir)
