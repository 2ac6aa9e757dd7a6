"""``billops bank``: the bank layouts billops reads, which one a file is, a read-only preview."""

from __future__ import annotations

import csv
import json
import sys
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, Any, Literal

import typer

# Only the profiles and the errors here (no pyarrow, numpy or ledger): `bank profiles` answers
# at once; reading a statement imports the reader in the command that reads (README
# "Performance").
from tasks.bank_payments import (
    ProfileError,
    StatementRefused,
    UnknownLayout,
    available_profiles,
    find_profile,
)

if TYPE_CHECKING:
    from tasks.bank_payments import OnBadLines, Statement

app = typer.Typer(help="Bank statements: profiles, detection and preview.", no_args_is_help=True)
Format = Literal["table", "jsonl", "csv"]


@app.command("profiles")
def profiles() -> None:
    """List the bank profiles (shipped and yours, from $BILLOPS_HOME/bank-profiles)."""
    try:
        found = available_profiles()
    except ProfileError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(1) from exc
    for profile in found:
        typer.echo(f"{profile.name:<20} {profile.bank} [{profile.origin}]")
        typer.echo(f"{'':<20} {profile.description}")


@app.command("detect")
def detect(file: Annotated[Path, typer.Argument(help="The statement file.")]) -> None:
    """Say which profile matches FILE and why (from its contents, never its name)."""
    from tasks.bank_payments import detect_layout

    try:
        detection, _text, encoding = detect_layout(file.read_bytes(), where=str(file))
    except OSError as exc:
        typer.echo(f"{file}: cannot be read ({exc.strerror or exc})", err=True)
        raise typer.Exit(1) from exc
    except StatementRefused as exc:
        _refused(file, exc, "table")
    typer.echo(
        f"{file}: {detection.profile.name} ({detection.profile.bank}); {detection.reason}; "
        f"encoding {encoding}"
    )


def _refused(file: Path, exc: StatementRefused, fmt: Format) -> None:
    if fmt == "jsonl":
        typer.echo(json.dumps({"error": str(exc), "line": exc.line}))
    else:
        typer.echo(str(exc), err=True)
    if isinstance(exc, UnknownLayout) and exc.template:
        from tasks.bank_payments.report import write_profile_starter

        starter = write_profile_starter(file, exc)
        if starter is not None:
            typer.echo(f"a profile to edit is in {starter} (then --profile {starter})", err=True)
        else:
            typer.echo(exc.template, err=True)
    raise typer.Exit(1)


@app.command("preview")
def preview(
    file: Annotated[Path, typer.Argument(help="The statement file.")],
    biller: Annotated[
        str | None, typer.Option("--biller", help="The biller's credential block.")
    ] = None,
    profile: Annotated[
        str | None, typer.Option("--profile", help="A profile name or YAML file.")
    ] = None,
    fmt: Annotated[str, typer.Option("--format", help="table, jsonl or csv.")] = "table",
    on_bad_lines: Annotated[
        str, typer.Option("--on-bad-lines", help="reject_file or skip.")
    ] = "reject_file",
) -> None:
    """Every line, its class, its matches and the action. Read-only: writes nothing anywhere."""
    if fmt not in ("table", "jsonl", "csv") or on_bad_lines not in ("reject_file", "skip"):
        typer.echo(
            "--format is table, jsonl or csv; --on-bad-lines is reject_file or skip", err=True
        )
        raise typer.Exit(2)
    form: Format = fmt  # type: ignore[assignment]
    from tasks.bank_payments import read_statement

    try:
        chosen = find_profile(profile) if profile else None
        mode: OnBadLines = "skip" if on_bad_lines == "skip" else "reject_file"
        statement = read_statement(file, profile=chosen, on_bad_lines=mode)
    except ProfileError as exc:
        typer.echo(str(exc), err=True)
        raise typer.Exit(2) from exc
    except StatementRefused as exc:
        _refused(file, exc, form)
        return
    _print(_records(_plan(file, statement, biller)), form)


def _plan(file: Path, statement: Statement, biller: str | None) -> Any:
    """The plan of ``statement`` as a run for ``biller`` would make it (its open items and bank
    settings; lines the ledger holds as recorded show as duplicates), reading and writing
    nothing else: no snapshot is kept. Without a biller, every line against nothing owed."""
    from tasks.bank_payments._owed import fetch_open_items, items_frame
    from tasks.bank_payments._plan import plan_statement
    from tasks.bank_payments._references import alias_table

    if biller is None:
        return plan_statement(statement, items_frame([]))
    from tasks.bank_payments.settings import load_settings
    from tasks.common.session import load_biller_block

    settings = load_settings(biller)
    client = load_biller_block(biller).get_client()
    try:
        ledger = _existing_ledger()
        if ledger is None:  # no ledger yet: nothing can have been recorded by billops
            items = items_frame(fetch_open_items(client))
            prefixes = items["key"].tolist() or ["INV", "PR"]
            aliases = alias_table(prefixes, settings.reference_aliases)
            return plan_statement(statement, items, rules=settings.classify, aliases=aliases)
        try:
            return _planned_with_ledger(file, statement, biller, settings, client, ledger)
        finally:
            ledger.close()
    finally:
        client.close()


def _existing_ledger() -> Any:
    from ledger import LedgerSchemaError
    from tasks.common.session import open_ledger

    try:
        return open_ledger()
    except LedgerSchemaError:
        return None


def _planned_with_ledger(
    file: Path, statement: Statement, biller: str, settings: Any, client: Any, ledger: Any
) -> Any:
    from tasks.bank_payments.steps import plan_file
    from tasks.common.session import BillerSession

    found = client.biller.retrieve()
    session = BillerSession(biller, client, str(found.id), str(found.id), ledger)
    prepared = plan_file(
        session,
        file,
        profile=statement.profile,
        on_bad_lines="skip",  # the statement is read already; the reading's choice stands
        run_id="preview",
        settings=settings,
        keep_snapshot=False,
        statement=statement,
    )
    return prepared.plan


def _records(plan: Any) -> Iterator[dict[str, Any]]:
    from tasks.bank_payments._plan import preview_record

    for batch in plan.batches():
        yield from (preview_record(line) for line in batch)


COLUMNS = ("line", "date", "amount", "class", "outcome", "references", "matches", "suggestions")


def _flat(record: dict[str, Any]) -> dict[str, Any]:
    return {
        **record,
        "references": " ".join(record["references"]),
        "matches": " ".join(f"{m['number']}:{m['amount']}" for m in record["matches"]),
        "suggestions": " ".join(f"{s['number']}({s['confidence']})" for s in record["suggestions"]),
    }


def _print(records: Iterable[dict[str, Any]], fmt: Format) -> None:
    if fmt == "jsonl":
        for record in records:
            sys.stdout.write(json.dumps(record, ensure_ascii=False) + "\n")
        return
    if fmt == "csv":
        from tasks.common.reports import neutralise

        writer = csv.writer(sys.stdout)
        writer.writerow([*COLUMNS, "payer", "reference"])
        for record in records:
            row = _flat(record)
            writer.writerow([neutralise(row[c]) for c in (*COLUMNS, "payer", "reference")])
        return
    for record in records:
        row = _flat(record)
        typer.echo(
            f"{row['line']:>6} {row['date']} {row['amount']:>12} {row['class']:<16} "
            f"{row['outcome']:<11} {row['matches'] or row['suggestions'] or row['references']}  "
            f"{str(row['payer'])[:30]}"
        )
