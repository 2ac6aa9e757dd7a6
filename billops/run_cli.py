"""``billops run``: the flows, from a terminal, on the Prefect server of ``PREFECT_API_URL``.

Without ``PREFECT_API_URL`` Prefect starts its ephemeral server (a first start takes ~13 s on two
cores, so the start-up timeout is raised to 60 s here). Exit codes: 0 ok, 1 failed, 3 finished but
with rejected or failed rows (2 is typer's usage error).
"""

from __future__ import annotations

import os
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Annotated, Any, Literal

import typer
from rich.console import Console
from rich.progress import Progress

app = typer.Typer(help="Run a job now (dry run unless --apply).", no_args_is_help=True)
console = Console()
EXIT_FAILED, EXIT_REJECTED = 1, 3


def prepare_prefect_environment() -> None:
    """Settings Prefect reads at import: a patient ephemeral start, no analytics calls."""
    os.environ.setdefault("PREFECT_SERVER_EPHEMERAL_STARTUP_TIMEOUT_SECONDS", "60")
    os.environ.setdefault("PREFECT_SERVER_ANALYTICS_ENABLED", "false")


@contextmanager
def progress_bars() -> Iterator[None]:
    """Show the import's job progress as rich progress bars while a flow runs in this process."""
    from tasks.import_progress import add_listener

    with Progress(console=console, transient=True) as progress:
        bars: dict[str, Any] = {}

        def update(label: str, done: int, total: int) -> None:
            if label not in bars:
                bars[label] = progress.add_task(label, total=max(total, 1))
            progress.update(bars[label], completed=done, total=max(total, 1))

        remove = add_listener(update)
        try:
            yield
        finally:
            remove()


def require_block(name: str) -> None:
    """Fail before any flow starts when the biller's credential block does not exist."""
    from blocks.admin import find_block

    if find_block(name) is None:
        console.print(
            f"[red]failed:[/red] no biller credential block named {name!r} on this Prefect "
            f"server; create it with: billops auth login --block {name}"
        )
        raise typer.Exit(EXIT_FAILED)


def run_flow(call: Callable[[], Any]) -> Any:
    """Run a flow; a failure becomes a printed reason and exit code 1 (no traceback, no locals)."""
    try:
        with progress_bars():
            return call()
    except Exception as exc:  # the CLI's last line of defence: print the reason, exit 1
        console.print(f"[red]failed:[/red] {type(exc).__name__}: {exc}")
        raise typer.Exit(EXIT_FAILED) from None


@app.command("import-payment-requests")
def import_payment_requests_command(
    file: Annotated[Path, typer.Argument(exists=True, dir_okay=False, help="CSV or XLSX file.")],
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
    apply: Annotated[
        bool, typer.Option("--apply", help="Send to the service (default: dry run).")
    ] = False,
    on_bad_rows: Annotated[
        str, typer.Option(help="reject_file (send nothing if any row is bad) or skip.")
    ] = "reject_file",
    chunk_size: Annotated[int, typer.Option(min=1, max=10_000, help="Rows per import job.")] = 500,
    delete_missing: Annotated[
        bool, typer.Option(help="Full sync: delete payment requests not in the file (approval).")
    ] = False,
    sheet: Annotated[str | None, typer.Option(help="XLSX sheet (default: the first).")] = None,
    force: Annotated[bool, typer.Option(help="Import a file already imported before.")] = False,
    approve_as: Annotated[str | None, typer.Option(help="Your name, approving a deletion.")] = None,
    reason: Annotated[str | None, typer.Option(help="Why, recorded with the approval.")] = None,
) -> None:
    """Import payment requests from a finance team's file."""
    if on_bad_rows not in ("reject_file", "skip"):
        raise typer.BadParameter("must be reject_file or skip", param_hint="'--on-bad-rows'")
    prepare_prefect_environment()
    require_block(biller)
    from flows.payment_requests import import_payment_requests

    mode: Literal["reject_file", "skip"] = "skip" if on_bad_rows == "skip" else "reject_file"
    summary = run_flow(
        lambda: import_payment_requests(
            file=file.resolve(),
            biller=biller,
            dry_run=not apply,
            on_bad_rows=mode,
            chunk_size=chunk_size,
            delete_missing=delete_missing,
            sheet=sheet,
            force=force,
            approved_by=approve_as,
            approval_reason=reason,
        )
    )
    print_import_summary(summary)
    raise typer.Exit(summary.exit_code)


def print_import_summary(summary: Any) -> None:
    """The summary a person reads in the terminal: counts, total, where the reports are."""
    console.print(f"[bold]{Path(summary.file).name}[/bold] for {summary.biller}: {summary.status}")
    console.print(f"  run: {summary.run_id}")
    if summary.message:
        console.print(f"  {summary.message}")
    report = summary.report
    if report is None:
        return
    console.print(f"  rows: {report.rows}   valid total: £{report.amount_valid:,.2f}")
    for status, count in report.by_status.items():
        console.print(f"  {status:<14} {count}")
    console.print(f"  report: {report.report_csv}")
    if report.failed_csv is not None:
        console.print(f"  failed rows (fix and drop again): {report.failed_csv}")


@app.command("poll-import-jobs")
def poll_import_jobs_command(
    biller: Annotated[str, typer.Option(help="The biller's credential block name.")],
) -> None:
    """Settle the import jobs earlier runs left open."""
    prepare_prefect_environment()
    require_block(biller)
    from flows.payment_requests import poll_import_jobs

    settled = run_flow(lambda: poll_import_jobs(biller=biller))
    open_left = [s for s in settled if s.state not in ("confirmed", "failed")]
    console.print(f"{len(settled)} open import job(s) found; {len(open_left)} still open")
    for s in settled:
        console.print(f"  chunk {s.chunk_index} ({s.rows} rows): {s.state} job {s.job_id or '-'}")
    raise typer.Exit(EXIT_FAILED if any(s.state == "failed" for s in settled) else 0)


@app.command("nightly")
def nightly_command(
    biller: Annotated[
        list[str] | None, typer.Option(help="Credential block(s); default: every biller.")
    ] = None,
) -> None:
    """The nightly run, now: every biller (or those named)."""
    prepare_prefect_environment()
    from flows.nightly import nightly

    results = run_flow(lambda: nightly(billers=biller or None))
    for r in results:
        console.print(
            f"  {r.biller:<24} ok  imports settled {r.imports_settled}, open {r.imports_open}"
        )
