"""``billops template``: starter files finance teams fill in."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
from typing import Annotated
from zoneinfo import ZoneInfo

import typer

app = typer.Typer(help="Write starter files finance teams fill in.", no_args_is_help=True)
LONDON = ZoneInfo("Europe/London")
DEFAULT_PAYMENT_REQUESTS_FILE = Path("payment-requests.csv")


@app.command("payment-requests")
def payment_requests(
    path: Annotated[
        Path,
        typer.Argument(help="Where to write the file.", dir_okay=False),
    ] = DEFAULT_PAYMENT_REQUESTS_FILE,
    force: Annotated[bool, typer.Option("--force", help="Overwrite an existing file.")] = False,
) -> None:
    """A payment-request CSV to fill in: the columns billops reads and two example rows."""
    from tasks.payment_requests.template import starter_payment_request_csv

    if path.exists() and not force:
        typer.echo(
            f"{path} already exists; not overwriting it (use --force to replace it)", err=True
        )
        raise typer.Exit(1)
    content = starter_payment_request_csv(datetime.now(LONDON).date())
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(content)
    except OSError as exc:
        typer.echo(f"cannot write {path}: {exc.strerror or exc}", err=True)
        raise typer.Exit(1) from exc
    typer.echo(
        f"wrote {path}: replace the two example rows with your payment requests "
        "(customer by name, id or externalId; amounts in pounds; dates dd/mm/yyyy), then run\n"
        f"  billops run import-payment-requests {path} --biller BLOCK"
    )
