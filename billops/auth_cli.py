"""``billops auth``: log in (authorization-code flow), status, recover, revoke, unlock.

Prefect, the blocks and the client are imported inside the commands: ``billops --help`` must stay
fast. No command ever prints a token or the client secret; the secret comes from the
``BILLOPS_CLIENT_SECRET`` environment variable or a hidden prompt, never from a flag (flags end up
in shell history and process lists).
"""

from __future__ import annotations

import os
import webbrowser
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal, NoReturn

import typer

if TYPE_CHECKING:
    from blocks import BillerCredentials
    from blocks.login import LoginRequest

app = typer.Typer(
    help="Log in to the service, and inspect, recover, revoke or unlock a credential block.",
    no_args_is_help=True,
)

SECRET_ENV = "BILLOPS_CLIENT_SECRET"
BlockOption = Annotated[str, typer.Option("--block", help="Name of the credential block.")]


def _fail(message: str, code: int = 1) -> NoReturn:
    typer.echo(f"error: {message}", err=True)
    raise typer.Exit(code)


def _load(name: str) -> BillerCredentials:
    from blocks.admin import find_block

    block = find_block(name)
    if block is None:
        _fail(
            f"no credential block named {name!r}; create it with: billops auth login --block {name}"
        )
    return block


def _when(value: datetime | None) -> str:
    if value is None:
        return "-"
    left = (value - datetime.now(UTC)).total_seconds()
    tense = f"in {left:.0f} s" if left >= 0 else f"{-left:.0f} s ago"
    return f"{value.isoformat(timespec='seconds')} ({tense})"


def _settings(existing: BillerCredentials | None, options: dict[str, str | None]) -> dict[str, Any]:
    """The block's non-token fields: the options given, else the existing block's values."""
    from blocks._common import CredentialsConfigError, resolve_base_url, sandbox_login_url

    keys = ("environment", "base_url", "login_url", "redirect_uri", "client_id")
    merged: dict[str, Any] = {
        key: options[key] if options[key] is not None else getattr(existing, key, None)
        for key in keys
    }
    merged["environment"] = merged["environment"] or "production"
    if existing is not None and options["environment"] not in (None, existing.environment):
        # Another environment: the old block's host and login page do not apply.
        merged.update({k: options[k] for k in ("base_url", "login_url", "redirect_uri")})
    try:
        merged["base_url"] = resolve_base_url(merged["environment"], merged["base_url"])
    except CredentialsConfigError as exc:
        _fail(f"{exc} (--base-url)", 2)
    if merged["login_url"] is None and merged["environment"] == "sandbox":
        merged["login_url"] = sandbox_login_url(merged["base_url"])
    if not merged["client_id"]:
        _fail("--client-id is required (the OAuth client id of your app)", 2)
    if not merged["login_url"]:
        _fail(
            f"--login-url is required for {merged['environment']}: the service's public docs do "
            "not confirm its authorize page, so it must be given",
            2,
        )
    secret = os.environ.get(SECRET_ENV) or (
        existing.client_secret.get_secret_value() if existing is not None else None
    )
    if not secret:
        secret = typer.prompt("Client secret", hide_input=True)
    merged["client_secret"] = secret
    return merged


def _show(request: LoginRequest, *, open_browser: bool) -> None:
    typer.echo(f"Open this address to log in:\n  {request.authorize_url}")
    if open_browser:
        try:
            webbrowser.open(request.authorize_url)
        except webbrowser.Error:
            typer.echo("(could not open a browser: open the address yourself)")


def _obtain_code(
    settings: dict[str, Any], *, paste: bool, pkce: bool, open_browser: bool, wait: float
) -> tuple[str, LoginRequest]:
    """The authorization code, from the loopback listener or pasted, with its login request."""
    from blocks.login import (
        code_from_redirect,
        is_loopback_uri,
        loopback_listener,
        parse_pasted,
        prepare_login,
    )

    redirect = settings["redirect_uri"]
    if not paste and (redirect is None or is_loopback_uri(redirect)):
        if redirect is None and settings["environment"] != "sandbox":
            _fail("--redirect-uri is required: the one registered with the service", 2)
        with loopback_listener(redirect) as listener:
            request = prepare_login(
                settings["login_url"],
                client_id=settings["client_id"],
                redirect_uri=listener.redirect_uri,
                pkce=pkce,
            )
            _show(request, open_browser=open_browser)
            typer.echo(f"Waiting for the redirect on {listener.redirect_uri} ...")
            return code_from_redirect(listener.wait(wait), request.state), request
    if redirect is None:
        _fail("--redirect-uri is required with --paste (the one registered for your app)", 2)
    request = prepare_login(
        settings["login_url"], client_id=settings["client_id"], redirect_uri=redirect, pkce=pkce
    )
    _show(request, open_browser=open_browser)
    query, has_state = parse_pasted(
        typer.prompt("Paste the address you were redirected to (or the code)")
    )
    return code_from_redirect(query, request.state if has_state else None), request


