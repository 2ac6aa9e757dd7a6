"""The OAuth 2.0 token endpoint client and the login helpers (contract: ``oauth`` operations).

``POST <base_url>/oauth2/token`` and ``POST <base_url>/oauth2/revoke`` take form bodies; the client
authenticates with HTTP Basic (the default) or with ``client_id``/``client_secret`` form fields.

Every OAuth write is ``x-idempotent: false``, and the client's retry policy
(:mod:`billing_api._retries`) applies as to any other write: a request that may have reached the
service is never resent (for a refresh, the old token may already be consumed). Only failures that
happen before anything is sent (the connection could not be opened) and 429 refusals with
``Retry-After`` are retried; a timeout or a dropped connection after sending raises
:class:`OutcomeUnknown`, and the caller (the :class:`~billing_api._tokens.TokenManager`) re-reads
its store before deciding anything. An error answer is an :class:`OAuthError` carrying RFC 6749's
``error`` code.
"""

from __future__ import annotations

import base64
import hashlib
import random as _random
import secrets
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from types import TracebackType
from typing import Any, Literal
from urllib.parse import quote, urlencode

import httpx

from billing_api._exceptions import OAuthError
from billing_api._operations import OPERATIONS
from billing_api._retries import Fail, Retry, decide
from billing_api._tls import shared_ssl_context
from billing_api._token_set import TokenResponse, utc_now

__all__ = [
    "DEFAULT_OAUTH_TIMEOUT",
    "ClientCredentials",
    "OAuthClient",
    "TokenResponse",
    "build_authorize_url",
    "new_state",
    "pkce_pair",
]

DEFAULT_OAUTH_TIMEOUT = httpx.Timeout(30.0, connect=10.0)


@dataclass(frozen=True)
class ClientCredentials:
    """The app's OAuth client id and secret (the secret never appears in a repr)."""

    client_id: str
    client_secret: str = field(repr=False)

    def __repr__(self) -> str:
        return f"ClientCredentials(client_id={self.client_id!r}, client_secret='***')"

    __str__ = __repr__


def _parse_token_response(response: httpx.Response, obtained_at: datetime) -> TokenResponse:
    request_id = response.headers.get("x-request-id")

    def bad(what: str) -> OAuthError:
        return OAuthError(
            "invalid_response",
            f"the token endpoint answered 200 but {what}",
            status_code=response.status_code,
            request_id=request_id,
        )

    try:
        body = response.json()
    except ValueError:
        raise bad("the body is not JSON") from None
    if not isinstance(body, dict):
        raise bad("the body is not a JSON object")
    access = body.get("access_token")
    if not isinstance(access, str) or not access:
        raise bad("without an access_token")
    refresh = body.get("refresh_token")
    expires_in = body.get("expires_in")
    if isinstance(expires_in, str):
        try:
            expires_in = float(expires_in)
        except ValueError:
            raise bad("expires_in is not a number") from None
    if expires_in is not None and (
        isinstance(expires_in, bool) or not isinstance(expires_in, int | float)
    ):
        raise bad("expires_in is not a number")
    scope = body.get("scope")
    token_type = body.get("token_type")
    return TokenResponse(
        access_token=access,
        refresh_token=refresh if isinstance(refresh, str) and refresh else None,
        expires_in=float(expires_in) if expires_in is not None else None,
        scope=scope if isinstance(scope, str) else None,
        token_type=token_type if isinstance(token_type, str) else "Bearer",
        obtained_at=obtained_at,
    )


