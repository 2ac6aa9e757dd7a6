"""``billops run reconcile-payouts``: the payout reconciliation from a terminal.

Exit codes: 0 every payout matched or in transit, 1 failed (a refused file, an unknown block, a
crash), 2 usage error, 3 exceptions found (the exceptions file says what needs a person).
"""

from __future__ import annotations

import csv
import json
from datetime import date
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from billops.console import LazyConsole, new_table

console = LazyConsole(soft_wrap=True)  # paths and reasons printed whole, never wrapped
EXIT_FAILED = 1
Format = Literal["table", "jsonl"]
SHOWN = ("state", "reference", "date", "payout_amount", "bank_credited", "check_service")


def _day(text: str | None, option: str) -> date | None:
    if text is None:
        return None
    try:
        return date.fromisoformat(text)
    except ValueError:
        raise typer.BadParameter("a date as YYYY-MM-DD", param_hint=option) from None


def reconcile_payouts_command(
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
    payouts: Annotated[
        Path | None,
        typer.Option(exists=True, dir_okay=False, help="The payout report (the console's export)."),
    ] = None,
    bank: Annotated[
        Path | None,
        typer.Option(
            exists=True, dir_okay=False, help="A bank statement (any layout billops reads)."
        ),
    ] = None,
    start: Annotated[
        str | None, typer.Option("--from", help="First arrival date to report, YYYY-MM-DD.")
    ] = None,
    end: Annotated[str | None, typer.Option("--to", help="Last arrival date, YYYY-MM-DD.")] = None,
    fmt: Annotated[Format, typer.Option("--format", help="table or jsonl.")] = "table",
) -> None:
    """Tie every payout to its payments, its bank credit and the service's records.

    Without --payouts and --bank it reconciles what the ledger holds. Exit codes: 0 all matched
    or in transit, 1 failed, 2 usage error, 3 exceptions found.
    """
    first, last = _day(start, "'--from'"), _day(end, "'--to'")
    if first and last and first > last:
        raise typer.BadParameter(f"--from {first} is after --to {last}", param_hint="'--from'")
    from billops.prefect_env import prepare_prefect_environment
    from billops.run_cli import require_block, run_flow

    prepare_prefect_environment()
    require_block(biller)
    from flows.payouts import reconcile_payouts
    from tasks.payouts.outcome import PayoutRun

    state = run_flow(
        lambda: reconcile_payouts(
            biller=biller,
            payout_report=payouts.resolve() if payouts else None,
            bank_file=bank.resolve() if bank else None,
            period_start=first,
            period_end=last,
            return_state=True,
        )
    )
    run = state.result(raise_on_failure=False)
    if not isinstance(run, PayoutRun):
        console.print(f"[red]failed:[/red] {state.name}: {state.message}", highlight=False)
        raise typer.Exit(EXIT_FAILED)
    print_run(run, fmt)
    raise typer.Exit(run.exit_code)


def print_run(run: Any, fmt: Format) -> None:
    """The run as a table and its tie-out, or as JSON lines (one per payout, then a summary)."""
    rows = _rows(run.files.get("reconciliation"))
    if fmt == "jsonl":
        for row in rows:
            typer.echo(json.dumps(row))
        typer.echo(json.dumps({"summary": _summary(run, len(rows))}))
        return
    if rows:
        table = new_table(
            *SHOWN, "why", title=f"Payouts of {run.biller}: {run.first} to {run.last}"
        )
        for row in rows:
            table.add_row(*(row[name] for name in SHOWN), _short(row))
        console.print(table)
    console.print(f"[bold]{run.state}[/bold]: {run.message}", highlight=False, markup=False)
    if run.files:
        console.print(
            f"  in transit {_pounds(run.opening)} + collected {_pounds(run.collected)} - "
            f"deductions {_pounds(run.deductions)} - paid out {_pounds(run.paid_out)} = "
            f"{_pounds(run.closing)}",
            highlight=False,
        )
        for name in ("reconciliation", "exceptions", "journal", "picture"):
            console.print(f"  {name + ':':<16}{run.files[name]}", highlight=False, markup=False)


def _short(row: dict[str, str]) -> str:
    if row["state"] in ("matched", "in_transit"):
        return ""
    return row["reasons"][:160]


def _pounds(pennies: int) -> str:
    sign = "-" if pennies < 0 else ""
    return f"{sign}£{abs(pennies) // 100:,}.{abs(pennies) % 100:02d}"


def _summary(run: Any, rows: int) -> dict[str, Any]:
    return {
        "biller": run.biller,
        "state": run.state,
        "message": run.message,
        "from": run.first,
        "to": run.last,
        "counts": run.counts,
        "in_transit_opening": _pounds(run.opening),
        "collected": _pounds(run.collected),
        "deductions": _pounds(run.deductions),
        "paid_out": _pounds(run.paid_out),
        "in_transit_closing": _pounds(run.closing),
        "files": run.files,
        "rows": rows,
        "exit_code": run.exit_code,
    }


def _rows(path: str | None) -> list[dict[str, str]]:
    if not path or not Path(path).is_file():
        return []
    with Path(path).open(encoding="utf-8-sig", newline="") as handle:
        return list(csv.DictReader(handle))
