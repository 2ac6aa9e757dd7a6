"""The ``billops`` command line.

Prefect's settings are prepared before anything imports Prefect (:mod:`billops.prefect_env`: no
analytics, the persistent server when it is up). Command modules keep their heavy imports inside
the commands, and the heaviest sub-applications load only when used (``LAZY_GROUPS`` in
:mod:`billops.cli_errors`), so a read-only command answers quickly. Errors become one line and
exit 1; ``--verbose`` shows the traceback (``docs/conventions.md`` §5 Errors, retries and exit
codes).
"""

from __future__ import annotations

import sys
from pathlib import Path
from typing import Annotated, Any

from billops.prefect_env import prepare_prefect_environment

prepare_prefect_environment()

import typer  # noqa: E402 - after the environment Prefect reads at import

from billops import (  # noqa: E402
    audit_cli,
    auth_cli,
    delinquency_cli,
    deploy_cli,
    inbox_cli,
    ledger_cli,
    run_cli,
    sandbox_cli,
    server_cli,
    setup_cli,
    template_cli,
    undo_cli,
)
from billops.cli_errors import BillopsGroup, set_verbose, verbose_first  # noqa: E402


class BillopsTyper(typer.Typer):
    """The root application: ``--verbose`` may come anywhere on the command line."""

    def __call__(self, *args: Any, **kwargs: Any) -> Any:
        if not args and "args" not in kwargs:
            kwargs["args"] = verbose_first(sys.argv[1:])
        return super().__call__(*args, **kwargs)


app = BillopsTyper(
    cls=BillopsGroup,
    help="Billing operations on the invoicing and payment-collection service.",
    no_args_is_help=True,
    # Tracebacks must never print local variables: they may hold tokens and client secrets.
    pretty_exceptions_show_locals=False,
)


@app.callback()
def root(
    verbose: Annotated[
        bool,
        typer.Option(
            "--verbose", help="On an error, print the full traceback (and keep Prefect's)."
        ),
    ] = False,
) -> None:
    """Billing operations on the invoicing and payment-collection service.

    Exit codes: 0 ok, 1 failed, 2 usage error, 3 finished with rejected or failed rows.
    """
    set_verbose(verbose)


app.add_typer(sandbox_cli.app, name="sandbox")
app.add_typer(server_cli.app, name="server")
app.add_typer(auth_cli.app, name="auth")
app.command("setup")(setup_cli.setup)
app.add_typer(ledger_cli.db_app, name="db")
app.add_typer(ledger_cli.ledger_app, name="ledger")
app.command("audit")(audit_cli.audit_command)


def _service_resolver(block: str, ledger: Any) -> Any:
    """``billops ledger resolve`` asks the service, by kind of operation (loaded lazily)."""
    from billops.resolvers import service_resolver

    return service_resolver(block, ledger)


ledger_cli.set_resolver_factory(_service_resolver)
app.add_typer(template_cli.app, name="template")
app.add_typer(run_cli.app, name="run")
app.add_typer(inbox_cli.app, name="inbox")
app.add_typer(delinquency_cli.policy_app, name="policy")
app.add_typer(delinquency_cli.status_app, name="delinquency")
app.command("undo-import")(undo_cli.undo_import_command)
app.command("deploy")(deploy_cli.deploy_command)
app.command("ui")(deploy_cli.ui_command)


@app.command("demo")
def demo(
    folder: Annotated[
        Path | None,
        typer.Option(help="Where the demo keeps everything \\[default: $BILLOPS_HOME/demo]."),
    ] = None,
) -> None:
    """The main job on a fresh machine: sandbox, login, import with bad rows, nightly, reports."""
    from billops.demo import run_in_fresh_interpreter
    from billops.settings import BillopsSettings

    target = (folder or BillopsSettings().home / "demo").resolve()
    if target.exists() and not target.is_dir():
        raise typer.BadParameter(f"{target} is a file, not a folder", param_hint="'--folder'")
    raise typer.Exit(run_in_fresh_interpreter(target))


if __name__ == "__main__":
    app()
