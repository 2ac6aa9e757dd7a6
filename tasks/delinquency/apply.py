"""Making the plan's calls, each once, through the write-once protocol (``tasks.common``).

Pause and resume are idempotent on the wire, but a repeat is still a call made twice, and the
ledger is what says billops made a pause (so that it, and only it, is resumed later). So every call
is *intent → claim → send → outcome* under the plan's key, and a call whose first attempt left no
answer is looked up on the service (the payment request's collection state) before it is sent
again.

How the contract's answers are handled (``docs/service.md`` §12 Pausing collection):

- 204: done; audited with the rule that caused it;
- ``COLLECTION_METHOD_NOT_ELIGIBLE`` / ``DIRECT_DEBIT_NOT_AVAILABLE``: refused, reported with the
  customer and what to do, never retried under the same mandate;
- ``COLLECTION_METHOD_NOT_ELIGIBLE`` because the debit went to the bank meanwhile
  (``SUBMITTED``): deferred, tried again on the next run (its operation goes back to
  ``intended`` marked :data:`DEFERRED`: the service certainly did not apply it);
- 404: the payment request is gone; dropped;
- 500 (after the client's retries): outcome unknown; the next run asks the service first;
- 401, 403, 429, no connection: nothing was applied; the run stops, every call not yet made is
  listed as not sent, and a rerun makes them.

A pause the plan leaves to a person (the debt was resumed by hand after an attempt whose outcome
is still open) is never sent again; :meth:`Applier.settle` records what the service shows.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from enum import StrEnum

from billing_api import (
    ApiError,
    BillingClient,
    CollectionMethodNotEligible,
    DirectDebitNotAvailable,
    Forbidden,
    NotFound,
    RateLimited,
    ServerError,
    TransportError,
    Unauthorized,
    Unprocessable,
)
from billing_api.types import PaymentRequest
from ledger import Ledger, Operation, OperationState
from tasks.common.workers import CLAIMS
from tasks.common.write_once import Intent, SendBudget, Sent, record_sent, write_once
from tasks.delinquency.plan import Action, PlannedCall
from tasks.delinquency.snapshot import auto_collect_state

KIND = "delinquency.{action}"
# How a deferred pause's operation is marked (its error), so that it is never taken for one whose
# answer was lost: the service refused it, nothing was applied.
DEFERRED = "deferred: the service refused the pause while the debit was SUBMITTED to the bank"


class Outcome(StrEnum):
    """What became of one call in this run."""

    DONE = "done"  # made now, and the service said 204
    ALREADY_DONE = "already done"  # made by an earlier run (the ledger says so)
    FOUND = "found done"  # an earlier attempt's answer was lost; the service shows it done
    REFUSED = "refused"  # the service said no; the detail says what to do
    DROPPED = "dropped"  # the payment request no longer exists (404)
    DEFERRED = "deferred"  # not possible today (SUBMITTED); next run
    UNKNOWN = "unknown"  # no answer; the next run asks the service before sending again
    NOT_SENT = "not sent"  # the run stopped before this call; a rerun makes it


@dataclass(frozen=True)
class CallOutcome:
    """One call and what became of it."""

    call: PlannedCall
    outcome: Outcome
    detail: str = ""


class ApplyStopped(Exception):
    """The service refused every call (token, permission, rate limit, no connection)."""


class _Deferred(Exception):
    """The payment request went to the bank (SUBMITTED) after the plan was made."""


class _ServiceTrouble(Exception):
    """A 5xx after the client's retries: the call may or may not have been applied."""


