"""One biller's working set for a run: its client (from its credential block) and the ledger.

A job's run opens both with :func:`open_biller`; :func:`open_ledger` and :func:`biller_session`
are the two halves, for callers that hold a ledger already.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from billing_api import BillingClient
from blocks import BillerCredentials
from ledger import Ledger
from ledger.settings import BillopsSettings
from tasks.common.run_logs import send_client_logs_to_runs


@dataclass
class BillerSession:
    """What the tasks of one biller share during a run."""

    block: str
    client: BillingClient
    biller_id: str
    biller_name: str
    ledger: Ledger


def open_ledger(url: str | None = None) -> Ledger:
    """The ledger the CLI and all deployments share (``BILLOPS_LEDGER_URL`` or the default file).

    It must exist already: ``billops setup`` or ``billops db upgrade`` create it, and a job never
    does (a job that silently started a fresh ledger would send everything again). A missing
    ledger, or one missing a table, raises :class:`~ledger.LedgerSchemaError` before anything
    is sent.
    """
    return Ledger(url or BillopsSettings().ledger_database_url, create=False)


class UnknownBiller(LookupError):
    """No biller credential block has the name a run or a command was given."""


def load_biller_block(block: str) -> BillerCredentials:
    """The biller credential block named ``block``, or :class:`UnknownBiller` saying how to make
    it (Prefect's own "Unable to find block document named ..." says neither what nor how)."""
    try:
        return BillerCredentials.load_named(block)
    except ValueError as exc:
        if "Unable to find block document" not in str(exc):
            raise
        raise UnknownBiller(
            f"no biller credential block named {block!r} on this Prefect server: create it "
            f"with `billops auth login --block {block} ...` (the sandbox: `billops sandbox login "
            f"--biller NAME --block {block}`); `prefect block ls` lists the blocks there are"
        ) from None


@contextmanager
def biller_session(block: str, ledger: Ledger) -> Iterator[BillerSession]:
    """Load the credential block, ask the service which biller it is, and close the client after.

    The ledger remembers which block serves the biller, so commands can take the block's name.
    """
    send_client_logs_to_runs()
    client = load_biller_block(block).get_client()
    try:
        biller = client.biller.retrieve()
        ledger.set_biller_block(str(biller.id), block)
        yield BillerSession(
            block=block,
            client=client,
            biller_id=str(biller.id),
            biller_name=str(getattr(biller, "name", "") or biller.id),
            ledger=ledger,
        )
    finally:
        client.close()


@contextmanager
def open_biller(block: str) -> Iterator[BillerSession]:
    """The ledger and the biller of a credential block for one run; both closed afterwards.

    When the run's work is done, the ledger is checked to be still the one the run started with
    (:class:`~ledger.LedgerReplaced` otherwise: deleted or swapped during the run).
    """
    ledger = open_ledger()
    try:
        identity = ledger.ledger_id()
        with biller_session(block, ledger) as session:
            yield session
        ledger.check_unchanged(identity)
    finally:
        ledger.close()


def all_biller_blocks() -> list[str]:
    """Names of every biller credential block on this Prefect server."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        documents = client.read_block_documents_by_type(
            BillerCredentials.get_block_type_slug(), include_secrets=False
        )
    return sorted(doc.name for doc in documents if doc.name)
