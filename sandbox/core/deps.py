"""FastAPI dependencies: the database session, the caller (biller or platform) and its biller id,
the root URL the client reached, the admin guard."""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass, field
from datetime import date, datetime
from typing import Annotated

from fastapi import Depends, Path, Query, Request
from sqlalchemy.orm import Session, sessionmaker

from sandbox.config import RuntimeConfig, SandboxSettings
from sandbox.core import state
from sandbox.core.bodies import refuse_nul
from sandbox.core.errors import forbidden, unauthorized
from sandbox.core.stats import RequestCounts
from sandbox.core.validation import QueryDate, QueryTime, multi, utc
from sandbox.oauth.tokens import Principal, authenticate_bearer

_LOOPBACK_CLIENTS = {"127.0.0.1", "::1", "localhost"}


@dataclass
class SandboxContext:
    """What every request needs, built once by ``create_app`` and kept on ``app.state``."""

    settings: SandboxSettings
    sessions: sessionmaker[Session]
    # Request counters, kept off the requests' transactions (written by a background thread).
    request_counts: RequestCounts = field(default_factory=RequestCounts)


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


def biller_id_of(principal: BillerDep) -> str:
    """The biller of a biller token (which always names one)."""
    if principal.biller_id is None:
        raise forbidden("this access token does not belong to a biller")
    return principal.biller_id


# The caller's biller (403 for platform tokens, and for read-only ones on writes).
BillerId = Annotated[str, Depends(biller_id_of)]


def root_url(request: Request) -> str:
    """The sandbox's root URL as the client reached it (payment links, mandate pages)."""
    return str(request.base_url).rstrip("/")


RootDep = Annotated[str, Depends(root_url)]


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


@dataclass(frozen=True)
class DocumentQuery:
    """The query filters the invoice and payment-request lists share (named alike there)."""

    customer_id: str | None
    external_customer_id: str | None
    statuses: list[str]
    created_start: date | None
    created_end: date | None
    updated_since: datetime | None


def document_query(
    statuses: Annotated[list[str] | None, Query()] = None,
    customer_id: Annotated[str | None, Query(alias="customerId")] = None,
    external_customer_id: Annotated[str | None, Query(alias="externalCustomerId")] = None,
    created_start: Annotated[QueryDate | None, Query(alias="createdStartDate")] = None,
    created_end: Annotated[QueryDate | None, Query(alias="createdEndDate")] = None,
    updated_since: Annotated[QueryTime | None, Query(alias="lastUpdatedStartTime")] = None,
) -> DocumentQuery:
    refuse_nul(customerId=customer_id, externalCustomerId=external_customer_id)
    return DocumentQuery(
        customer_id=customer_id,
        external_customer_id=external_customer_id,
        statuses=multi(statuses),
        created_start=created_start,
        created_end=created_end,
        updated_since=utc(updated_since),
    )


DocumentQueryDep = Annotated[DocumentQuery, Depends(document_query)]
