"""What ``billops ledger resolve`` asks the service, by kind of operation.

Each kind of write has its resolver beside the job that makes it (``docs/conventions.md`` §6.3
Rule for new code): the bulk import's (``tasks/payment_requests/resolution.py``) and the
delinquency job's pauses, resumes and cancel-on-failure (``tasks/delinquency/resolution.py``).
The biller's session is opened once and each unsettled operation goes to the resolver of its
kind. A kind with no resolver here is reported, not guessed at: its job's next run asks the
service before it sends again.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from contextlib import contextmanager

from billing_api import BillingClient
from ledger import Ledger, Operation, Resolution, Resolver

# A job's resolver over the biller's client and the open ledger.
JobResolver = Callable[[BillingClient, Ledger], Resolver]


def job_resolvers() -> dict[str, JobResolver]:
    """Operation kind → how to build the resolver of the job that writes it."""
    from tasks.delinquency.resolution import KINDS as DELINQUENCY_KINDS
    from tasks.delinquency.resolution import delinquency_resolver
    from tasks.payment_requests.resolution import KINDS as IMPORT_KINDS
    from tasks.payment_requests.resolution import bulk_import_resolver

    found: dict[str, JobResolver] = {}
    for kind in IMPORT_KINDS:
        found[kind] = bulk_import_resolver
    for kind in DELINQUENCY_KINDS:
        found[kind] = lambda client, _ledger: delinquency_resolver(client)
    return found


def by_kind(client: BillingClient, ledger: Ledger, jobs: Mapping[str, JobResolver]) -> Resolver:
    """One resolver that hands each operation to its kind's, each built once, when first needed."""
    built: dict[str, Resolver] = {}

    def resolve(op: Operation) -> Resolution:
        if op.kind not in jobs:
            raise LookupError(
                f"no resolver for {op.kind} operations: the job's next run asks the service "
                "before sending again"
            )
        if op.kind not in built:
            built[op.kind] = jobs[op.kind](client, ledger)
        return built[op.kind](op)

    return resolve


@contextmanager
def service_resolver(block: str, ledger: Ledger) -> Iterator[tuple[str, Resolver]]:
    """For ``ledger_cli.set_resolver_factory``: the biller id and a resolver over its client."""
    from tasks.common.session import biller_session

    with biller_session(block, ledger) as session:
        yield session.biller_id, by_kind(session.client, ledger, job_resolvers())
