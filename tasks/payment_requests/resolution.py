"""How ``billops ledger resolve`` settles bulk imports: ask the service, never guess.

A known job is polled to its end and its items recorded; a chunk whose outcome is unknown is sent
again from the bytes the ledger kept (safe: its rows carry their ``externalId``). Operations of
other kinds are left for the jobs that own them (reported as not resolvable here).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from billing_api import BillingClient
from ledger import Ledger, Operation, Resolution, Resolver
from tasks.common.polling import PollSettings
from tasks.common.session import biller_session
from tasks.common.workers import CLAIMS, worker_name
from tasks.payment_requests import jobs


def _resolver(ledger: Ledger, settle: PollSettings, client: BillingClient) -> Resolver:
    def resolve(op: Operation) -> Resolution:
        if op.kind != jobs.KIND:
            raise LookupError(f"{op.kind} operations are settled by their own job, not here")
        settled = jobs.settle_one(client, ledger, op, settle, worker=worker_name(), claims=CLAIMS)
        return Resolution(
            settled.state, remote_id=settled.remote_id, result=settled.result, error=settled.error
        )

    return resolve


@contextmanager
def import_resolver(block: str, ledger: Ledger) -> Iterator[tuple[str, Resolver]]:
    """For ``ledger_cli.set_resolver_factory``: the biller id and a resolver over its client."""
    with biller_session(block, ledger) as session:
        yield session.biller_id, _resolver(ledger, PollSettings(), session.client)
