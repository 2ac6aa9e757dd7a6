"""The client of the invoicing and payment-collection service (httpx + pydantic, no Prefect).

- :class:`BillingClient` / :class:`AsyncBillingClient`: every contract operation as a method on a
  namespace named by its tag (``client.invoices.pause_collection(...)``), typed models, retries
  read from the contract's ``x-idempotent``, typed errors, auto-pagination.
- OAuth (:mod:`billing_api.oauth`) and the rotating refresh token: :class:`TokenManager` runs the
  refresh procedure over any :class:`TokenStore` (the Prefect block in ``blocks/``, or
  :class:`FileTokenStore`), :class:`RefreshingAuth` plugs it into httpx.
- Webhooks: :func:`verify_signature`, :func:`parse_event` (``billing_api.webhooks``).

The contract itself is ``openapi.yaml`` beside this file; the sandbox serves the same document.
"""

from billing_api._auth import RefreshingAuth, StaticTokenAuth
from billing_api._base_client import DEFAULT_MAX_RETRIES, DEFAULT_TIMEOUT
from billing_api._client import AsyncBillingClient, BillingClient
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
    RequestTimeout,
    SentRequest,
    ServerError,
    TransportError,
    Unauthorized,
    UnexpectedResponse,
    Unprocessable,
)
from billing_api._file_store import FileTokenStore
from billing_api._operations import OPERATIONS, Operation
from billing_api._tokens import StaleTokenSet, TokenManager, TokenSet, TokenStore
from billing_api.oauth import ClientCredentials, OAuthClient, TokenResponse
from billing_api.webhooks import WebhookSignatureError, parse_event, verify_signature

__all__ = [
    "DEFAULT_MAX_RETRIES",
    "DEFAULT_TIMEOUT",
    "OPERATIONS",
    "ApiError",
    "AsyncBillingClient",
    "BadRequest",
    "BillingApiError",
    "BillingClient",
    "ClientCredentials",
    "CollectionMethodNotEligible",
    "Conflict",
    "DirectDebitNotAvailable",
    "ErrorDetail",
    "FileTokenStore",
    "Forbidden",
    "NotFound",
    "OAuthClient",
    "OAuthError",
    "Operation",
    "OutcomeUnknown",
    "RateLimited",
    "ReauthorizationRequired",
    "RefreshingAuth",
    "RequestTimeout",
    "SentRequest",
    "ServerError",
    "StaleTokenSet",
    "StaticTokenAuth",
    "TokenManager",
    "TokenResponse",
    "TokenSet",
    "TokenStore",
    "TransportError",
    "Unauthorized",
    "UnexpectedResponse",
    "Unprocessable",
    "WebhookSignatureError",
    "parse_event",
    "verify_signature",
]
