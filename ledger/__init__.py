"""The state billops keeps, on SQLAlchemy 2 and Alembic: operations (idempotency records of every
write to the service), per-row outcomes of bulk imports, files seen, and the audit trail.

Knows nothing of Prefect, the sandbox or the CLI. ``Ledger(url)`` creates or upgrades the schema
on opening (what ``billops setup`` and ``billops db upgrade`` do); ``Ledger(url, create=False)``
opens an existing ledger only, and is what every job uses.

The names below are loaded on first use (PEP 562), the first of them with the Ledger and every
table, as importing this package did: a module that needs only ``ledger.settings`` (where billops
keeps its files) then does not load SQLAlchemy and Alembic with it (README "Performance").
"""

from importlib import import_module
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
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

# Each public name, and the module of this package that defines it.
_HOMES = {
    "AuditEntry": "records",
    "FileRecord": "records",
    "FileState": "records",
    "IntentResult": "records",
    "InvalidTransition": "errors",
    "ItemOutcome": "records",
    "Ledger": "_ledger",
    "LedgerConfigError": "errors",
    "LedgerConflict": "errors",
    "LedgerError": "errors",
    "LedgerReplaced": "errors",
    "LedgerSchemaError": "errors",
    "Operation": "records",
    "OperationState": "records",
    "PaymentRequestSeen": "_mirror",
    "Resolution": "records",
    "ResolvedOperation": "resolve",
    "Resolver": "resolve",
    "UNSETTLED_STATES": "records",
    "UnknownFile": "errors",
    "UnknownOperation": "errors",
    "current_revision": "migrate",
    "head_revision": "migrate",
    "resolve_operations": "resolve",
    "safe_url": "_engine",
    "upgrade_database": "migrate",
}


def __getattr__(name: str) -> Any:
    home = _HOMES.get(name)
    if home is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    # The Ledger's module first: it registers every table on the models' metadata, which the
    # schema checks compare against, just as importing this package eagerly did.
    import_module(f"{__name__}._ledger")
    value = getattr(import_module(f"{__name__}.{home}"), name)
    globals()[name] = value  # found directly from now on
    return value


def __dir__() -> list[str]:
    return sorted([*globals(), *__all__])
