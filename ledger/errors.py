"""The ledger's errors. Messages name what is wrong and where, and never carry a password."""

from __future__ import annotations


class LedgerError(Exception):
    """Base of every error the ledger raises on purpose."""


class LedgerConfigError(LedgerError, ValueError):
    """The ledger URL is malformed, names an unknown database, or cannot be reached."""


class LedgerSchemaError(LedgerError):
    """The database has no ledger schema, or an older or newer one than this billops."""


class LedgerReplaced(LedgerError):
    """The ledger a run started with is gone or was replaced by another one during the run."""


class LedgerConflict(LedgerError):
    """The same idempotency key was recorded for a different request."""


class UnknownOperation(LedgerError, LookupError):
    """No operation is recorded under the key."""

    def __str__(self) -> str:
        # LookupError would quote the message like a dict key; keep it a sentence.
        return str(self.args[0]) if self.args else "unknown operation"


class InvalidTransition(LedgerError):
    """A state change the protocol forbids (e.g. a confirmed operation marked failed)."""


class UnknownFile(LedgerError, LookupError):
    """No file is recorded under the hash, biller and kind."""

    def __str__(self) -> str:
        return str(self.args[0]) if self.args else "unknown file"
