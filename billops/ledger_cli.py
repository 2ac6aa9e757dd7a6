"""``billops db`` (migrations) and ``billops ledger`` (operations left unsettled)."""

from __future__ import annotations

import typer

db_app = typer.Typer(
    help="The ledger database: create or upgrade its schema.", no_args_is_help=True
)
ledger_app = typer.Typer(
    help="What billops has sent to the service, and what is still unsettled.", no_args_is_help=True
)
