"""The state billops keeps, on SQLAlchemy 2 and Alembic: operations (idempotency records of every
write to the service), per-row outcomes of bulk imports, files seen, and the audit trail.

Knows nothing of Prefect, the sandbox or the CLI. ``Ledger(url)`` creates or upgrades the schema
on opening (what ``billops setup`` and ``billops db upgrade`` do); ``Ledger(url, create=False)``
opens an existing ledger only, and is what every job uses.
"""

from ledger._engine import safe_url
from ledger._ledger import Ledger
from ledger._mirror import PaymentRequestSeen
from ledger.errors import (
    InvalidTransition,
    LedgerConfigError,
    LedgerConflict,
    LedgerError,
    LedgerReplaced,
    LedgerSchemaError,
    UnknownFile,
    UnknownOperation,
)
from ledger.migrate import current_revision, head_revision, upgrade_database
from ledger.records import (
    UNSETTLED_STATES,
    AuditEntry,
    FileRecord,
    FileState,
    IntentResult,
    ItemOutcome,
    Operation,
    OperationState,
    Resolution,
)
from ledger.resolve import ResolvedOperation, Resolver, resolve_operations

__all__ = [
    "UNSETTLED_STATES",
    "AuditEntry",
    "FileRecord",
    "FileState",
    "IntentResult",
    "InvalidTransition",
    "ItemOutcome",
    "Ledger",
    "LedgerConfigError",
    "LedgerConflict",
    "LedgerError",
    "LedgerReplaced",
    "LedgerSchemaError",
    "Operation",
    "OperationState",
    "PaymentRequestSeen",
    "Resolution",
    "ResolvedOperation",
    "Resolver",
    "UnknownFile",
    "UnknownOperation",
    "current_revision",
    "head_revision",
    "resolve_operations",
    "safe_url",
    "upgrade_database",
]