@dataclass(frozen=True)
class Applier:
    """What every call of a run shares: the client, the ledger, who approved, the run."""

    client: BillingClient
    ledger: Ledger
    run_id: str
    worker: str
    actor: str
    approver: str | None
    policy_digest: str
    budget: SendBudget
    stop: threading.Event

    def make(self, call: PlannedCall) -> CallOutcome:
        """Make one call once (see the module docstring); raise :class:`ApplyStopped` when the
        service refuses all calls."""
        if self.stop.is_set():
            return CallOutcome(call, Outcome.NOT_SENT, "the run stopped before this call")
        refusal: list[Exception] = []
        try:
            attempt = write_once(
                self.ledger,
                self._intent(call),
                self._sender(call, refusal),
                worker=self.worker,
                claims=CLAIMS,
                budget=self.budget,
                look_up=self._looker(call),
            )
        except _Deferred as exc:
            # Certainly not applied (the service refused it): sendable again as it was, and
            # marked so that a later run knows no pause of billops' reached the service.
            self.ledger.release(call.key, reason=f"{DEFERRED}: {exc}")
            return CallOutcome(call, Outcome.DEFERRED, str(exc))
        except _ServiceTrouble as exc:
            return CallOutcome(call, Outcome.UNKNOWN, f"{exc}; checked with the service next run")
        except (Unauthorized, Forbidden, RateLimited, TransportError) as exc:
            self.stop.set()
            raise ApplyStopped(_stopped(exc)) from exc
        outcome = _outcome(attempt.operation, attempt.sent_now, attempt.note, refusal, call)
        if outcome.outcome in (Outcome.DONE, Outcome.FOUND):
            self._audit(call, outcome)
        return outcome

    def settle(self, call: PlannedCall) -> CallOutcome:
        """Settle the open earlier attempt of a pause the plan does not make again because a
        person resumed the debt since (``call.settles``); nothing is sent.

        The operation is claimed first (``docs/conventions.md`` §6.1: one worker at a time), then:
        a pause deferred while ``SUBMITTED`` was refused by the service and never applied, so it
        is recorded as refused; any other attempt is looked up at the service, and a debt whose
        collection shows resumed (a person's resume presupposes the pause) or paused records the
        pause as found done, as the look-up of a resend does. Anything else stays open for the
        next run."""
        if self.stop.is_set():
            return CallOutcome(call, Outcome.NOT_SENT, "the run stopped: settled on a later run")
        op = self.ledger.get(call.key)
        if op is None or op.state.settled:
            return CallOutcome(call, Outcome.ALREADY_DONE, "settled by an earlier run")
        if op.state is OperationState.INTENDED and op.attempts == 0:
            return CallOutcome(
                call, Outcome.NOT_SENT, "the earlier attempt was never sent: left intended"
            )
        error = op.error or ""  # read before the claim, which clears it
        if CLAIMS.claim(self.ledger, call.key, self.worker) is None:
            return CallOutcome(call, Outcome.UNKNOWN, "being sent by another worker: next run")
        if error.startswith(DEFERRED):
            self.ledger.mark_failed(
                call.key, error=f"{error}; not made again: collection resumed by a person"
            )
            return CallOutcome(
                call, Outcome.REFUSED, "the service had refused it while SUBMITTED: never applied"
            )
        try:
            request = self.client.payment_requests.retrieve(call.target_id)
        except NotFound:
            self.ledger.mark_failed(call.key, error="404: the payment request is gone")
            return CallOutcome(call, Outcome.DROPPED, "404: the payment request no longer exists")
        except (ApiError, TransportError) as exc:
            self.ledger.mark_unknown(call.key, error=f"look-up failed: {type(exc).__name__}")
            return CallOutcome(call, Outcome.UNKNOWN, "the service could not be asked: next run")
        state = auto_collect_state(request)
        if state is None or not (
            state.override == "RESUMED" or done_at_service(Action.PAUSE, request)
        ):
            self.ledger.mark_unknown(
                call.key, error="the service shows no resume or pause of it: asked again next run"
            )
            return CallOutcome(call, Outcome.UNKNOWN, "the service shows no resume: next run")
        found = Sent(
            remote_id=call.target_id,
            result={"action": call.action.value, "then": "collection resumed by a person"},
        )
        record_sent(self.ledger, call.key, found)
        # Whether that attempt landed cannot always be told (a dropped answer and a refusal can
        # both leave the operation open): the note says what is known, a person's resume.
        outcome = CallOutcome(
            call,
            Outcome.FOUND,
            "a person resumed collection after the earlier attempt, whose answer never came: "
            "not sent again; its operation is settled as done by that attempt",
        )
        self._audit(call, outcome)
        return outcome

    def _intent(self, call: PlannedCall) -> Intent:
        return Intent(
            key=call.key,
            kind=KIND.format(action=call.action.value),
            biller=call.biller,
            request_digest=f"{call.action.value}:{call.target_id}:{call.method}",
            run_id=self.run_id,
            payload={
                "customer": call.customer_id,
                "target": call.target_id,
                "period": call.period,
                "mandate": call.mandate_id,
                "method": call.method,
                "state": call.after,
                "policy": self.policy_digest,
            },
        )

    def _sender(self, call: PlannedCall, refusal: list[Exception]) -> Callable[[], Sent]:
        requests = self.client.payment_requests

        def send() -> Sent:
            try:
                if call.action is Action.PAUSE:
                    requests.pause_collection(call.target_id, methods=[call.method])
                elif call.action is Action.RESUME:
                    requests.resume_collection(call.target_id, methods=[call.method])
                else:
                    requests.cancel_collection_on_failure(call.target_id)
            except CollectionMethodNotEligible as exc:
                if call.action is Action.PAUSE and _status(self.client, call) == "SUBMITTED":
                    raise _Deferred(
                        "SUBMITTED to the bank since the plan was made: paused on the next run"
                    ) from exc
                refusal.append(exc)
                raise
            except ServerError as exc:
                raise _ServiceTrouble(f"the service failed ({exc.status_code})") from exc
            except (DirectDebitNotAvailable, NotFound, Unprocessable) as exc:
                refusal.append(exc)
                raise
            return Sent(remote_id=call.target_id, result={"action": call.action.value})

        return send

    def _looker(self, call: PlannedCall) -> Callable[[Operation], Sent | None]:
        def look_up(_op: Operation) -> Sent | None:
            try:
                request = self.client.payment_requests.retrieve(call.target_id)
            except NotFound:
                return None  # sending again answers 404, which drops the call
            if done_at_service(call.action, request):
                return Sent(remote_id=call.target_id, result={"action": call.action.value})
            return None

        return look_up

    def _audit(self, call: PlannedCall, outcome: CallOutcome) -> None:
        self.ledger.audit(
            actor=self.actor,
            action=f"delinquency:{call.action.value}",
            subject=f"payment_request:{call.target_id}",
            reason=call.rule,
            approver=self.approver,
            run_id=self.run_id,
            details={
                "customer": call.customer_id,
                "customer_name": call.customer_name,
                "state": call.after,
                "period": call.period,
                "amount": str(call.amount),
                "method": call.method,
                "policy": self.policy_digest,
                "outcome": outcome.outcome.value,
            },
        )


