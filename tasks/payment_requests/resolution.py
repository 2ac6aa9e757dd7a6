"""How ``billops ledger resolve`` settles bulk imports: ask the service, never guess.

A known job is polled to its end and its items recorded; a chunk whose outcome is unknown is sent
again from the bytes the ledger kept (safe: its rows carry their ``externalId``). The command
hands this resolver only the operations of its kind (``billops/resolvers.py``).
"""

from __future__ import annotations

from billing_api import BillingClient
from ledger import Ledger, Operation, Resolution, Resolver
from tasks.common.polling import PollSettings
from tasks.common.workers import CLAIMS, worker_name
from tasks.payment_requests import jobs

KINDS = (jobs.KIND,)


def bulk_import_resolver(
    client: BillingClient, ledger: Ledger, settle: PollSettings | None = None
) -> Resolver:
    """A resolver for the import's operations (kinds :data:`KINDS`)."""
    poll = settle or PollSettings()

    def resolve(op: Operation) -> Resolution:
        if op.kind not in KINDS:
            raise LookupError(f"{op.kind} operations are settled by their own job, not here")
        settled = jobs.settle_one(client, ledger, op, poll, worker=worker_name(), claims=CLAIMS)
        return Resolution(
            settled.state, remote_id=settled.remote_id, result=settled.result, error=settled.error
        )

    return resolve