@app.command("login")
def login(
    block: BlockOption,
    environment: Annotated[
        Literal["production", "staging", "sandbox"] | None,
        typer.Option(help="Which service \\[default: the block's, else production]."),
    ] = None,
    base_url: Annotated[
        str | None, typer.Option(help="API root ending in /api (required for a sandbox).")
    ] = None,
    login_url: Annotated[
        str | None, typer.Option(help="The authorize page (a sandbox's is <root>/auth/login).")
    ] = None,
    client_id: Annotated[str | None, typer.Option(help="OAuth client id of the app.")] = None,
    redirect_uri: Annotated[
        str | None,
        typer.Option(
            help="Registered redirect URI; a loopback one is listened on. Default on a "
            "sandbox: a free loopback port."
        ),
    ] = None,
    no_browser: Annotated[
        bool, typer.Option("--no-browser", help="Only print the address.")
    ] = False,
    paste: Annotated[
        bool, typer.Option("--paste", help="Paste the redirect address instead of listening.")
    ] = False,
    pkce: Annotated[bool, typer.Option(help="Send a PKCE challenge (RFC 7636).")] = True,
    wait: Annotated[float, typer.Option(min=1, help="Seconds to wait for the redirect.")] = 300.0,
) -> None:
    """Connect a biller: the authorization-code flow, then save the credential block.

    The client secret is read from BILLOPS_CLIENT_SECRET, the existing block, or a prompt.
    """
    from billing_api import BillingApiError, OAuthError
    from blocks.admin import find_block, save_login
    from blocks.login import LoginError

    existing = find_block(block)
    options = {
        "environment": environment,
        "base_url": base_url,
        "login_url": login_url,
        "redirect_uri": redirect_uri,
        "client_id": client_id,
    }
    settings = _settings(existing, options)
    try:
        code, request = _obtain_code(
            settings, paste=paste, pkce=pkce, open_browser=not no_browser, wait=wait
        )
    except LoginError as exc:
        _fail(f"login failed: {exc}")
    try:
        response = _oauth(settings).exchange_code(
            code, redirect_uri=request.redirect_uri, code_verifier=request.code_verifier
        )
    except OAuthError as exc:
        _fail(f"login failed: the service refused the code: {exc}")
    try:
        saved = save_login(block, settings, response.to_token_set(0))
    except (BillingApiError, OSError, ValueError) as exc:
        # The new tokens were never stored: nothing is half-written, the login is simply redone.
        _fail(f"the login could not be saved ({exc}); fix that, then log in again")
    typer.echo(
        f"Logged in: block {block!r} saved ({saved.environment}, {saved.api_url}, "
        f"rotation {saved.rotation}). Check it with: billops auth status --block {block}"
    )
    _offer_in_run_forms(block)


def _offer_in_run_forms(block: str) -> None:
    """List the new block in the deployments' run forms (they offer only the blocks that existed
    when their schema was saved). The login itself is done: a failure here is only a hint."""
    from billops.deploy_cli import offer_biller_choices

    try:
        offer_biller_choices()
    except Exception as exc:  # the credential is saved; the form's list is a convenience
        typer.echo(
            f"(the run forms do not list {block!r} yet: {type(exc).__name__}; "
            "`billops deploy` refreshes them)"
        )


def _oauth(settings: dict[str, Any]) -> Any:
    from billing_api import ClientCredentials, OAuthClient

    return OAuthClient(
        settings["base_url"], ClientCredentials(settings["client_id"], settings["client_secret"])
    )


