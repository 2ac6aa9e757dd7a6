"""How an unsettled pause, resume or cancel-on-failure is settled by asking the service
(``docs/conventions.md`` §6.3: every kind of write has a resolver).

The job's own next run does this for the calls its plan still wants (an unfinished call is looked
up before it is sent again); this resolver is for ``billops ledger resolve``: the payment
request's collection state says whether the call was applied (confirmed), a payment request
that no longer exists fails the call, and anything else goes back to ``intended`` (the calls
are idempotent on the wire, so the next run may make it).
"""

from __future__ import annotations

from billing_api import BillingClient, NotFound
from ledger import Operation, OperationState, Resolution, Resolver
from tasks.delinquency.apply import KIND, done_at_service
from tasks.delinquency.plan import Action

KINDS = tuple(KIND.format(action=action.value) for action in Action)


def delinquency_resolver(client: BillingClient) -> Resolver:
    """A resolver for the job's operations (kinds :data:`KINDS`)."""

    def resolve(op: Operation) -> Resolution:
        if op.kind not in KINDS:
            raise LookupError(f"{op.kind} operations are settled by their own job, not here")
        action = Action(op.kind.removeprefix("delinquency."))
        target = str((op.payload or {}).get("target") or op.key.split(":")[5])
        try:
            request = client.payment_requests.retrieve(target)
        except NotFound:
            return Resolution(OperationState.FAILED, error="404: the payment request is gone")
        if done_at_service(action, request):
            return Resolution(
                OperationState.CONFIRMED, remote_id=target, note="done at the service"
            )
        return Resolution(OperationState.INTENDED, note="not applied at the service: sendable")

    return resolve
