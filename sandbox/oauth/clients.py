"""The OAuth endpoints' rules outside the token store: client authentication (HTTP Basic or form
fields), the token endpoint's grant dispatch, redirect targets, and the consent page's checks.

The token endpoint commits what a failed attempt changed (a replayed code revokes its grant) and
counts grants and ``invalid_grant`` answers per owner (``GET /_sandbox/stats``).
"""

from __future__ import annotations

import base64
import binascii
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import unquote, urlencode

from sqlalchemy import select
from sqlalchemy.orm import Session, sessionmaker

from sandbox.config import RuntimeConfig
from sandbox.core import state, stats
from sandbox.core.errors import VALIDATION_ERROR, ApiError, OAuthError, not_found
from sandbox.core.timefmt import iso
from sandbox.models import App, Biller
from sandbox.oauth import tokens

PKCE_METHODS = (None, "S256", "plain")


def _basic_credentials(authorization: str) -> tuple[str, str] | None:
    scheme, _, value = authorization.partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError):
        decoded = ""
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise OAuthError(
            "invalid_client", "malformed HTTP Basic credentials", status=401, basic_challenge=True
        )
    # RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
    return unquote(client_id), unquote(secret)


def authenticate_client(
    session: Session, authorization: str, form_id: str | None, form_secret: str | None
) -> App:
    """Client authentication by HTTP Basic or form fields; both may be sent if they agree."""
    basic = _basic_credentials(authorization)
    if basic and (form_id or form_secret) and (form_id, form_secret) != basic:
        raise OAuthError("invalid_request", "client credentials in the header and the form differ")
    client_id, secret = basic or (form_id, form_secret)
    if not client_id or not secret:
        raise OAuthError(
            "invalid_client",
            "client authentication is required (client_id and client_secret, or HTTP Basic)",
            status=401,
        )
    app = tokens.authenticate_client(session, client_id, secret)
    if app is None:
        raise OAuthError(
            "invalid_client",
            "unknown client or wrong client secret",
            status=401,
            basic_challenge=basic is not None,
        )
    return app


@dataclass(frozen=True)
class TokenRequest:
    """The token endpoint's form fields and the request's ``Authorization`` header."""

    authorization: str
    grant_type: str | None
    client_id: str | None
    client_secret: str | None
    code: str | None
    refresh_token: str | None
    redirect_uri: str | None
    code_verifier: str | None


def _grant(
    session: Session, app: App, form: TokenRequest, config: RuntimeConfig
) -> tuple[Any, str]:
    now = state.now(session)
    owner = f"app:{app.client_id}"
    if form.grant_type == "authorization_code":
        if not form.code:
            raise OAuthError("invalid_request", "code is required")
        return tokens.exchange_code(
            session,
            app=app,
            code=form.code,
            redirect_uri=form.redirect_uri,
            code_verifier=form.code_verifier,
            now=now,
            config=config,
        )
    if form.grant_type == "refresh_token":
        if not form.refresh_token:
            raise OAuthError("invalid_request", "refresh_token is required")
        return tokens.rotate_refresh_token(
            session, app=app, refresh_token=form.refresh_token, now=now, config=config
        )
    if form.grant_type == "client_credentials":
        return tokens.issue_platform_token(session, app=app, now=now, config=config), owner
    if not form.grant_type:
        raise OAuthError("invalid_request", "grant_type is required")
    raise OAuthError("unsupported_grant_type", f"grant_type {form.grant_type!r} is not supported")


def issue_tokens(
    sessions: sessionmaker[Session], defaults: RuntimeConfig, form: TokenRequest
) -> tuple[dict[str, Any], str]:
    """Exchange a code, rotate a refresh token, or issue a platform token: the answer's body and
    whom the request counts for. A failure commits what it changed, then raises the
    :class:`OAuthError` with its ``owner`` set."""
    with sessions() as session:
        owner = "anonymous"
        try:
            app = authenticate_client(
                session, form.authorization, form.client_id, form.client_secret
            )
            owner = f"app:{app.client_id}"
            config = state.runtime_config(session, defaults)
            body, owner = _grant(session, app, form, config)
            stats.increment(session, owner, stats.TOKEN_GRANTS, str(form.grant_type))
            session.commit()
        except OAuthError as exc:
            exc.owner = exc.owner or owner
            if exc.error == "invalid_grant":
                stats.increment(session, exc.owner, stats.INVALID_GRANT)
            session.commit()
            raise
    return body, owner


def get_app(session: Session, client_id: str) -> App:
    app = session.get(App, client_id) if client_id and "\x00" not in client_id else None
    if app is None:
        raise not_found("app")
    return app


def find_app_for_redirect(session: Session, client_id: str, redirect_uri: str) -> App:
    """The app, when ``redirect_uri`` is its registered one or a loopback URI (422 otherwise)."""
    app = get_app(session, client_id)
    if not tokens.is_allowed_redirect(app, redirect_uri):
        raise ApiError(
            422,
            VALIDATION_ERROR,
            "redirectUri is neither the app's registered redirect URI nor a loopback URI",
            field="redirectUri",
        )
    return app


def check_pkce_method(method: str | None) -> None:
    if method not in PKCE_METHODS:
        raise ApiError(
            422,
            VALIDATION_ERROR,
            "codeChallengeMethod must be S256 or plain",
            field="codeChallengeMethod",
        )


def redirect_with(target: str, params: dict[str, str | None]) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{target}{'&' if '?' in target else '?'}{query}"


def consent_client(session: Session, client_id: str, redirect_uri: str | None) -> App | str:
    """The app the consent page is for, or the message to show instead (never redirect to an
    unknown client or an address not allowed for it, RFC 6749 §4.1.2.1)."""
    app = session.get(App, client_id) if client_id and "\x00" not in client_id else None
    if app is None:
        return "Unknown application (client_id). Ask the application's developer to check it."
    if redirect_uri is not None and not tokens.is_allowed_redirect(app, redirect_uri):
        return "This redirect address is not registered for the application."
    return app


def consent_billers(session: Session) -> Sequence[Biller]:
    """The billers a person may connect on the consent page, oldest first."""
    return session.scalars(select(Biller).order_by(Biller.created_at)).all()


def chosen_biller(session: Session, biller_id: str | None) -> str | None:
    """The biller picked on the consent page, when it exists."""
    if not biller_id or "\x00" in biller_id or session.get(Biller, biller_id) is None:
        return None
    return biller_id


def authorization_details(session: Session, client_id: str, biller_id: str) -> dict[str, Any]:
    """Whether ``biller_id`` has authorized the app, and since when [I]."""
    app = get_app(session, client_id)
    grant = tokens.grant_for(session, client_id=client_id, biller_id=biller_id)
    return {
        "clientId": app.client_id,
        "appName": app.name,
        "billerId": biller_id,
        "authorized": grant is not None,
        "scopes": grant.scope.split() if grant else [],
        "redirectUris": [app.redirect_uri],
        "authorizedAt": iso(grant.created_at) if grant else None,
    }
