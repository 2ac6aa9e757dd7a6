"""The state billops keeps, on SQLAlchemy 2 and Alembic: operations (idempotency records of every
write to the service), per-row outcomes of bulk imports, files seen, and the audit trail.

Knows nothing of Prefect, the sandbox or the CLI. Open with ``Ledger(url)``; the schema is
created or upgraded on opening (``billops db upgrade`` does the same on its own).
"""

from ledger._engine import safe_url
from ledger._ledger import Ledger
from ledger.errors import (
    InvalidTransition,
    LedgerConfigError,
    LedgerConflict,
    LedgerError,
    LedgerSchemaError,
    UnknownFile,
    UnknownOperation,
)
from ledger.migrate import current_revision, head_revision, upgrade_database
from ledger.records import (
    UNSETTLED_STATES,
    AuditEntry,
    FileRecord,
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
    "IntentResult",
    "InvalidTransition",
    "ItemOutcome",
    "Ledger",
    "LedgerConfigError",
    "LedgerConflict",
    "LedgerError",
    "LedgerSchemaError",
    "Operation",
    "OperationState",
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
