"""``billops setup``: make a Prefect API ready for billops. Safe to run again.

It registers the credential block types, removes the global concurrency limits earlier versions
used as refresh locks (the locks now live on the ledger's database, ``docs/credentials.md``), and
brings the ledger's database schema up to date.
"""

from __future__ import annotations

import importlib.util
from typing import Annotated

import typer


def _register_blocks() -> list[str]:
    """Register both block types; returns the legacy lock names of the existing blocks."""
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


def _remove_legacy_limits(limits: list[str]) -> None:
    """Earlier versions locked refreshes with a Prefect global concurrency limit per block; a
    leftover one is unused, and one wedged by a server restart would only confuse people."""
    from prefect.client.orchestration import get_client
    from prefect.exceptions import ObjectNotFound

    with get_client(sync_client=True) as client:
        for name in limits:
            try:
                client.delete_global_concurrency_limit_by_name(name)
            except ObjectNotFound:
                continue
            typer.echo(f"legacy refresh lock {name} (a Prefect concurrency limit): removed")


def _migrate_ledger(url: str | None) -> None:
    from billops.settings import BillopsSettings

    if importlib.util.find_spec("ledger.migrate") is None:
        typer.echo("ledger: skipped (ledger.migrate is not installed in this version)")
        return
    from ledger import migrate  # type: ignore[attr-defined, unused-ignore]

    settings = BillopsSettings()
    if url is None and settings.ledger_url is None:
        settings.home.mkdir(parents=True, exist_ok=True)  # a first setup on a fresh machine
    target = url or settings.ledger_database_url
    migrate.upgrade_database(target)
    typer.echo("ledger: schema up to date")


def run_setup(*, ledger: bool = True, ledger_url: str | None = None) -> None:
    """What ``billops setup`` does, for other commands (``billops deploy``) to call first."""
    limits = _register_blocks()
    _remove_legacy_limits(limits)
    if ledger:
        _migrate_ledger(ledger_url)


def setup(
    ledger: Annotated[
        bool, typer.Option(help="Also bring the ledger's database schema up to date.")
    ] = True,
    ledger_url: Annotated[
        str | None,
        typer.Option(
            help="The ledger's SQLAlchemy URL \\[default: BILLOPS_LEDGER_URL or ~/.billops]."
        ),
    ] = None,
) -> None:
    """Register the credential block types, remove legacy lock limits, migrate the ledger."""
    if not ledger and ledger_url is not None:
        raise typer.BadParameter(
            "--ledger-url names a ledger to migrate, and --no-ledger skips the ledger: give one",
            param_hint="'--ledger-url'",
        )
    run_setup(ledger=ledger, ledger_url=ledger_url)
    typer.echo("setup complete")
