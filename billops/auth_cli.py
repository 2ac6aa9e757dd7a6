"""``billops auth``: log in (authorization-code flow), status, recover, revoke."""

from __future__ import annotations

import typer

app = typer.Typer(
    help="Log in to the service, and inspect, recover or revoke a credential block.",
    no_args_is_help=True,
)
