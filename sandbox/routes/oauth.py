"""``/oauth2/*``: the token endpoint (three grants), revoke, authorize and authorization details."""

from __future__ import annotations

import base64
import binascii
from typing import Annotated, Any
from urllib.parse import unquote, urlencode

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field
from sqlalchemy.orm import Session

from sandbox import state, stats, tokens
from sandbox.deps import BillerDep, ContextDep, SessionDep
from sandbox.errors import VALIDATION_ERROR, ApiError, OAuthError, not_found
from sandbox.models import App
from sandbox.timefmt import iso

router = APIRouter(prefix="/oauth2", tags=["oauth"])

_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
FormField = Annotated[str | None, Form()]


def _basic_credentials(request: Request) -> tuple[str, str] | None:
    scheme, _, value = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "basic":
        return None
    try:
        decoded = base64.b64decode(value.strip(), validate=True).decode("utf-8")
    except (binascii.Error, UnicodeDecodeError) as exc:
        raise OAuthError(
            "invalid_client", "malformed HTTP Basic credentials", status=401, basic_challenge=True
        ) from exc
    client_id, sep, secret = decoded.partition(":")
    if not sep:
        raise OAuthError(
            "invalid_client", "malformed HTTP Basic credentials", status=401, basic_challenge=True
        )
    # RFC 6749 §2.3.1: both parts are form-urlencoded before they are joined.
    return unquote(client_id), unquote(secret)


def authenticate_client(
    session: Session, request: Request, form_id: str | None, form_secret: str | None
) -> App:
    """Client authentication by HTTP Basic or form fields; both may be sent if they agree."""
    basic = _basic_credentials(request)
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


@router.post("/token", operation_id="oauth.token", summary="Issue tokens")
def token(
    request: Request,
    context: ContextDep,
    grant_type: FormField = None,
    client_id: FormField = None,
    client_secret: FormField = None,
    code: FormField = None,
    refresh_token: FormField = None,
    redirect_uri: FormField = None,
    scope: FormField = None,
    code_verifier: FormField = None,
) -> JSONResponse:
    """Exchange a code, rotate a refresh token, or issue a platform token.

    Failed attempts still commit what they changed (a replayed code revokes its grant), then the
    error is raised to be rendered in the RFC 6749 form.
    """
    with context.sessions() as session:
        owner = "anonymous"
        try:
            app = authenticate_client(session, request, client_id, client_secret)
            owner = f"app:{app.client_id}"
            config = state.runtime_config(session, context.settings.runtime)
            now = state.now(session)
            if grant_type == "authorization_code":
                if not code:
                    raise OAuthError("invalid_request", "code is required")
                body, owner = tokens.exchange_code(
                    session,
                    app=app,
                    code=code,
                    redirect_uri=redirect_uri,
                    code_verifier=code_verifier,
                    now=now,
                    config=config,
                )
            elif grant_type == "refresh_token":
                if not refresh_token:
                    raise OAuthError("invalid_request", "refresh_token is required")
                body, owner = tokens.rotate_refresh_token(
                    session, app=app, refresh_token=refresh_token, now=now, config=config
                )
            elif grant_type == "client_credentials":
                body = tokens.issue_platform_token(session, app=app, now=now, config=config)
            elif not grant_type:
                raise OAuthError("invalid_request", "grant_type is required")
            else:
                raise OAuthError(
                    "unsupported_grant_type", f"grant_type {grant_type!r} is not supported"
                )
            stats.increment(session, owner, stats.TOKEN_GRANTS, grant_type)
            session.commit()
        except OAuthError as exc:
            owner = exc.owner or owner
            if exc.error == "invalid_grant":
                stats.increment(session, owner, stats.INVALID_GRANT)
            session.commit()
            raise
        finally:
            request.state.owner = owner
    return JSONResponse(body, headers=_NO_STORE)


@router.post("/revoke", operation_id="oauth.revoke", summary="Revoke a refresh token")
def revoke(
    request: Request,
    session: SessionDep,
    client_id: FormField = None,
    client_secret: FormField = None,
    token: FormField = None,
) -> JSONResponse:
    """RFC 7009: 200 for an unknown token too; the access tokens issued stay valid [C]."""
    app = authenticate_client(session, request, client_id, client_secret)
    request.state.owner = f"app:{app.client_id}"
    if not token:
        raise OAuthError("invalid_request", "token is required")
    tokens.revoke_refresh_token(session, app=app, token=token, now=state.now(session))
    return JSONResponse({}, headers=_NO_STORE)


class AuthorizeRequest(BaseModel):
    model_config = ConfigDict(extra="forbid")

    client_id: str = Field(alias="clientId", min_length=1)
    redirect_uri: str = Field(alias="redirectUri", min_length=1)
    scope: str | None = None
    state: str | None = None
    code_challenge: str | None = Field(None, alias="codeChallenge")
    code_challenge_method: str | None = Field(None, alias="codeChallengeMethod")


def find_app_for_redirect(session: Session, client_id: str, redirect_uri: str) -> App:
    app = session.get(App, client_id)
    if app is None:
        raise not_found("app")
    if not tokens.is_allowed_redirect(app, redirect_uri):
        raise ApiError(
            422,
            VALIDATION_ERROR,
            "redirectUri is neither the app's registered redirect URI nor a loopback URI",
            field="redirectUri",
        )
    return app


def redirect_with(target: str, params: dict[str, str | None]) -> str:
    query = urlencode({k: v for k, v in params.items() if v is not None})
    return f"{target}{'&' if '?' in target else '?'}{query}"


@router.post("/authorize", operation_id="oauth.authorize", summary="Authorize an app")
def authorize(
    body: AuthorizeRequest, principal: BillerDep, session: SessionDep, context: ContextDep
) -> dict[str, Any]:
    """The signed-in biller authorizes an app: a code bound to ``redirectUri`` [I]."""
    app = find_app_for_redirect(session, body.client_id, body.redirect_uri)
    config = state.runtime_config(session, context.settings.runtime)
    if body.code_challenge_method not in (None, "S256", "plain"):
        raise ApiError(
            422,
            VALIDATION_ERROR,
            "codeChallengeMethod must be S256 or plain",
            field="codeChallengeMethod",
        )
    assert principal.biller_id is not None
    code = tokens.issue_code(
        session,
        app=app,
        biller_id=principal.biller_id,
        redirect_uri=body.redirect_uri,
        scope=body.scope,
        read_only=principal.read_only,
        code_challenge=body.code_challenge,
        code_challenge_method=body.code_challenge_method,
        now=state.now(session),
        config=config,
    )
    return {
        "code": code,
        "expiresIn": config.code_ttl,
        "redirectUri": redirect_with(body.redirect_uri, {"code": code, "state": body.state}),
    }


@router.get(
    "/authorization",
    operation_id="oauth.get_authorization",
    summary="Authorization details of an app",
)
def get_authorization(
    principal: BillerDep,
    session: SessionDep,
    client_id: Annotated[str, Query(alias="clientId", min_length=1)],
) -> dict[str, Any]:
    """Whether the caller's biller has authorized the app, and since when [I]."""
    app = session.get(App, client_id)
    if app is None:
        raise not_found("app")
    assert principal.biller_id is not None
    grant = tokens.grant_for(session, client_id=client_id, biller_id=principal.biller_id)
    return {
        "clientId": app.client_id,
        "appName": app.name,
        "billerId": principal.biller_id,
        "authorized": grant is not None,
        "scopes": grant.scope.split() if grant else [],
        "redirectUris": [app.redirect_uri],
        "authorizedAt": iso(grant.created_at) if grant else None,
    }
