"""One biller's working set for a run: its client (from its credential block) and the ledger."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from billing_api import BillingClient
from blocks import BillerCredentials
from ledger import Ledger
from ledger.settings import BillopsSettings


@dataclass
class BillerSession:
    """What the tasks of one biller share during a run."""

    block: str
    client: BillingClient
    biller_id: str
    biller_name: str
    ledger: Ledger


def open_ledger(url: str | None = None) -> Ledger:
    """The ledger the CLI and all deployments share (``BILLOPS_LEDGER_URL`` or the default file)."""
    settings = BillopsSettings()
    if url is None:
        settings.home.mkdir(parents=True, exist_ok=True)
    return Ledger(url or settings.ledger_database_url)


@contextmanager
def biller_session(block: str, ledger: Ledger) -> Iterator[BillerSession]:
    """Load the credential block, ask the service which biller it is, and close the client after."""
    client = BillerCredentials.load_named(block).get_client()
    try:
        biller = client.biller.retrieve()
        yield BillerSession(
            block=block,
            client=client,
            biller_id=str(biller.id),
            biller_name=str(getattr(biller, "name", "") or biller.id),
            ledger=ledger,
        )
    finally:
        client.close()
