"""``billops db`` (migrations) and ``billops ledger`` (operations left unsettled).

``billops ledger resolve`` asks the service about each unsettled operation. The ledger side is
:func:`ledger.resolve_operations`; the service side is a *resolver factory* registered with
:func:`set_resolver_factory` by the code that knows the service client (a context manager that,
given the biller's credential block name, yields a ``Callable[[Operation], Resolution]`` and the
biller id the ledger knows it by).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from contextlib import AbstractContextManager
from datetime import datetime
from typing import TYPE_CHECKING, Annotated

import typer

if TYPE_CHECKING:
    from ledger import (
        FileRecord,
        Ledger,
        Operation,
        OperationState,
        ResolvedOperation,
        Resolver,
    )

db_app = typer.Typer(
    help="The ledger database: create or upgrade its schema.", no_args_is_help=True
)
ledger_app = typer.Typer(
    help="What billops has sent to the service, and what is still unsettled.", no_args_is_help=True
)

# Given a credential block name and the open ledger: a context manager yielding
# (biller id, resolver).
ResolverFactory = Callable[[str, "Ledger"], AbstractContextManager[tuple[str, "Resolver"]]]
_resolver_factory: ResolverFactory | None = None

UrlOption = Annotated[
    str | None,
    typer.Option(
        "--url",
        help="SQLAlchemy URL of the ledger \\[default: $BILLOPS_LEDGER_URL, else "
        "$BILLOPS_HOME/ledger.db].",
        show_default=False,
    ),
]
ERROR_WIDTH = 60


def set_resolver_factory(factory: ResolverFactory | None) -> None:
    """Register how ``billops ledger resolve`` asks the service (None unregisters)."""
    global _resolver_factory
    _resolver_factory = factory


def ledger_url(url: str | None) -> str:
    """The URL given, or the one settings name (creating ``$BILLOPS_HOME`` for the default)."""
    if url:
        return url
    from ledger.settings import BillopsSettings

    settings = BillopsSettings()
    if settings.ledger_url is None:
        settings.home.mkdir(parents=True, exist_ok=True)
    return settings.ledger_database_url


def _fail(message: str) -> typer.Exit:
    typer.secho(message, err=True, fg=typer.colors.RED)
    return typer.Exit(1)


@db_app.command("upgrade")
def db_upgrade(url: UrlOption = None) -> None:
    """Create the ledger's tables, or upgrade them to this billops's schema (safe to repeat)."""
    from ledger import LedgerError, current_revision, head_revision, safe_url, upgrade_database

    target = ledger_url(url)
    try:
        before = current_revision(target)
        upgrade_database(target)
    except LedgerError as exc:
        raise _fail(f"billops db upgrade: {exc}") from None
    head = head_revision()
    if before == head:
        typer.echo(f"The ledger at {safe_url(target)} is up to date (schema {head}).")
    else:
        typer.echo(
            f"Upgraded the ledger at {safe_url(target)} from schema {before or 'none'} to {head}."
        )


@ledger_app.command("status")
def ledger_status(
    biller: Annotated[
        str | None,
        typer.Option(help="Only this biller: the name of its credential block, as everywhere."),
    ] = None,
    url: UrlOption = None,
) -> None:
    """What is not settled: files still importing, runs with open writes, and each operation.

    Exit codes: 0 ok, 1 failed (no ledger, or it cannot be read), 2 usage error.
    """
    from ledger import FileState, Ledger, LedgerError, current_revision, safe_url

    target = ledger_url(url)
    try:
        if current_revision(target) is None:
            raise _fail(
                f"billops ledger status: there is no ledger at {safe_url(target)} "
                "(`billops setup` or `billops db upgrade` creates it)"
            )
        with Ledger(target, create=False) as ledger:
            blocks = ledger.biller_blocks()
            # None: every biller; otherwise the ids the ledger learnt this block serves.
            scope = None if biller is None else sorted(b for b, n in blocks.items() if n == biller)
            counts = _state_counts(ledger, scope)
            open_ops = [
                op
                for b in (scope if scope is not None else [None])
                for op in ledger.unsettled(biller=b)
            ]
            importing = [
                f
                for f in ledger.files(states=[FileState.IMPORTING])
                if scope is None or f.biller in scope
            ]
    except LedgerError as exc:
        raise _fail(f"billops ledger status: {exc}") from None
    typer.echo(f"Ledger: {safe_url(target)}" + (f" (credential block {biller})" if biller else ""))
    if scope is not None and not scope:
        typer.echo(f"No run of credential block {biller!r} is recorded in this ledger.")
        return
    typer.echo("Operations by state: " + ", ".join(f"{s.value} {n}" for s, n in counts.items()))
    if not open_ops and not importing:
        typer.echo("Nothing unsettled.")
        return
    if importing:
        typer.echo(f"\n{len(importing)} file(s) still importing (sent, not all settled):")
        typer.echo(format_files(importing, blocks))
    if open_ops:
        typer.echo(f"\nRuns with unsettled writes:\n{format_runs(open_ops)}")
        typer.echo(f"\n{len(open_ops)} unsettled (`billops ledger resolve` settles them):")
        typer.echo(format_operations(open_ops))


def _state_counts(ledger: Ledger, scope: list[str] | None) -> dict[OperationState, int]:
    """Operations per state, of every biller (``None``) or of the billers in ``scope``."""
    if scope is None:
        return ledger.state_counts()
    total: dict[OperationState, int] = {}
    for biller_id in scope:
        for state, n in ledger.state_counts(biller=biller_id).items():
            total[state] = total.get(state, 0) + n
    return total


def format_files(files: Sequence[FileRecord], blocks: dict[str, str]) -> str:
    """One line per file: when, which block, its name, the run and where its report is."""
    lines = []
    for f in files:
        block = blocks.get(f.biller, f.biller)
        report = f"  report {f.report_path}" if f.report_path else ""
        lines.append(
            f"  {_when(f.updated_at)}  {block:<20} {f.name}  run {f.run_id or '-'}{report}"
        )
    return "\n".join(lines)


def format_runs(ops: Sequence[Operation]) -> str:
    """One line per run: how many of its writes are in each unsettled state."""
    by_run: dict[str, dict[str, int]] = {}
    for op in ops:
        states = by_run.setdefault(op.run_id or "(no run)", {})
        states[op.state.value] = states.get(op.state.value, 0) + 1
    return "\n".join(
        f"  run {run}: " + ", ".join(f"{state} {n}" for state, n in sorted(states.items()))
        for run, states in sorted(by_run.items())
    )


def format_operations(ops: Sequence[Operation]) -> str:
    """A plain-text table of operations, one per line, readable in any terminal or log."""
    header = ("STATE", "KIND", "BILLER", "TRIES", "UPDATED (UTC)", "REMOTE ID", "KEY", "ERROR")
    rows = [header] + [
        (
            op.state.value,
            op.kind,
            op.biller,
            str(op.attempts),
            _when(op.updated_at),
            op.remote_id or "-",
            op.key,
            _short(op.error),
        )
        for op in ops
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join([*(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)), row[-1]])
        for row in rows
    )


@ledger_app.command("resolve")
def ledger_resolve(
    biller: Annotated[
        str, typer.Option(help="The biller's credential block: its operations are resolved.")
    ],
    url: UrlOption = None,
) -> None:
    """Ask the service what became of each unsettled operation of a biller, and record it."""
    from ledger import Ledger, LedgerError, resolve_operations

    if _resolver_factory is None:
        raise _fail(
            "billops ledger resolve is not connected to the service in this build; "
            f"`billops run poll-import-jobs --biller {biller}` settles bulk imports meanwhile."
        )
    target = ledger_url(url)
    try:
        with (
            Ledger(target, create=False) as ledger,
            _resolver_factory(biller, ledger) as (biller_id, resolver),
        ):
            outcomes = resolve_operations(ledger, resolver, biller=biller_id)
    except LedgerError as exc:
        raise _fail(f"billops ledger resolve: {exc}") from None
    except Exception as exc:  # no such block, dead credential, service down: say which, exit 1
        raise _fail(
            f"billops ledger resolve --biller {biller}: {type(exc).__name__}: {exc}"
        ) from None
    typer.echo(format_resolutions(outcomes))
    if any(o.error for o in outcomes):
        raise typer.Exit(1)


def format_resolutions(outcomes: Sequence[ResolvedOperation]) -> str:
    """One line per operation: before → after, and the note or error."""
    from ledger import OperationState

    if not outcomes:
        return "Nothing unsettled."
    lines = []
    for o in outcomes:
        outcome = f"{o.before.value} -> {o.after.value}" if o.changed else f"{o.after.value}"
        lines.append(f"{outcome:<24} {o.kind:<14} {o.key}  {o.error or o.note}".rstrip())
    settled = sum(o.after in (OperationState.CONFIRMED, OperationState.FAILED) for o in outcomes)
    errors = sum(bool(o.error) for o in outcomes)
    lines.append(f"{settled} of {len(outcomes)} settled, {errors} errors.")
    return "\n".join(lines)


def _when(moment: datetime) -> str:
    return moment.strftime("%Y-%m-%d %H:%M:%S")


def _short(text: str | None) -> str:
    if not text:
        return ""
    line = " ".join(text.split())
    return line if len(line) <= ERROR_WIDTH else line[: ERROR_WIDTH - 1] + "…"
