"""``billops sandbox serve|login``: the local implementation of the service, and a one-command
login to one of its demo billers.

The sandbox is imported lazily, inside the commands: no billops job needs it, and importing it
costs FastAPI and uvicorn start-up for nothing.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated

import typer

app = typer.Typer(
    help="A local implementation of the service, for demos and tests.", no_args_is_help=True
)
DEFAULT_SANDBOX_URL = "http://127.0.0.1:8765"


@app.command("serve")
def sandbox_serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[
        int, typer.Option(min=0, max=65535, help="Port to listen on; 0 picks a free one.")
    ] = 8765,
    db: Annotated[
        str | None,
        typer.Option(
            help="SQLAlchemy URL of the sandbox's state \\[default: $BILLOPS_HOME/sandbox.db]."
        ),
    ] = None,
    access_token_ttl: Annotated[
        int, typer.Option(min=1, help="Biller access-token lifetime, seconds.")
    ] = 86400,
    platform_token_ttl: Annotated[
        int, typer.Option(min=1, help="Platform (client-credentials) token lifetime, seconds.")
    ] = 3600,
    code_ttl: Annotated[
        int, typer.Option(min=1, help="Authorization-code lifetime, seconds.")
    ] = 600,
    allow_remote_admin: Annotated[
        bool, typer.Option(help="Let non-loopback clients use the unauthenticated /_sandbox API.")
    ] = False,
    clock_start: Annotated[
        datetime | None,
        typer.Option(
            formats=["%Y-%m-%d"],
            help="Start a new sandbox's clock on this date (YYYY-MM-DD) so runs are reproducible.",
        ),
    ] = None,
    seed_demo: Annotated[
        bool,
        typer.Option(
            help="Create demo data first (an app, 2 billers with customers, invoices, payment "
            "requests); the app's credentials go to $BILLOPS_HOME/sandbox-demo.json."
        ),
    ] = False,
    faults: Annotated[
        str,
        typer.Option(
            help="Inject faults into /api (off by default), e.g. 'latency=50ms,jitter=10ms,"
            "error_rate=0.1,rate_limit=0.05,retry_after=1,drop_after_commit=0.05,seed=7' "
            "(also error_status=500|503, path_prefix=/api/..., method=POST)."
        ),
    ] = "",
) -> None:
    """Serve the sandbox until SIGTERM or Ctrl-C. Prints one line: 'sandbox ready: URL'."""
    from billops.settings import BillopsSettings
    from sandbox.config import RuntimeConfig, SandboxSettings
    from sandbox.faults import FaultSpecError, parse_faults
    from sandbox.serve import serve

    try:
        fault_plan = parse_faults(faults)
    except FaultSpecError as exc:
        raise typer.BadParameter(str(exc), param_hint="'--faults'") from None
    settings = BillopsSettings()
    if db is None:
        db = settings.sandbox_database_url
    _check_database_url(db)
    settings.home.mkdir(parents=True, exist_ok=True)
    serve(
        SandboxSettings(
            host=host,
            port=port,
            database_url=db,
            admin_allow_remote=allow_remote_admin,
            clock_start=clock_start.date() if clock_start else None,
            faults=fault_plan,
            runtime=RuntimeConfig(
                access_token_ttl=access_token_ttl,
                platform_token_ttl=platform_token_ttl,
                code_ttl=code_ttl,
            ),
        ),
        demo_credentials=settings.home / "sandbox-demo.json" if seed_demo else None,
    )


@app.command("login")
def sandbox_login(
    biller: Annotated[
        str, typer.Option(help="The demo biller: its name (as printed by --seed-demo) or id.")
    ],
    url: Annotated[str, typer.Option(help="The sandbox's root URL.")] = DEFAULT_SANDBOX_URL,
    block: Annotated[
        str | None,
        typer.Option(
            help="Name of the credential block to save \\[default: from the biller name]."
        ),
    ] = None,
    credentials: Annotated[
        Path | None,
        typer.Option(
            help="What `billops sandbox serve --seed-demo` wrote "
            "\\[default: $BILLOPS_HOME/sandbox-demo.json]."
        ),
    ] = None,
) -> None:
    """Log in to a demo biller of a running sandbox in one step (no secret to copy).

    Reads the app's credentials from sandbox-demo.json, approves the sandbox's consent page for
    BILLER and saves the credential block, ready for `billops run ... --biller BLOCK`.
    Exit codes: 0 ok, 1 failed, 2 usage error.
    """
    from billops.sandbox_login import (
        DEMO_FILE_NAME,
        SandboxLoginError,
        block_name_for,
        login_to_sandbox,
        read_demo_app,
    )
    from billops.settings import BillopsSettings

    root = url.rstrip("/")
    try:
        demo = read_demo_app(credentials or BillopsSettings().home / DEMO_FILE_NAME)
        chosen = demo.find_biller(biller)
    except SandboxLoginError as exc:
        typer.secho(f"billops sandbox login: {exc}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1) from None
    name = block or block_name_for(str(chosen["name"]))
    login_to_sandbox(root, demo, str(chosen["billerId"]), name)
    from billops.deploy_cli import offer_biller_choices

    offer_biller_choices()  # the deployments' run forms list the new block
    typer.echo(f"logged in to {chosen['name']} ({chosen['billerId']}) → credential block {name!r}")
    typer.echo(f"  try: billops run import-payment-requests FILE --biller {name}")


def _check_database_url(url: str) -> None:
    """A ``--db`` SQLAlchemy can open, or a usage error that says what is wrong with it (the
    server would otherwise die on its first query with SQLAlchemy's traceback)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError, NoSuchModuleError

    try:
        make_url(url).get_dialect()
    except (ArgumentError, NoSuchModuleError, ValueError):
        hint = "e.g. sqlite:///path/to/sandbox.db or postgresql://user@host/db"
        raise typer.BadParameter(
            f"not a database URL SQLAlchemy can open ({hint})", param_hint="'--db'"
        ) from None
