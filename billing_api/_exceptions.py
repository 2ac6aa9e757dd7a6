"""The client's exceptions: one per kind of failure a caller handles differently.

Every error raised by the service carries the HTTP status, the parsed ``errors[].type`` list of
the contract's envelope (contract convention 9), the raw body and the ``X-Request-Id``
to quote to support.
No exception message ever contains a token, a client secret or an ``Authorization`` header: the
request kept on :class:`OutcomeUnknown` is the method and URL only.
"""

from __future__ import annotations

import json
from dataclasses import dataclass, field
from typing import Any

import httpx

__all__ = [
    "ApiError",
    "BadRequest",
    "BillingApiError",
    "CollectionMethodNotEligible",
    "Conflict",
    "DirectDebitNotAvailable",
    "ErrorDetail",
    "Forbidden",
    "NotFound",
    "OAuthError",
    "OutcomeUnknown",
    "RateLimited",
    "ReauthorizationRequired",
    "RefreshLockTimeout",
    "RequestTimeout",
    "SentRequest",
    "ServerError",
    "TokenStoreError",
    "TransportError",
    "Unauthorized",
    "UnexpectedResponse",
    "Unprocessable",
    "error_for_response",
    "parse_retry_after",
]


class BillingApiError(Exception):
    """Base of every exception the client raises."""


@dataclass(frozen=True, slots=True)
class ErrorDetail:
    """One entry of the contract's ``{"errors": [{"type", "detail", "field"}]}`` envelope."""

    type: str
    detail: str | None = None
    field: str | None = None


def _parse_details(body: Any) -> list[ErrorDetail]:
    """Read the contract envelope; tolerate anything else (the real service's is undocumented)."""
    if not isinstance(body, dict):
        return []
    errors = body.get("errors")
    if not isinstance(errors, list):
        return []
    details = []
    for entry in errors:
        if isinstance(entry, dict) and isinstance(entry.get("type"), str):
            detail = entry.get("detail")
            field_name = entry.get("field")
            details.append(
                ErrorDetail(
                    type=entry["type"],
                    detail=detail if isinstance(detail, str) else None,
                    field=field_name if isinstance(field_name, str) else None,
                )
            )
    return details


class ApiError(BillingApiError):
    """The service answered with an error status."""

    def __init__(
        self,
        message: str,
        *,
        status_code: int,
        body: Any = None,
        raw_body: str = "",
        request_id: str | None = None,
        method: str = "",
        url: str = "",
        retry_after: float | None = None,
    ) -> None:
        self.status_code = status_code
        self.retry_after = retry_after
        self.body = body
        self.raw_body = raw_body
        self.request_id = request_id
        self.method = method
        self.url = url
        self.details: list[ErrorDetail] = _parse_details(body)
        self.error_types: list[str] = [d.type for d in self.details]
        suffix = f" (request id {request_id})" if request_id else ""
        super().__init__(f"{message}{suffix}")

    @classmethod
    def from_response(cls, response: httpx.Response, message: str | None = None) -> ApiError:
        raw = response.text
        try:
            body: Any = json.loads(raw) if raw else None
        except ValueError:
            body = None
        request = response.request
        details = _parse_details(body)
        summary = "; ".join(
            f"{d.type}{f' ({d.field})' if d.field else ''}{f': {d.detail}' if d.detail else ''}"
            for d in details
        )
        text = message or (
            f"{request.method} {request.url.path} answered {response.status_code}"
            + (f": {summary}" if summary else "")
        )
        return cls(
            text,
            status_code=response.status_code,
            body=body,
            raw_body=raw,
            # The service echoes the caller's X-Request-Id; a proxy's answer may not carry it, and
            # then the id the client sent is still the one to quote.
            request_id=response.headers.get("x-request-id") or request.headers.get("x-request-id"),
            method=request.method,
            url=str(request.url.copy_with(query=None)),
            retry_after=parse_retry_after(response.headers.get("retry-after")),
        )


class BadRequest(ApiError):
    """400: the request broke a rule of the contract; ``error_types`` says which."""


class DirectDebitNotAvailable(BadRequest):
    """400 ``DIRECT_DEBIT_NOT_AVAILABLE``: the customer has no usable direct-debit mandate."""


class CollectionMethodNotEligible(BadRequest):
    """400 ``COLLECTION_METHOD_NOT_ELIGIBLE``: that collection method cannot be used here."""


class Unauthorized(ApiError):
    """401: the access token is missing, expired or revoked."""


class Forbidden(ApiError):
    """403: the token may not do this (read-only consent, wrong kind of token, another app)."""


class NotFound(ApiError):
    """404: no such resource for this biller."""


class RequestTimeout(ApiError):
    """408: the server gave up waiting for the request."""


class Conflict(ApiError):
    """409: the resource changed under the request."""


class Unprocessable(ApiError):
    """422: the body parsed but its values are invalid; ``details`` name the fields."""


class RateLimited(ApiError):
    """429: too many requests; ``retry_after`` is the server's ``Retry-After`` in seconds."""


class ServerError(ApiError):
    """5xx: the service failed."""


