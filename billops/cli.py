"""The ``billops`` command line.

The sandbox is imported lazily, inside its commands: no billops job needs it, and importing it
costs FastAPI and uvicorn start-up for nothing.
"""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated, Any

import typer

from billops import auth_cli, deploy_cli, ledger_cli, run_cli, setup_cli, template_cli, undo_cli
from billops.settings import BillopsSettings

app = typer.Typer(
    help="Billing operations on the invoicing and payment-collection service.",
    no_args_is_help=True,
    # Tracebacks must never print local variables: they may hold tokens and client secrets.
    pretty_exceptions_show_locals=False,
)
sandbox_app = typer.Typer(
    help="A local implementation of the service, for demos and tests.", no_args_is_help=True
)
app.add_typer(sandbox_app, name="sandbox")
app.add_typer(auth_cli.app, name="auth")
app.command("setup")(setup_cli.setup)
app.add_typer(ledger_cli.db_app, name="db")
app.add_typer(ledger_cli.ledger_app, name="ledger")


def _import_resolver(block: str, ledger: Any) -> Any:
    """``billops ledger resolve`` settles bulk imports by asking the service (loaded lazily)."""
    from tasks.import_resolution import import_resolver

    return import_resolver(block, ledger)


ledger_cli.set_resolver_factory(_import_resolver)
app.add_typer(template_cli.app, name="template")
app.add_typer(run_cli.app, name="run")
app.command("undo-import")(undo_cli.undo_import_command)
app.command("deploy")(deploy_cli.deploy_command)
app.command("ui")(deploy_cli.ui_command)


@app.command("demo")
def demo(
    folder: Annotated[
        Path | None,
        typer.Option(help="Where the demo keeps everything [default: $BILLOPS_HOME/demo]."),
    ] = None,
) -> None:
    """The main job on a fresh machine: sandbox, login, import with bad rows, nightly, reports."""
    from billops.demo import run_in_fresh_interpreter

    target = (folder or BillopsSettings().home / "demo").resolve()
    raise typer.Exit(run_in_fresh_interpreter(target))


@sandbox_app.command("serve")
def sandbox_serve(
    host: Annotated[str, typer.Option(help="Interface to listen on.")] = "127.0.0.1",
    port: Annotated[int, typer.Option(help="Port to listen on; 0 picks a free one.")] = 8765,
    db: Annotated[
        str | None,
        typer.Option(
            help="SQLAlchemy URL of the sandbox's state [default: $BILLOPS_HOME/sandbox.db]."
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


if __name__ == "__main__":
    app()