@app.command("status")
def status(block: BlockOption) -> None:
    """Which biller the block opens (GET /biller), token expiry, rotation, last refresh, the
    refresh lock and the recovery journal.

    Exits 1 when the credential is dead (the service refuses it) or its store fails.
    """
    from billing_api import ApiError, BillingApiError, ReauthorizationRequired, TokenStoreError

    credentials = _load(block)
    problem: str | None = None
    biller: Any = None
    try:
        client = credentials.get_client()
        with client:
            biller = client.biller.retrieve()
    except ReauthorizationRequired as exc:
        problem = f"DEAD - {exc}"
    except TokenStoreError as exc:
        problem = f"ERROR - the token store failed: {exc}"
    except ApiError as exc:
        problem = f"DEAD - the service refused the credential: {exc}"
    except BillingApiError as exc:
        problem = f"ERROR - could not reach the service: {exc}"
    typer.echo(f"block:          {block} ({credentials.environment}, {credentials.api_url})")
    if biller is not None:
        name = getattr(biller, "name", None) or getattr(biller, "legal_name", None) or "-"
        typer.echo(f"biller:         {getattr(biller, 'id', '-')} ({name})")
    try:
        current = credentials.read()
    except TokenStoreError as exc:
        typer.echo(f"status:         ERROR - {exc}")
        raise typer.Exit(1) from None
    typer.echo(f"access token:   expires {_when(current.access_token_expires_at)}")
    typer.echo(f"rotation:       {current.rotation}")
    typer.echo(f"last refreshed: {_when(current.last_refreshed_at)}")
    _show_lock_and_journal(block, current.rotation)
    if problem is not None:
        typer.echo(f"status:         {problem}")
        raise typer.Exit(1)
    typer.echo("status:         ok")


def _show_lock_and_journal(block: str, rotation: int) -> None:
    from billing_api import TokenStoreError
    from blocks.admin import lock_holder, lock_name_of, recovery_state

    try:
        description, holder = lock_holder(lock_name_of(block))
        typer.echo(f"refresh lock:   {'free' if holder is None else f'held by {holder}'}")
        typer.echo(f"                ({description})")
    except TokenStoreError as exc:
        typer.echo(f"refresh lock:   unknown - {exc}")
    try:
        state = recovery_state(block)
    except (OSError, ValueError) as exc:
        typer.echo(f"recovery:       journal unreadable - {exc}")
        return
    if state.tokens is not None and state.tokens.rotation > rotation:
        typer.echo(
            f"recovery:       rotation {state.tokens.rotation} is in the journal, not yet in the "
            "block (the next refresh saves it; no worker running? billops auth recover)"
        )
    elif state.intent is not None:
        typer.echo(f"recovery:       {state.intent} has not finished")
    else:
        typer.echo("recovery:       nothing pending")


@app.command("recover")
def recover(
    block: BlockOption,
    file: Annotated[
        Path | None,
        typer.Option(help="A recovery file \\[default: the block's journal under $BILLOPS_HOME]."),
    ] = None,
    force: Annotated[
        bool, typer.Option("--force", help="Restore even if the block has moved on since.")
    ] = False,
) -> None:
    """Save the token set a worker left in the recovery journal into the block (when no worker
    runs to do it), then remove the record."""
    from blocks.admin import RecoveryError, restore_recovery

    credentials = _load(block)
    try:
        rotation = restore_recovery(credentials, file, force=force)
    except RecoveryError as exc:
        _fail(str(exc))
    where = str(file) if file is not None else "the recovery journal"
    typer.echo(
        f"Restored rotation {rotation} from {where} into block {block!r}; the record was removed"
    )


@app.command("unlock")
def unlock(
    block: Annotated[
        str | None, typer.Option("--block", help="Name of the biller credential block.")
    ] = None,
    platform_block: Annotated[
        str | None, typer.Option("--platform-block", help="Name of a platform credential block.")
    ] = None,
) -> None:
    """Free a credential's refresh lock whose holder is gone; refuses while the holder lives.

    Exits 0 when the lock is free (or was freed), 1 when it is held by a live or unknown holder.
    """
    from blocks.admin import lock_name_of
    from blocks.admin import unlock as unlock_lock

    if (block is None) == (platform_block is None):
        _fail("give exactly one of --block NAME or --platform-block NAME", 2)
    name = block if block is not None else platform_block
    assert name is not None
    report = unlock_lock(lock_name_of(name, platform=platform_block is not None))
    typer.echo(f"{report.description}: {report.reason}")
    if report.outcome == "refused":
        raise typer.Exit(1)
    typer.echo("free" if report.outcome == "free" else "freed")


@app.command("revoke")
def revoke(block: BlockOption) -> None:
    """Revoke the block's refresh token at the service and drop its cached access token."""
    from billing_api import OAuthError
    from blocks.admin import forget_tokens

    credentials = _load(block)
    try:
        credentials.get_oauth_client().revoke(
            credentials.read().refresh_token, token_type_hint="refresh_token"
        )
    except OAuthError as exc:
        _fail(f"the service refused the revocation: {exc}")
    forget_tokens(credentials)
    typer.echo(
        f"Revoked the refresh token of block {block!r}. "
        f"Connect again with: billops auth login --block {block}"
    )
