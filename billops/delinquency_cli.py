"""``billops policy check``, ``billops delinquency status`` and ``billops run pause-delinquent``.

Exit codes: 0 ok, 1 failed (a bad policy file, a stopped run), 2 usage error, 3 finished with
problems (a call refused, deferred or left unknown) or without an approval.
"""

from __future__ import annotations

import json
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from billops.console import LazyConsole, new_table

policy_app = typer.Typer(help="Delinquency policies: check a policy file.", no_args_is_help=True)
status_app = typer.Typer(help="Delinquency: who is in which state.", no_args_is_help=True)
console = LazyConsole(soft_wrap=True)  # paths and reasons printed whole, never wrapped
EXIT_FAILED = 1
Format = Literal["table", "jsonl"]
SHOWN_COLUMNS = (
    "customer",
    "state_before",
    "state_after",
    "action",
    "payment_request",
    "amount",
    "outcome",
    "detail",
)


@policy_app.command("check")
def check_policy(
    file: Annotated[Path, typer.Argument(help="The policy file (YAML).")],
) -> None:
    """Validate FILE: every error names the line and the key; warnings name likely mistakes."""
    from tasks.delinquency.policy import PolicyError, load_policy

    try:
        policy = load_policy(file)
    except PolicyError as exc:
        console.print(f"[red]{file} is not a usable policy:[/red]", highlight=False)
        for line in str(exc).splitlines():
            console.print(f"  {line}", highlight=False, markup=False)
        raise typer.Exit(EXIT_FAILED) from None
    console.print(f"{file}: policy {policy.name!r} ({policy.digest}) is valid", highlight=False)
    for state in policy.states:
        leave = state.leave.describe() if state.leave else "its enter conditions stop holding"
        console.print(
            f"  {state.name}: enter when {state.enter.describe()}; leave when {leave}"
            f" (at least {state.min_days} days); on enter {', '.join(state.on_enter)}",
            highlight=False,
            markup=False,
        )
    cap = policy.apply
    console.print(
        f"  applies on its own at night: {'yes' if cap.automatic else 'no'}; cap per run "
        f"{cap.max_customers} customers, £{cap.max_amount:,.2f}",
        highlight=False,
    )
    for warning in policy.warnings():
        console.print(f"[yellow]warning:[/yellow] {warning}", highlight=False)


@status_app.command("status")
def status(
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
    fmt: Annotated[Format, typer.Option("--format", help="table or jsonl.")] = "table",
) -> None:
    """Who is in which state, since when, and why (from the ledger; one call to name the biller)."""
    from tasks.common.session import biller_session, open_ledger

    ledger = open_ledger()
    try:
        with biller_session(biller, ledger) as session:
            standings = ledger.delinquency_standings(session.biller_id)
    finally:
        ledger.close()
    rows = [
        {
            "customer_id": s.customer_id,
            "customer": s.name,
            "state": s.state or "good standing",
            "since": s.since.isoformat() if s.since else "",
            "hold": s.hold_period,
            "why": "; ".join(s.reasons),
            "policy": f"{s.policy_name} ({s.policy_digest})",
            "updated": s.updated_at.isoformat() if s.updated_at else "",
        }
        for s in standings
        if s.state or s.hold_period
    ]
    if fmt == "jsonl":
        for row in rows:
            typer.echo(json.dumps(row))
        return
    if not rows:
        console.print(f"{biller}: every customer is in good standing (nothing held)")
        return
    table = new_table("customer", "state", "since", "hold", "why", title=f"Delinquency: {biller}")
    for row in rows:
        table.add_row(row["customer"], row["state"], row["since"], row["hold"], row["why"])
    console.print(table)


def pause_delinquent_command(
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
    policy: Annotated[
        Path | None,
        typer.Option(
            exists=True,
            dir_okay=False,
            help="Policy file (default: the biller's own, else the one billops ships).",
        ),
    ] = None,
    apply: Annotated[
        bool, typer.Option("--apply", help="Make the calls (default: dry run, a plan only).")
    ] = False,
    approve_as: Annotated[
        str | None, typer.Option(help="Your name: you approve the calls of this run.")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why, recorded with the approval.")] = None,
    as_of: Annotated[
        str | None,
        typer.Option(help="Evaluate for this day, YYYY-MM-DD (default: today in Europe/London)."),
    ] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table or jsonl.")] = "table",
) -> None:
    """Pause collection for delinquent customers (and resume it for those back in good standing)."""
    day = _day(as_of)
    if apply and not (approve_as and reason):
        raise typer.BadParameter(
            "--apply needs --approve-as NAME --reason TEXT (you approve the calls)",
            param_hint="'--approve-as'",
        )
    from billops.prefect_env import prepare_prefect_environment
    from billops.run_cli import require_block

    prepare_prefect_environment()
    from flows.delinquency import pause_delinquent_customers
    from tasks.common.approval import approved_from_cli
    from tasks.delinquency.verdict import DelinquencyRun, DelinquencyStopped

    require_block(biller)

    def run() -> Any:
        return pause_delinquent_customers(
            biller=biller,
            policy=policy.resolve() if policy else None,
            dry_run=not apply,
            as_of=day,
            return_state=True,
        )

    try:
        if apply and approve_as and reason:
            with approved_from_cli(approve_as, reason):
                state = run()
        else:
            state = run()
        result = state.result(raise_on_failure=False)
    except Exception as exc:  # the CLI's last line of defence: the reason, exit 1
        console.print(f"[red]failed:[/red] {type(exc).__name__}: {exc}", highlight=False)
        raise typer.Exit(EXIT_FAILED) from None
    if isinstance(result, DelinquencyStopped):
        result = result.run
    if not isinstance(result, DelinquencyRun):
        console.print(f"[red]failed:[/red] {state.name}: {state.message}", highlight=False)
        raise typer.Exit(EXIT_FAILED)
    _print_run(result, fmt)
    raise typer.Exit(result.exit_code)


def _day(text: str | None) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter("a date as YYYY-MM-DD", param_hint="'--as-of'") from None


def _print_run(run: Any, fmt: Format) -> None:
    rows = _report_rows(run.report)
    if fmt == "jsonl":
        for row in rows:
            typer.echo(json.dumps(row))
        typer.echo(json.dumps({"summary": {**_summary(run), "rows": len(rows)}}))
        return
    table = new_table(*SHOWN_COLUMNS, title=f"{run.biller} on {run.as_of}: {run.state}")
    for row in rows:
        table.add_row(*(row.get(name, "") for name in SHOWN_COLUMNS))
    if rows:
        console.print(table)
    console.print(f"[bold]{run.state}[/bold]: {run.message}", highlight=False)
    if run.report:
        console.print(f"  report: {run.report}", highlight=False)


def _summary(run: Any) -> dict[str, Any]:
    return {
        "biller": run.biller,
        "as_of": run.as_of,
        "state": run.state,
        "message": run.message,
        "report": str(run.report) if run.report else None,
        "calls": run.calls,
        "customers": run.customers,
        "by_outcome": run.by_outcome,
    }


def _report_rows(path: Path | None) -> list[dict[str, str]]:
    import csv

    if path is None or not path.is_file():
        return []
    with path.open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))
