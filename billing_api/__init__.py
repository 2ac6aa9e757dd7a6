"""The client of the invoicing and payment-collection service (httpx + pydantic, no Prefect).

- :class:`BillingClient`: every contract operation as a method on a namespace named by its tag
  (``client.invoices.pause_collection(...)``), typed models, retries read from the contract's
  ``x-idempotent``, typed errors, auto-pagination.
- OAuth (:mod:`billing_api.oauth`) and the rotating refresh token: :class:`TokenManager` runs the
  refresh procedure over any :class:`TokenStore` (the Prefect block in ``blocks/``, or
  :class:`FileTokenStore`) with its :class:`RefreshLock` and a write-ahead :class:`TokenJournal`
  (:class:`RecoveryDirectory`); :class:`RefreshingAuth` plugs any :class:`TokenProvider` into
  httpx.
- Webhooks: :func:`verify_signature`, :func:`parse_event` (``billing_api.webhooks``).

Everything other packages use is exported here; the ``_``-modules are private. The contract
itself is ``openapi.yaml`` beside this file; the sandbox serves the same document.
"""

from billing_api._auth import RefreshingAuth, StaticTokenAuth, TokenProvider
from billing_api._base_client import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from billing_api._client import BillingClient
from billing_api._exceptions import (
    ApiError,
    BadRequest,
    BillingApiError,
    CollectionMethodNotEligible,
    Conflict,
    DirectDebitNotAvailable,
    ErrorDetail,
    Forbidden,
    NotFound,
    OAuthError,
    OutcomeUnknown,
    RateLimited,
    ReauthorizationRequired,
    RefreshLockTimeout,
    RequestTimeout,
    SentRequest,
    ServerError,
    TokenStoreError,
    TransportError,
    Unauthorized,
    UnexpectedResponse,
    Unprocessable,
)
from billing_api._file_store import FileTokenStore, LockTimeout
from billing_api._operations import OPERATIONS, Operation
from billing_api._recovery import (
    JournalRecords,
    JournalState,
    RecoveryDirectory,
    RefreshIntent,
    TokenJournal,
    read_recovery_file,
    recovery_file_path,
)
from billing_api._refresh_lock import (
    FileLock,
    LockHolder,
    RefreshLock,
    holding,
    lock_timeout,
    process_alive,
)
from billing_api._token_set import (
    StaleTokenSet,
    TokenResponse,
    TokenSet,
    access_token_usable,
    renewal_margin,
    scrub,
    utc_now,
)
from billing_api._tokens import TokenEndpoint, TokenManager, TokenStore
from billing_api.oauth import (
    ClientCredentials,
    OAuthClient,
    build_authorize_url,
    new_state,
    pkce_pair,
)
from billing_api.webhooks import WebhookSignatureError, parse_event, verify_signature

__all__ = [
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
