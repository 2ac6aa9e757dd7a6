"""``billops template``: starter files finance teams fill in."""

from __future__ import annotations

import typer

app = typer.Typer(help="Write starter files finance teams fill in.", no_args_is_help=True)
