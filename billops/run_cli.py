"""``billops run``: the flows, from a terminal, in this process.

They talk to the Prefect server of ``PREFECT_API_URL``, else to the one ``billops server start``
left running, else to a temporary one Prefect starts (10-20 s; :mod:`billops.prefect_env`). A
person's approval (``--approve-as NAME --reason TEXT``) reaches the flow through this process's
context (:func:`tasks.common.approval.approved_from_cli`), never a run parameter, so no
deployment form can carry one. Exit codes: 0 ok, 1 failed, 3 finished but with rejected or
failed rows (2 is typer's usage error).
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager, contextmanager, nullcontext
from pathlib import Path
from typing import Annotated, Any, Literal

import typer

from billops import delinquency_cli, payouts_cli
from billops.cli_errors import describe, quiet_prefect_tracebacks
from billops.console import LazyConsole
from billops.prefect_env import prepare_prefect_environment

app = typer.Typer(help="Run a job now (dry run unless --apply).", no_args_is_help=True)
# Paths and run ids are printed whole: a wrapped path cannot be copied into a file manager.
console = LazyConsole(soft_wrap=True)
EXIT_FAILED, EXIT_REJECTED = 1, 3


def approval_context(approve_as: str | None, reason: str | None) -> AbstractContextManager[None]:
    """The terminal's approval for flows run in this process (none without ``--approve-as``)."""
    if approve_as is None and reason is None:
        return nullcontext()
    if not (approve_as and approve_as.strip() and reason and reason.strip()):
        raise typer.BadParameter(
            "an approval needs both --approve-as NAME and --reason TEXT", param_hint="--approve-as"
        )
    from tasks.common.approval import approved_from_cli

    return approved_from_cli(approve_as, reason)


@contextmanager
def progress_bars() -> Iterator[None]:
    """Show the import's job progress as rich progress bars while a flow runs in this process."""
    from rich.progress import Progress

    from tasks.common.progress import add_listener

    with Progress(console=console.real, transient=True) as progress:
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
            f"server; create it with: billops auth login --block {name} (the sandbox: "
            f"billops sandbox login --biller NAME --block {name})"
        )
        raise typer.Exit(EXIT_FAILED)


def run_flow(call: Callable[[], Any]) -> Any:
    """Run a flow; a failure becomes a printed reason and exit code 1 (no traceback, no locals:
    Prefect's own lines lose theirs too, unless ``--verbose``; the run's logs keep them)."""
    quiet_prefect_tracebacks()
    try:
        with progress_bars():
            return call()
    except Exception as exc:  # the CLI's last line of defence: print the reason, exit 1
        console.print(f"[red]failed:[/red] {describe(exc)}")
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
    approve_as: Annotated[
        str | None, typer.Option(help="Your name, approving a deletion (with --reason).")
    ] = None,
    reason: Annotated[str | None, typer.Option(help="Why, recorded with the approval.")] = None,
) -> None:
    """Import payment requests from a finance team's file.

    Exit codes: 0 ok, 1 failed, 2 usage error, 3 finished with rejected or failed rows.
    """
    if on_bad_rows not in ("reject_file", "skip"):
        raise typer.BadParameter("must be reject_file or skip", param_hint="'--on-bad-rows'")
    approval = approval_context(approve_as, reason)
    prepare_prefect_environment()
    require_block(biller)
    from flows.payment_requests import import_payment_requests

    mode: Literal["reject_file", "skip"] = "skip" if on_bad_rows == "skip" else "reject_file"
    with approval:
        summary = run_flow(
            lambda: import_payment_requests(
                file=file.resolve(),
                biller=biller,
                dry_run=not apply,
                on_bad_rows=mode,
                chunk_size=chunk_size,
                delete_missing=delete_missing,
                sheet=sheet or "",
                force=force,
            )
        )
    print_import_summary(summary)
    raise typer.Exit(import_exit_code(summary))


def import_exit_code(summary: Any) -> int:
    """0 ok, 1 failed, 3 finished with rejected or failed rows (2 is typer's usage error)."""
    from tasks.payment_requests.summary import ImportStatus

    if summary.status in (
        ImportStatus.IMPORTED,
        ImportStatus.DRY_RUN,
        ImportStatus.ALREADY_IMPORTED,
    ):
        return 0 if summary.report is None or summary.report.failed_rows == 0 else EXIT_REJECTED
    if summary.status in (ImportStatus.PARTIAL, ImportStatus.REJECTED):
        return EXIT_REJECTED
    return EXIT_FAILED  # pending jobs, or an approval refused


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
    amounts = getattr(report, "amount_by_status", {})
    for status, count in report.by_status.items():
        total = f"  £{amounts[status]:,.2f}" if status in amounts else ""
        console.print(f"  {status:<14} {count}{total}")
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
    from ledger import OperationState

    settled = run_flow(lambda: poll_import_jobs(biller=biller))
    open_left = [s for s in settled if not s.state.settled]
    console.print(f"{len(settled)} open import job(s) found; {len(open_left)} still open")
    for s in settled:
        console.print(f"  chunk {s.chunk_index} ({s.rows} rows): {s.state} job {s.job_id or '-'}")
    failed = any(s.state is OperationState.FAILED for s in settled)
    raise typer.Exit(EXIT_FAILED if failed else 0)


@app.command("nightly")
def nightly_command(
    biller: Annotated[
        list[str] | None, typer.Option(help="Credential block(s); default: every biller.")
    ] = None,
) -> None:
    """The nightly run, now: every biller (or those named)."""
    prepare_prefect_environment()
    for name in biller or []:  # a mistyped name fails now, not after the night's retries
        require_block(name)
    from flows.nightly import nightly

    results = run_flow(lambda: nightly(billers=biller or None))
    for r in results:
        console.print(
            f"  {r.biller:<24} ok  imports settled {r.imports_settled}, open {r.imports_open}"
        )


app.command("pause-delinquent")(delinquency_cli.pause_delinquent_command)
app.command("reconcile-payouts")(payouts_cli.reconcile_payouts_command)


def _bank_command() -> None:
    from billops.bank_run_cli import import_bank_payments_command

    app.command("import-bank-payments")(import_bank_payments_command)


_bank_command()
