"""``billops setup``: make a Prefect API ready for billops. Safe to run again.

It registers the credential block types, creates the refresh lock (a global concurrency limit of
1) of every credential block that lacks one, and brings the ledger's database schema up to date.
"""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer


def _register_blocks() -> list[str]:
    """Register both block types; returns the names of existing credential blocks per lock."""
    from prefect.client.orchestration import get_client

    from blocks import BillerCredentials, PlatformCredentials
    from blocks._lock import LIMIT_PREFIX, PLATFORM_LIMIT_PREFIX

    limits: list[str] = []
    for block_type, prefix in (
        (BillerCredentials, LIMIT_PREFIX),
        (PlatformCredentials, PLATFORM_LIMIT_PREFIX),
    ):
        block_type.register_type_and_schema(_sync=True)  # type: ignore[call-arg]
        typer.echo(f"block type {block_type.get_block_type_slug()}: registered")
        with get_client(sync_client=True) as client:
            documents = client.read_block_documents_by_type(
                block_type.get_block_type_slug(), include_secrets=False
            )
        limits.extend(prefix + doc.name for doc in documents if doc.name)
    return limits


def _ensure_limits(limits: list[str]) -> None:
    from blocks._lock import ensure_limit

    for name in limits:
        changed = ensure_limit(name)
        typer.echo(f"refresh lock {name}: {'created' if changed else 'present'}")


def _migrate_ledger(url: str | None) -> None:
    from billops.settings import BillopsSettings

    if importlib.util.find_spec("ledger.migrate") is None:
        typer.echo("ledger: skipped (ledger.migrate is not installed in this version)")
        return
    from ledger import migrate  # type: ignore[attr-defined, unused-ignore]

    target = url or BillopsSettings().ledger_database_url
    migrate.upgrade_database(target)
    typer.echo("ledger: schema up to date")


def run_setup(*, ledger: bool = True, ledger_url: str | None = None) -> None:
    """What ``billops setup`` does, for other commands (``billops deploy``) to call first."""
    limits = _register_blocks()
    _ensure_limits(limits)
    if ledger:
        _migrate_ledger(ledger_url)


def setup(
    ledger: Annotated[
        bool, typer.Option(help="Also bring the ledger's database schema up to date.")
    ] = True,
    ledger_url: Annotated[
        str | None,
        typer.Option(
            help="The ledger's SQLAlchemy URL [default: BILLOPS_LEDGER_URL or ~/.billops]."
        ),
    ] = None,
) -> None:
    """Register the credential block types, create missing refresh locks, migrate the ledger."""
    run_setup(ledger=ledger, ledger_url=ledger_url)
    typer.echo("setup complete")