_BY_STATUS: dict[int, type[ApiError]] = {
    400: BadRequest,
    401: Unauthorized,
    403: Forbidden,
    404: NotFound,
    408: RequestTimeout,
    409: Conflict,
    422: Unprocessable,
    429: RateLimited,
}

_BY_TYPE: dict[str, type[BadRequest]] = {
    "DIRECT_DEBIT_NOT_AVAILABLE": DirectDebitNotAvailable,
    "COLLECTION_METHOD_NOT_ELIGIBLE": CollectionMethodNotEligible,
}


def parse_retry_after(value: str | None) -> float | None:
    """``Retry-After`` in seconds (delta-seconds form; an HTTP date is read as 'unknown')."""
    if not value:
        return None
    try:
        seconds = float(value.strip())
    except ValueError:
        return None
    return seconds if seconds >= 0 else None


def error_for_response(response: httpx.Response) -> ApiError:
    """The typed exception for an error answer of the API (not the OAuth endpoints)."""
    status = response.status_code
    cls: type[ApiError] = _BY_STATUS.get(status, ServerError if status >= 500 else ApiError)
    error = cls.from_response(response)
    if cls is BadRequest:
        for error_type in error.error_types:
            special = _BY_TYPE.get(error_type)
            if special is not None:
                error = special.from_response(response)
                break
    return error


class OAuthError(BillingApiError):
    """The token or revoke endpoint refused, with the RFC 6749 §5.2 ``error`` and description."""

    def __init__(
        self,
        error: str,
        description: str | None = None,
        *,
        status_code: int = 400,
        request_id: str | None = None,
    ) -> None:
        self.error = error
        self.description = description
        self.status_code = status_code
        self.request_id = request_id
        text = f"OAuth error {error}" + (f": {description}" if description else "")
        if request_id:
            text += f" (request id {request_id})"
        super().__init__(text)

    @classmethod
    def from_response(cls, response: httpx.Response) -> OAuthError:
        try:
            body = response.json()
        except ValueError:
            body = None
        error = "invalid_response"
        description: str | None = f"HTTP {response.status_code}"
        if isinstance(body, dict) and isinstance(body.get("error"), str):
            error = body["error"]
            raw_description = body.get("error_description")
            description = raw_description if isinstance(raw_description, str) else None
        return cls(
            error,
            description,
            status_code=response.status_code,
            request_id=response.headers.get("x-request-id"),
        )

    @property
    def is_invalid_grant(self) -> bool:
        return self.error == "invalid_grant"


class ReauthorizationRequired(BillingApiError):
    """The stored refresh token no longer works; only a person can fix it, by logging in again.

    ``command`` is the exact command to run (the credential block passes it in, for example
    ``billops auth login --block acme``).
    """

    def __init__(self, reason: str, *, command: str | None = None) -> None:
        self.reason = reason
        self.command = command
        how = f" Run: {command}" if command else " Log in again to obtain a new refresh token."
        super().__init__(f"Re-authorization required: {reason}.{how}")


class TokenStoreError(BillingApiError):
    """Where a credential's tokens are kept (a Prefect block and its API, the refresh lock, a
    token file) could not be read or written. ``store`` names it; the message says what failed.

    It is never a transport error of the billing service, and the client does not retry it as
    one: the service was not asked anything.
    """

    def __init__(self, store: str, message: str) -> None:
        self.store = store
        super().__init__(message)


class RefreshLockTimeout(TokenStoreError):
    """The refresh lock of a credential stayed held by someone else for the whole wait.

    ``holder`` describes who holds it when that is known; ``command`` frees a lock whose holder
    is gone (it refuses while the holder lives).
    """

    def __init__(
        self, store: str, message: str, *, holder: str | None, command: str | None
    ) -> None:
        self.holder = holder
        self.command = command
        super().__init__(store, message)


@dataclass(frozen=True, slots=True)
class SentRequest:
    """What was sent, without headers or body: safe to log, enough to ask the ledger about it."""

    operation_id: str
    method: str
    url: str
    idempotency_hint: str | None = field(default=None)


class OutcomeUnknown(BillingApiError):
    """A non-idempotent request may or may not have taken effect (timeout, dropped connection, 5xx).

    It is never resent automatically: the caller checks its ledger (and the service) first
    (docs/conventions.md §6 Writes).
    """

    def __init__(self, request: SentRequest, cause: str) -> None:
        self.request = request
        self.cause = cause
        super().__init__(
            f"{request.method} {request.url} ({request.operation_id}): outcome unknown after "
            f"{cause}; not resent — check whether it took effect before sending again"
        )


class TransportError(BillingApiError):
    """A request failed at the connection level and was not (or no longer) retried: an
    idempotent one whose retries ran out, or a failure no retry can mend (an unsupported URL
    scheme, a broken proxy). The httpx exception is chained as ``__cause__``.

    ``may_have_arrived``: the last attempt left and its answer was lost (a read timeout, a
    dropped connection), so the service may have applied it. Only an idempotent operation gets
    here so (sending it again is safe); False when no attempt ever reached the service.
    """

    def __init__(self, message: str, *, may_have_arrived: bool = False) -> None:
        super().__init__(message)
        self.may_have_arrived = may_have_arrived


class UnexpectedResponse(BillingApiError):
    """A 2xx answer whose body is not what the contract promises (not JSON, a missing list key)."""
