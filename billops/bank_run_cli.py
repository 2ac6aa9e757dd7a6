"""``billops run import-bank-payments``: record the customer payments a bank statement shows.

Dry run unless ``--apply``; recording needs a person's approval (``--approve-as NAME --reason
TEXT``), except that ``--exact-only`` runs of a biller whose bank settings allow it
(``auto_apply_exact``) record exact, full matches on their own. Exit codes: 0 ok (dry run,
recorded, nothing to record), 1 failed (or payments still in doubt, or approval refused), 3 the
file was refused or the service refused some payments (2 is typer's usage error).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from billops.run_cli import (
    EXIT_FAILED,
    EXIT_REJECTED,
    approval_context,
    console,
    require_block,
    run_flow,
)

ExitCodes = {
    "Dry run": 0,
    "Completed": 0,
    "Nothing to record": 0,
    "Rejected": EXIT_REJECTED,
    "Completed with failures": EXIT_REJECTED,
}


def import_bank_payments_command(
    file: Annotated[
        Path, typer.Argument(exists=True, dir_okay=False, help="The statement (CSV or TXT).")
    ],
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
    apply: Annotated[
        bool, typer.Option("--apply", help="Record the payments (default: dry run).")
    ] = False,
    profile: Annotated[
        str | None, typer.Option(help="A bank profile name or YAML file (default: detected).")
    ] = None,
    on_bad_lines: Annotated[
        str, typer.Option(help="reject_file (refuse a file with a bad line) or skip.")
    ] = "reject_file",
    exact_only: Annotated[
        bool, typer.Option(help="Record only exact, full matches; the rest waits for a person.")
    ] = False,
    approve_as: Annotated[
        str | None, typer.Option(help="Your name, approving the recording (with --reason).")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why, recorded with the approval.")] = None,
) -> None:
    """Record the customer payments a bank statement shows, once each (dry run unless --apply).

    Exit codes: 0 ok, 1 failed or payments in doubt, 2 usage error, 3 file or payments refused.
    """
    if on_bad_lines not in ("reject_file", "skip"):
        raise typer.BadParameter("must be reject_file or skip", param_hint="'--on-bad-lines'")
    approval = approval_context(approve_as, reason)
    from billops.prefect_env import prepare_prefect_environment

    prepare_prefect_environment()
    require_block(biller)
    from flows.bank_payments import import_bank_payments

    mode: Literal["reject_file", "skip"] = "skip" if on_bad_lines == "skip" else "reject_file"
    with approval:
        result = run_flow(
            lambda: import_bank_payments(
                file=file.resolve(),
                biller=biller,
                dry_run=not apply,
                profile=profile or "",
                on_bad_lines=mode,
                exact_only=exact_only,
            )
        )
    print_bank_result(result)
    raise typer.Exit(ExitCodes.get(result.outcome, EXIT_FAILED))


def print_bank_result(result: Any) -> None:
    """What a person reads in the terminal: the outcome, the money, where the reports are."""
    console.print(f"[bold]{Path(result.file).name}[/bold] for {result.biller}: {result.outcome}")
    console.print(f"  run: {result.run_id}")
    console.print(f"  {result.message}")
    for line in result.summary:
        if line.startswith("| ") and not line.startswith("| money") and "---" not in line:
            label, amount = (cell.strip() for cell in line.strip("|").split("|"))
            console.print(f"  {label:<58} £{amount:>12}")
    if result.report:
        console.print(f"  report: {result.report}")
        console.print(f"  for review: {result.review}")
