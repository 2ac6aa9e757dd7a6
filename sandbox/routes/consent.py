"""The consent page at ``/auth/login`` (the real service's login path, docs/service.md §2.6).

A person picks the biller to connect and approves or denies; the browser is then redirected to
``redirect_uri?code=...&state=...`` (or ``?error=access_denied&state=...``). An unknown client or
a redirect URI that is not allowed is shown as an error page and never redirected to, as RFC 6749
§4.1.2.1 requires.
"""

from __future__ import annotations

from html import escape
from typing import Annotated

from fastapi import APIRouter, Form, Query
from fastapi.responses import HTMLResponse, RedirectResponse

from sandbox.core import state
from sandbox.core.deps import ContextDep, SessionDep
from sandbox.oauth import clients, tokens
from sandbox.oauth.clients import redirect_with
from sandbox.pages import html

router = APIRouter(prefix="/auth", include_in_schema=False)


def _error_page(message: str) -> HTMLResponse:
    return html.page("Cannot connect", f"<p class='error' role='alert'>{escape(message)}</p>", 400)


@router.get("/login", response_class=HTMLResponse, response_model=None)
def consent_page(
    session: SessionDep,
    client_id: Annotated[str, Query()] = "",
    redirect_uri: Annotated[str | None, Query()] = None,
    state_: Annotated[str | None, Query(alias="state")] = None,
    scope: Annotated[str | None, Query()] = None,
    response_type: Annotated[str, Query()] = "code",
    code_challenge: Annotated[str | None, Query()] = None,
    code_challenge_method: Annotated[str | None, Query()] = None,
    biller_id: Annotated[str | None, Query()] = None,
) -> HTMLResponse | RedirectResponse:
    app = clients.consent_client(session, client_id, redirect_uri)
    if isinstance(app, str):
        return _error_page(app)
    target = redirect_uri or app.redirect_uri
    if response_type != "code":
        return RedirectResponse(
            redirect_with(target, {"error": "unsupported_response_type", "state": state_}), 303
        )
    billers = clients.consent_billers(session)
    if not billers:
        return html.page(
            "Connect", "<p>No billers yet: create one with POST /_sandbox/billers.</p>"
        )
    choices = "".join(
        f"<div><label><input type='radio' name='biller_id' value='{escape(b.id, quote=True)}'"
        f"{' checked' if (b.id == biller_id or (biller_id is None and i == 0)) else ''}> "
        f"{escape(str(b.document.get('name', b.id)))}</label></div>"
        for i, b in enumerate(billers)
    )
    hidden = "".join(
        html.hidden(name, value)
        for name, value in [
            ("client_id", client_id),
            ("redirect_uri", redirect_uri),
            ("state", state_),
            ("scope", scope),
            ("code_challenge", code_challenge),
            ("code_challenge_method", code_challenge_method),
        ]
    )
    form = (
        f"<p><strong>{escape(app.name)}</strong> asks to access your billing data.</p>"
        f"<form method='post' action='/auth/login'>{hidden}"
        f"<fieldset><legend>Biller to connect</legend>{choices}</fieldset>"
        "<p><label><input type='checkbox' name='read_only' value='true'> Read-only access"
        "</label></p>"
        "<button type='submit' name='decision' value='approve'>Approve</button>"
        "<button type='submit' name='decision' value='deny'>Deny</button></form>"
    )
    return html.page(f"Connect {app.name}", form)


FormText = Annotated[str | None, Form()]


@router.post("/login", response_model=None)
def consent_decision(
    session: SessionDep,
    context: ContextDep,
    client_id: Annotated[str, Form()] = "",
    decision: Annotated[str, Form()] = "",
    biller_id: FormText = None,
    redirect_uri: FormText = None,
    state_: Annotated[str | None, Form(alias="state")] = None,
    scope: FormText = None,
    code_challenge: FormText = None,
    code_challenge_method: FormText = None,
    read_only: FormText = None,
) -> HTMLResponse | RedirectResponse:
    app = clients.consent_client(session, client_id, redirect_uri)
    if isinstance(app, str):
        return _error_page(app)
    target = redirect_uri or app.redirect_uri
    if decision != "approve":
        return RedirectResponse(
            redirect_with(target, {"error": "access_denied", "state": state_}), 303
        )
    chosen = clients.chosen_biller(session, biller_id)
    if chosen is None:
        return _error_page("Choose the biller to connect.")
    if code_challenge and code_challenge_method not in clients.PKCE_METHODS:
        return _error_page("Unsupported code_challenge_method (use S256 or plain).")
    code = tokens.issue_code(
        session,
        app=app,
        biller_id=chosen,
        redirect_uri=redirect_uri,
        scope=scope,
        read_only=read_only == "true",
        code_challenge=code_challenge,
        code_challenge_method=code_challenge_method,
        now=state.now(session),
        config=state.runtime_config(session, context.settings.runtime),
    )
    return RedirectResponse(redirect_with(target, {"code": code, "state": state_}), 303)
