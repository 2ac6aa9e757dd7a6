"""The client's public surface: ``billing_api.__all__`` is pinned, every name in it imports, and
the packages above the client (blocks, the CLI, tasks, flows) import only that surface, never a
private module."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

import billing_api

ROOT = Path(__file__).resolve().parents[2]
PUBLIC = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "OPERATIONS",
    "ApiError",
    "BadRequest",
    "BillingApiError",
    "BillingClient",
    "ClientCredentials",
    "CollectionMethodNotEligible",
    "Conflict",
    "DirectDebitNotAvailable",
    "ErrorDetail",
    "FileLock",
    "FileTokenStore",
    "Forbidden",
    "JournalRecords",
    "JournalState",
    "LockHolder",
    "LockTimeout",
    "NotFound",
    "OAuthClient",
    "OAuthError",
    "Operation",
    "OutcomeUnknown",
    "RateLimited",
    "ReauthorizationRequired",
    "RecoveryDirectory",
    "RefreshIntent",
    "RefreshLock",
    "RefreshLockTimeout",
    "RefreshingAuth",
    "RequestTimeout",
    "SentRequest",
    "ServerError",
    "StaleTokenSet",
    "StaticTokenAuth",
    "TokenEndpoint",
    "TokenJournal",
    "TokenManager",
    "TokenProvider",
    "TokenResponse",
    "TokenSet",
    "TokenStore",
    "TokenStoreError",
    "TransportError",
    "Unauthorized",
    "UnexpectedResponse",
    "Unprocessable",
    "WebhookSignatureError",
    "access_token_usable",
    "build_authorize_url",
    "holding",
    "lock_timeout",
    "new_state",
    "parse_event",
    "pkce_pair",
    "process_alive",
    "read_recovery_file",
    "recovery_file_path",
    "renewal_margin",
    "scrub",
    "utc_now",
    "verify_signature",
]


def test_all_is_pinned_and_sorted() -> None:
    assert billing_api.__all__ == PUBLIC
    assert sorted(PUBLIC, key=lambda name: (not name.isupper(), name)) == PUBLIC


@pytest.mark.parametrize("name", PUBLIC)
def test_every_public_name_imports(name: str) -> None:
    assert getattr(billing_api, name) is not None


def _private_imports(path: Path) -> list[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    found = []
    for node in ast.walk(tree):
        names: list[str] = []
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names = [node.module]
        elif isinstance(node, ast.Import):
            names = [alias.name for alias in node.names]
        for name in names:
            parts = name.split(".")
            if parts[0] == "billing_api" and any(part.startswith("_") for part in parts[1:]):
                found.append(name)
    return found


@pytest.mark.parametrize("package", ["blocks", "billops", "tasks", "flows"])
def test_packages_above_the_client_import_only_its_public_surface(package: str) -> None:
    offenders = {
        str(path.relative_to(ROOT)): _private_imports(path)
        for path in sorted((ROOT / package).rglob("*.py"))
    }
    assert {path: names for path, names in offenders.items() if names} == {}
