"""``/oauth2/*``: the token endpoint (three grants), revoke, authorize and authorization details.

The rules are :mod:`sandbox.oauth.clients`' and :mod:`sandbox.oauth.tokens`'; errors of the token
and revoke endpoints answer in the RFC 6749 form (``OAuthError``).
"""

from __future__ import annotations

from typing import Annotated, Any

from fastapi import APIRouter, Form, Query, Request
from fastapi.responses import JSONResponse
from pydantic import BaseModel, ConfigDict, Field

from sandbox.core import state
from sandbox.core.deps import BillerDep, BillerId, ContextDep, SessionDep
from sandbox.core.errors import OAuthError
from sandbox.oauth import clients, tokens

router = APIRouter(prefix="/oauth2", tags=["oauth"])

_NO_STORE = {"Cache-Control": "no-store", "Pragma": "no-cache"}
FormField = Annotated[str | None, Form()]


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
    """Exchange a code, rotate a refresh token, or issue a platform token."""
    form = clients.TokenRequest(
        authorization=request.headers.get("authorization", ""),
        grant_type=grant_type,
        client_id=client_id,
        client_secret=client_secret,
        code=code,
        refresh_token=refresh_token,
        redirect_uri=redirect_uri,
        code_verifier=code_verifier,
    )
    try:
        body, request.state.owner = clients.issue_tokens(
            context.sessions, context.settings.runtime, form
        )
    except OAuthError as exc:
        request.state.owner = exc.owner  # counted for the biller or app it belongs to
        raise
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
    authorization = request.headers.get("authorization", "")
    app = clients.authenticate_client(session, authorization, client_id, client_secret)
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


@router.post("/authorize", operation_id="oauth.authorize", summary="Authorize an app")
def authorize(
    body: AuthorizeRequest, principal: BillerDep, session: SessionDep, context: ContextDep
) -> dict[str, Any]:
    """The signed-in biller authorizes an app: a code bound to ``redirectUri`` [I]."""
    app = clients.find_app_for_redirect(session, body.client_id, body.redirect_uri)
    config = state.runtime_config(session, context.settings.runtime)
    clients.check_pkce_method(body.code_challenge_method)
    code = tokens.issue_code(
        session,
        app=app,
        biller_id=str(principal.biller_id),
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
        "redirectUri": clients.redirect_with(
            body.redirect_uri, {"code": code, "state": body.state}
        ),
    }


@router.get(
    "/authorization",
    operation_id="oauth.get_authorization",
    summary="Authorization details of an app",
)
def get_authorization(
    biller_id: BillerId,
    session: SessionDep,
    client_id: Annotated[str, Query(alias="clientId", min_length=1)],
) -> dict[str, Any]:
    """Whether the caller's biller has authorized the app, and since when [I]."""
    return clients.authorization_details(session, client_id, biller_id)