def apply_calls(applier: Applier, calls: Sequence[PlannedCall]) -> list[CallOutcome]:
    """Make ``calls`` in order; once the run is stopped, the rest are listed as not sent."""
    outcomes = []
    for index, call in enumerate(calls):
        try:
            outcomes.append(applier.make(call))
        except ApplyStopped as exc:
            outcomes.append(CallOutcome(call, Outcome.NOT_SENT, str(exc)))
            outcomes.extend(
                CallOutcome(rest, Outcome.NOT_SENT, "the run stopped before this call")
                for rest in calls[index + 1 :]
            )
            break
    return outcomes


def _status(client: BillingClient, call: PlannedCall) -> str:
    try:
        return str(client.payment_requests.retrieve(call.target_id).status)
    except Exception:  # cannot tell: treat the refusal as it came
        return ""


def done_at_service(action: Action, request: PaymentRequest) -> bool:
    """Whether the service shows ``action`` applied to the payment request."""
    if action is Action.CANCEL_ON_FAILURE:
        return bool(request.cancel_collection_on_failure)
    state = auto_collect_state(request)
    if state is None:
        return False
    if action is Action.PAUSE:
        return state.paused and state.override == "PAUSED"
    return state.override == "RESUMED" or not state.paused


def _outcome(
    op: Operation, sent_now: bool, note: str, refusal: list[Exception], call: PlannedCall
) -> CallOutcome:
    if op.state is OperationState.CONFIRMED:
        if sent_now:
            return CallOutcome(call, Outcome.DONE, f"{call.action.value}: 204")
        found = note == "found at the service"
        return CallOutcome(call, Outcome.FOUND if found else Outcome.ALREADY_DONE, note)
    if op.state is OperationState.FAILED:
        error = refusal[0] if refusal else None
        if isinstance(error, NotFound):
            return CallOutcome(call, Outcome.DROPPED, "404: the payment request no longer exists")
        return CallOutcome(call, Outcome.REFUSED, _what_to_do(call, error, op.error or ""))
    return CallOutcome(call, Outcome.UNKNOWN, note or f"left {op.state.value}: next run")


def _what_to_do(call: PlannedCall, error: Exception | None, text: str) -> str:
    who = f"{call.customer_name} ({call.customer_id})"
    if isinstance(error, CollectionMethodNotEligible):
        return (
            f"COLLECTION_METHOD_NOT_ELIGIBLE: AUTO_COLLECT cannot be paused for {who} (no usable "
            "direct-debit mandate). Nothing is collected by direct debit meanwhile; collect on "
            "demand, or ask the customer for a new mandate (billops pauses again under it)"
        )
    if isinstance(error, DirectDebitNotAvailable):
        return (
            f"DIRECT_DEBIT_NOT_AVAILABLE: {who} has no active or pending mandate, so direct debit "
            "cannot be resumed. Ask the customer for a new mandate (billops resumes under it on a "
            "later run) or collect on demand"
        )
    if isinstance(error, Unprocessable):
        return f"422: {call.target_number} is not being collected by direct debit any more"
    return f"refused: {text}"


def _stopped(exc: Exception) -> str:
    if isinstance(exc, Forbidden):
        return (
            "403: the biller's token does not allow updating payment requests; log in again with "
            "write access (billops auth login --block NAME) and rerun"
        )
    if isinstance(exc, Unauthorized):
        return "401: the service refused the biller's token; check `billops auth status` and rerun"
    if isinstance(exc, RateLimited):
        return "429: the service is rate limiting this biller; rerun later (nothing was applied)"
    return f"no connection to the service ({exc}); rerun when it is reachable"
