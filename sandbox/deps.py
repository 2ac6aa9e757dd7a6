"""FastAPI dependencies: the database session, the caller (biller or platform), the admin guard."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass
from typing import Annotated

from fastapi import Depends, Path, Request
from sqlalchemy.orm import Session, sessionmaker

from sandbox import state
from sandbox.config import RuntimeConfig, SandboxSettings
from sandbox.errors import forbidden, unauthorized
from sandbox.tokens import Principal, authenticate_bearer

_LOOPBACK_CLIENTS = {"127.0.0.1", "::1", "localhost"}


@dataclass
class SandboxContext:
    """What every request needs, built once by ``create_app`` and kept on ``app.state``."""

    settings: SandboxSettings
    sessions: sessionmaker[Session]


def get_context(request: Request) -> SandboxContext:
    context: SandboxContext = request.app.state.sandbox
    return context


ContextDep = Annotated[SandboxContext, Depends(get_context)]


def get_session(context: ContextDep) -> Iterator[Session]:
    """One transaction per request: committed when the route returns, rolled back on error."""
    with context.sessions() as session, session.begin():
        yield session


# scope="function": commit before the response is sent, so a client that acts on the answer at
# once (exchanging a code it was just given) finds the row.
SessionDep = Annotated[Session, Depends(get_session, scope="function")]


def get_runtime_config(context: ContextDep, session: SessionDep) -> RuntimeConfig:
    return state.runtime_config(session, context.settings.runtime)


RuntimeConfigDep = Annotated[RuntimeConfig, Depends(get_runtime_config)]


def get_principal(request: Request, session: SessionDep) -> Principal:
    """The caller behind ``Authorization: Bearer ...``; 401 when it is missing or not valid."""
    scheme, _, token = request.headers.get("authorization", "").partition(" ")
    if scheme.lower() != "bearer" or not token.strip():
        raise unauthorized("send an access token as 'Authorization: Bearer <token>'")
    principal = authenticate_bearer(session, token.strip(), state.now(session))
    if principal is None:
        raise unauthorized("the access token is unknown, revoked or expired")
    request.state.owner = principal.owner  # for the per-operation request counters
    return principal


def require_biller(
    request: Request, principal: Annotated[Principal, Depends(get_principal)]
) -> Principal:
    """A biller token; platform tokens only manage their own app's webhooks (403).

    A read-only biller token may only read: anything but GET answers 403.
    """
    if principal.kind != "biller":
        raise forbidden("a platform token cannot access biller data; use a biller access token")
    if principal.read_only and request.method != "GET":
        raise forbidden("this access token is read-only")
    return principal


BillerDep = Annotated[Principal, Depends(require_biller)]


def require_platform(
    client_id: Annotated[str, Path(alias="clientId")],
    principal: Annotated[Principal, Depends(get_principal)],
) -> Principal:
    """A platform (client-credentials) token of the app named in the path."""
    if principal.kind != "platform":
        raise forbidden("webhook management needs a platform token (client_credentials grant)")
    if principal.client_id != client_id:
        raise forbidden("a platform token can only manage its own app's webhooks")
    return principal


PlatformDep = Annotated[Principal, Depends(require_platform)]


def require_admin_client(request: Request, context: ContextDep) -> None:
    """The admin API has no authentication, so it answers loopback clients only by default."""
    host = request.client.host if request.client else ""
    if not context.settings.admin_allow_remote and host not in _LOOPBACK_CLIENTS:
        raise forbidden("the sandbox admin API only answers loopback clients")


AdminGuard = Depends(require_admin_client)