class OAuthClient:
    """The token and revoke endpoints of one app, over ``base_url`` (the API root, ``.../api``)."""

    def __init__(
        self,
        base_url: str,
        credentials: ClientCredentials,
        *,
        timeout: httpx.Timeout | float = DEFAULT_OAUTH_TIMEOUT,
        http_client: httpx.Client | None = None,
        auth_method: Literal["basic", "form"] = "basic",
        max_retries: int = 2,
        sleep: Callable[[float], None] = time.sleep,
        random: Callable[[], float] = _random.random,
        now: Callable[[], datetime] = utc_now,
    ) -> None:
        if auth_method not in ("basic", "form"):
            raise ValueError(f"auth_method must be 'basic' or 'form', got {auth_method!r}")
        self.base_url = base_url.rstrip("/")
        self.credentials = credentials
        self.auth_method = auth_method
        self._timeout = timeout
        self._owns_client = http_client is None
        self._http = http_client or httpx.Client(timeout=timeout, verify=shared_ssl_context())
        self._max_retries = max(0, max_retries)
        self._sleep = sleep
        self._random = random
        self._now = now

    def __repr__(self) -> str:
        return (
            f"OAuthClient(base_url={self.base_url!r}, client_id={self.credentials.client_id!r}, "
            f"auth_method={self.auth_method!r})"
        )

    @property
    def token_url(self) -> str:
        """``<base_url>/oauth2/token``."""
        return f"{self.base_url}/oauth2/token"

    @property
    def revoke_url(self) -> str:
        """``<base_url>/oauth2/revoke``."""
        return f"{self.base_url}/oauth2/revoke"

    def close(self) -> None:
        """Close the HTTP client if this object created it."""
        if self._owns_client:
            self._http.close()

    def __enter__(self) -> OAuthClient:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    # --- grants ---------------------------------------------------------------------------
    def exchange_code(
        self, code: str, *, redirect_uri: str | None, code_verifier: str | None = None
    ) -> TokenResponse:
        """The authorization-code grant (single use: a second exchange is ``invalid_grant``)."""
        form = {"grant_type": "authorization_code", "code": code}
        if redirect_uri is not None:
            form["redirect_uri"] = redirect_uri
        if code_verifier is not None:
            form["code_verifier"] = code_verifier
        return self._token(form)

    def refresh(
        self, refresh_token: str, *, on_answer: Callable[[bytes], None] | None = None
    ) -> TokenResponse:
        """The refresh-token grant: a new access token and a new refresh token (the old dies).

        ``on_answer`` gets the raw body of a 200 answer the instant it is read, before anything
        else (the refresh procedure journals it there: ``docs/credentials.md`` §3).
        """
        form = {"grant_type": "refresh_token", "refresh_token": refresh_token}
        return self._token(form, on_answer)

    def client_credentials(self, scope: str | None = None) -> TokenResponse:
        """The client-credentials grant: a platform access token (no refresh token)."""
        form = {"grant_type": "client_credentials"}
        if scope is not None:
            form["scope"] = scope
        return self._token(form)

    def revoke(self, token: str, *, token_type_hint: str | None = None) -> None:
        """Revoke a refresh token (200 also for unknown tokens, RFC 7009)."""
        form = {"token": token}
        if token_type_hint is not None:
            form["token_type_hint"] = token_type_hint
        self._post("oauth.revoke", self.revoke_url, form)

    # --- transport ------------------------------------------------------------------------
    def _token(
        self, form: dict[str, str], on_answer: Callable[[bytes], None] | None = None
    ) -> TokenResponse:
        # The expiry counts from before the request was sent, so it is never later than the
        # service's own.
        sent_at = self._now()
        response = self._post("oauth.token", self.token_url, form, on_answer)
        return _parse_token_response(response, sent_at)

    def _client_auth(self, form: dict[str, str]) -> tuple[dict[str, str], dict[str, str]]:
        creds = self.credentials
        if self.auth_method == "form":
            return {**form, "client_id": creds.client_id, "client_secret": creds.client_secret}, {}
        # RFC 6749 §2.3.1: id and secret are form-urlencoded before the Basic encoding.
        pair = f"{quote(creds.client_id, safe='')}:{quote(creds.client_secret, safe='')}"
        encoded = base64.b64encode(pair.encode("utf-8")).decode("ascii")
        return form, {"Authorization": f"Basic {encoded}"}

    def _post(
        self,
        operation_id: str,
        url: str,
        form: dict[str, str],
        on_answer: Callable[[bytes], None] | None = None,
    ) -> httpx.Response:
        """POST the form, retrying only what the client's retry policy allows (module doc);
        ``on_answer`` gets a 200 answer's body first."""
        operation = OPERATIONS[operation_id]
        data, headers = self._client_auth(form)
        headers["Accept"] = "application/json"
        attempt = 0
        while True:
            request = self._http.build_request(
                "POST", url, data=data, headers=headers, timeout=self._timeout
            )
            outcome: httpx.Response | httpx.TransportError
            try:
                outcome = self._http.send(request)
            except httpx.TransportError as error:
                outcome = error
            if on_answer and isinstance(outcome, httpx.Response) and outcome.status_code == 200:
                on_answer(outcome.content)
            decision = decide(operation, attempt, self._max_retries, request, outcome, self._random)
            if decision is None:
                assert isinstance(outcome, httpx.Response)
                return outcome
            if isinstance(decision, Fail):
                if isinstance(outcome, httpx.Response):
                    # The token endpoint's errors follow RFC 6749 §5.2, not the API's envelope.
                    raise OAuthError.from_response(outcome) from None
                # Never the httpx exception as cause: its message may quote the request.
                raise decision.error from None
            assert isinstance(decision, Retry)
            self._sleep(decision.delay)
            attempt += 1


# --- login helpers --------------------------------------------------------------------------


def new_state() -> str:
    """A fresh, unguessable ``state`` value for one authorization request."""
    return secrets.token_urlsafe(32)


def pkce_pair() -> tuple[str, str]:
    """A PKCE ``(code_verifier, code_challenge)`` pair, method ``S256`` (RFC 7636)."""
    verifier = secrets.token_urlsafe(64)
    digest = hashlib.sha256(verifier.encode("ascii")).digest()
    challenge = base64.urlsafe_b64encode(digest).rstrip(b"=").decode("ascii")
    return verifier, challenge


def build_authorize_url(
    login_url: str,
    *,
    client_id: str,
    redirect_uri: str,
    state: str,
    code_challenge: str | None = None,
    scope: str | None = None,
    extra: Mapping[str, str] | None = None,
) -> str:
    """The consent page URL: ``login_url?response_type=code&client_id=...&redirect_uri=...``.

    ``code_challenge`` is sent with method ``S256`` (make it with :func:`pkce_pair`).
    """
    params: dict[str, Any] = {
        "response_type": "code",
        "client_id": client_id,
        "redirect_uri": redirect_uri,
        "state": state,
    }
    if scope is not None:
        params["scope"] = scope
    if code_challenge is not None:
        params["code_challenge"] = code_challenge
        params["code_challenge_method"] = "S256"
    if extra:
        params.update(extra)
    separator = "&" if "?" in login_url else "?"
    return f"{login_url}{separator}{urlencode(params)}"
