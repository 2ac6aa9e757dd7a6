"""``/_sandbox``: the admin API that tests and the demo use to set the sandbox up and observe it.

JSON, no authentication, loopback clients only unless the sandbox was started to allow others.
Nothing here is part of the contract.
"""

from __future__ import annotations

from datetime import UTC, date, datetime, time, timedelta
from typing import Any

from fastapi import APIRouter, Request, Response
from pydantic import BaseModel, ConfigDict, Field, ValidationError

from sandbox.core import state
from sandbox.core.db import clear_all, session_scope
from sandbox.core.deps import AdminGuard, ContextDep, SessionDep
from sandbox.core.errors import VALIDATION_ERROR, ApiError
from sandbox.core.timefmt import iso
from sandbox.oauth import billers, clients, tokens
from sandbox.simulation import clock as simulation
from sandbox.simulation.seed import seed_demo

router = APIRouter(prefix="/_sandbox", dependencies=[AdminGuard], include_in_schema=False)


class AppCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    name: str = Field(min_length=1, max_length=255)
    redirect_uri: str | None = Field(None, alias="redirectUri")


@router.post("/apps", status_code=201)
def create_app(body: AppCreate, session: SessionDep) -> dict[str, str]:
    """Register an app; the client secret is shown in this answer only."""
    app, secret = tokens.create_app(
        session, name=body.name, redirect_uri=body.redirect_uri, now=state.now(session)
    )
    return {
        "clientId": app.client_id,
        "clientSecret": secret,
        "redirectUri": app.redirect_uri,
        "name": app.name,
    }


class BillerCreate(BaseModel):
    """``name`` plus any editable biller field (``billers.BillerDocument``)."""

    model_config = ConfigDict(extra="allow")
    name: str = Field(min_length=1, max_length=255)


@router.post("/billers", status_code=201)
def create_biller(body: BillerCreate, session: SessionDep) -> dict[str, str]:
    biller = billers.create_biller(session, body.name, body.model_extra or {})
    return {"billerId": biller.id}


class CodeCreate(BaseModel):
    model_config = ConfigDict(extra="forbid")
    biller_id: str = Field(alias="billerId")
    read_only: bool = Field(False, alias="readOnly")
    redirect_uri: str | None = Field(None, alias="redirectUri")


@router.post("/apps/{client_id}/authorization_codes", status_code=201)
def create_authorization_code(
    client_id: str, body: CodeCreate, session: SessionDep, context: ContextDep
) -> dict[str, Any]:
    """What the consent page would hand over: a code for ``billerId`` (no redirect_uri bound
    unless ``redirectUri`` is given)."""
    app = clients.get_app(session, client_id)
    billers.get_biller(session, body.biller_id)
    if body.redirect_uri is not None and not tokens.is_allowed_redirect(app, body.redirect_uri):
        raise ApiError(
            422, VALIDATION_ERROR, "redirectUri not allowed for this app", field="redirectUri"
        )
    config = state.runtime_config(session, context.settings.runtime)
    code = tokens.issue_code(
        session,
        app=app,
        biller_id=body.biller_id,
        redirect_uri=body.redirect_uri,
        scope=None,
        read_only=body.read_only,
        code_challenge=None,
        code_challenge_method=None,
        now=state.now(session),
        config=config,
    )
    return {"code": code, "expiresIn": config.code_ttl}


@router.get("/stats")
def read_stats(
    session: SessionDep,
    context: ContextDep,
    billerId: str | None = None,  # noqa: N803
) -> dict[str, Any]:
    """Counters per biller (and per app for platform calls); ``?billerId=`` narrows to one."""
    owner = f"biller:{billerId}" if billerId else None
    return context.request_counts.read(session, owner)


@router.get("/config")
def read_config(session: SessionDep, context: ContextDep) -> dict[str, Any]:
    return state.runtime_config(session, context.settings.runtime).model_dump(by_alias=True)


@router.post("/config")
def update_config(body: dict[str, Any], session: SessionDep, context: ContextDep) -> dict[str, Any]:
    """Change token lifetimes or the refresh-reuse policy while the sandbox runs."""
    try:
        config = state.update_runtime_config(session, context.settings.runtime, body)
    except ValidationError as exc:
        first = exc.errors()[0]
        field = ".".join(str(part) for part in first["loc"])
        raise ApiError(422, VALIDATION_ERROR, first["msg"], field=field) from exc
    return config.model_dump(by_alias=True)


@router.get("/clock")
def read_clock(session: SessionDep) -> dict[str, Any]:
    offset: timedelta = state.clock_offset(session)
    return {"now": iso(state.now(session)), "offsetSeconds": offset.total_seconds()}


class ClockAdvance(BaseModel):
    """Move the sandbox's clock forward by days and/or seconds, or to a date (UTC midnight)."""

    model_config = ConfigDict(extra="forbid")
    # Every day crossed is simulated; ten years in one call is plenty for any test or demo.
    days: float = Field(0, ge=0, le=3660)
    seconds: float = Field(0, ge=0)
    until: date | None = None


@router.post("/clock/advance")
def advance_clock(body: ClockAdvance, context: ContextDep) -> dict[str, Any]:
    """The clock only moves forward; every calendar day crossed is simulated in order."""
    until = datetime.combine(body.until, time.min, tzinfo=UTC) if body.until else None
    try:
        simulation.advance(
            context.sessions, by=timedelta(days=body.days, seconds=body.seconds), until=until
        )
    except simulation.ClockAdvanceRefused as exc:
        raise ApiError(422, VALIDATION_ERROR, str(exc), field="until") from exc
    with session_scope(context.sessions) as session:
        return {
            "now": iso(state.now(session)),
            "offsetSeconds": state.clock_offset(session).total_seconds(),
        }


class SeedRequest(BaseModel):
    model_config = ConfigDict(extra="forbid", populate_by_name=True)
    billers: int = Field(2, ge=1, le=20)
    customers: int = Field(6, ge=1, le=200)
    seed: int = 42
    # Pins the clock of a sandbox whose clock has not started yet, like --clock-start.
    clock_start: date | None = Field(None, alias="clockStart")


@router.post("/seed", status_code=201)
def seed(body: SeedRequest, context: ContextDep) -> dict[str, Any]:
    """Demo data: an app (its secret is in this answer) and billers with customers, mandates,
    catalogues, invoices and payment requests across statuses, and recurring schedules."""
    if body.clock_start is not None:
        with session_scope(context.sessions) as session:
            if state.clock_is_set(session):
                raise ApiError(
                    422,
                    VALIDATION_ERROR,
                    "the clock has started already: reset the sandbox first",
                    field="clockStart",
                )
        simulation.pin_clock(context.sessions, body.clock_start)
    with session_scope(context.sessions) as session:
        return seed_demo(session, billers=body.billers, customers=body.customers, seed=body.seed)


@router.post("/reset", status_code=204)
def reset(context: ContextDep, request: Request) -> Response:
    """Forget everything: apps, billers, tokens, counters, config overrides, the clock offset;
    fault injection goes back to what the sandbox was started with."""
    with context.request_counts.reset():
        clear_all(context.sessions.kw["bind"])
    request.app.state.faults.configure(context.settings.faults)
    return Response(status_code=204)
