"""``billops undo-import RUN``: void the payment requests an import run created (with approval)."""

from __future__ import annotations

from typing import Annotated

import typer
from rich.console import Console

console = Console()


def undo_import_command(
    run_id: Annotated[str, typer.Argument(help="The import's run id (printed in its summary).")],
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
    approve_as: Annotated[
        str | None, typer.Option(help="Your name: voiding needs an approval on record.")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why, recorded with the approval.")] = None,
    apply: Annotated[bool, typer.Option("--apply", help="Void them (default: list only).")] = False,
) -> None:
    """Void the payment requests an import run created; lists them unless --apply."""
    if apply and not (approve_as and reason):
        console.print(
            "[red]refused:[/red] voiding payment requests needs an approval: "
            "--approve-as NAME --reason TEXT"
        )
        raise typer.Exit(1)
    from blocks import BillerCredentials
    from tasks.biller_session import open_ledger
    from tasks.undo_import import undo_import

    ledger = open_ledger()
    client = BillerCredentials.load_named(biller).get_client()
    try:
        results = undo_import(
            client,
            ledger,
            run_id=run_id,
            approver=approve_as or "",
            reason=reason or "",
            dry_run=not apply,
        )
    finally:
        client.close()
        ledger.close()
    if not results:
        console.print(f"run {run_id} created no payment requests (nothing to undo)")
        return
    for r in results:
        detail = f"  {r.detail}" if r.detail else ""
        console.print(f"  {r.outcome:<11} {r.payment_request_id}  {r.external_id}{detail}")
    not_voided = sum(r.outcome == "NOT_VOIDED" for r in results)
    console.print(f"{len(results)} payment request(s); {not_voided} could not be voided")
    raise typer.Exit(1 if not_voided else 0)
