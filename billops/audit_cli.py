"""``billops audit``: who approved, refused, undid or deleted what, and why — without SQL.

Reads the ledger's audit table (``docs/conventions.md`` §10 Dry run and approval): approvals and
refusals (with the channel they came through: the UI's pause form or the CLI's ``--approve-as``),
undos and voids, deletions, and the ledger's own resolutions. Exit codes: 0 ok, 1 failed (no
ledger), 2 usage error.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Annotated

import typer

from billops.ledger_cli import UrlOption, ledger_url

if TYPE_CHECKING:
    from ledger import AuditEntry, Ledger

REASON_WIDTH = 70


def _since(value: str | None) -> datetime | None:
    """``--since`` as an aware UTC moment (a date means its midnight, UTC)."""
    if value is None:
        return None
    try:
        moment = datetime.fromisoformat(value)
    except ValueError:
        raise typer.BadParameter(
            f"{value!r} is not a date or time (use YYYY-MM-DD or YYYY-MM-DDTHH:MM)",
            param_hint="'--since'",
        ) from None
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def belongs_to(entry: AuditEntry, block: str, biller_ids: set[str], runs: set[str]) -> bool:
    """Whether an audit entry is about credential block ``block`` (by its subject, its details,
    or a run that wrote for one of the billers the block serves)."""
    details = entry.details or {}
    return (
        entry.subject == block
        or entry.subject.startswith(f"{block}:")
        or details.get("block") == block
        or str(details.get("biller", "")) in biller_ids
        or (entry.run_id is not None and entry.run_id in runs)
    )


def select_entries(
    ledger: Ledger, *, block: str | None, since: datetime | None
) -> list[AuditEntry]:
    """The audit entries of one block (or all), at or after ``since``, oldest first."""
    entries = ledger.audit_entries()
    if since is not None:
        entries = [e for e in entries if e.at >= since]
    if block is None:
        return entries
    biller_ids = {b for b, name in ledger.biller_blocks().items() if name == block}
    runs = {op.run_id for b in biller_ids for op in ledger.operations(biller=b) if op.run_id}
    return [e for e in entries if belongs_to(e, block, biller_ids, runs)]


def format_entries(entries: Sequence[AuditEntry]) -> str:
    """A plain-text table, one entry per line (reasons shortened to one line)."""
    header = ("AT (UTC)", "ACTION", "WHO", "CHANNEL", "SUBJECT", "RUN", "REASON")
    rows = [header] + [
        (
            e.at.astimezone(UTC).strftime("%Y-%m-%d %H:%M:%S"),
            e.action,
            e.approver or e.actor,
            str((e.details or {}).get("channel", "-")),
            e.subject,
            e.run_id or "-",
            _one_line(e.reason or e.comment or ""),
        )
        for e in entries
    ]
    widths = [max(len(row[i]) for row in rows) for i in range(len(header) - 1)]
    return "\n".join(
        "  ".join([*(cell.ljust(w) for cell, w in zip(row[:-1], widths, strict=True)), row[-1]])
        for row in rows
    )


def _one_line(text: str) -> str:
    line = " ".join(text.split())
    return line if len(line) <= REASON_WIDTH else line[: REASON_WIDTH - 1] + "…"


def audit_command(
    biller: Annotated[
        str | None, typer.Option(help="Only this biller: the name of its credential block.")
    ] = None,
    since: Annotated[
        str | None,
        typer.Option(help="Only entries at or after this date or time (YYYY-MM-DD[THH:MM], UTC)."),
    ] = None,
    url: UrlOption = None,
) -> None:
    """Approvals, refusals, undos and deletions recorded in the ledger, oldest first."""
    from ledger import Ledger, LedgerError, current_revision, safe_url

    moment = _since(since)
    target = ledger_url(url)
    try:
        if current_revision(target) is None:
            typer.secho(
                f"billops audit: there is no ledger at {safe_url(target)} "
                "(`billops setup` or `billops db upgrade` creates it)",
                err=True,
                fg=typer.colors.RED,
            )
            raise typer.Exit(1)
        with Ledger(target, create=False) as ledger:
            entries = select_entries(ledger, block=biller, since=moment)
    except LedgerError as exc:
        typer.secho(f"billops audit: {exc}", err=True, fg=typer.colors.RED)
        raise typer.Exit(1) from None
    if not entries:
        typer.echo("No audit entries" + (f" for {biller}" if biller else "") + ".")
        return
    typer.echo(format_entries(entries))
    typer.echo(f"{len(entries)} entr{'y' if len(entries) == 1 else 'ies'}.")
