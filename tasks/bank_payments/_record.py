"""Recording payments once: every payment a line leads to is a ledger operation through the shared
write-once protocol (intent → claim → send → outcome; ``docs/conventions.md`` §6 Writes).

The key is business data only: ``bank_payment:<biller>:<line key>:<target id>``. The
``reference`` sent with ``payments:import`` is derived from that key (``BOPS-`` and 16 hex
characters), so the payment carries where it came from. The service lists no payments
(``docs/service.md`` §19 Recording bank payments), so after an unknown outcome (a dropped
answer, a crash after sending) billops asks the service before sending again:

- an invoice: has its ``paidAmount`` grown by at least this payment since just before it was
  first sent (``paid_before``, kept with the intent)? A payment of the same invoice by other
  means in between can only make billops not resend, never pay twice;
- a payment request: is it ``PAID`` or ``SETTLED``?

That question has one answer only while one payment of an item is in doubt at a time, so within
a run an item whose payment's outcome stays unknown takes no further payment (the rest of its
lines wait for the next run, which asks first). A standalone payment request paid in full is
marked paid (``:mark-as-paid``); invoices take ``payments:import``, for part payments too.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from decimal import Decimal
from functools import partial

from billing_api import ApiError, BillingClient, TransportError
from ledger import Ledger, Operation, OperationState
from tasks.bank_payments._statement import pounds
from tasks.common.write_once import (
    ClaimPolicy,
    Intent,
    SendBudget,
    Sent,
    WriteAttempt,
    write_once,
)

KIND = "bank_payment"
PAID_STATUSES = ("PAID", "SETTLED")
WAITING = "waiting"


def operation_key(biller_id: str, line_key: str, target_id: str) -> str:
    """The ledger key of one payment: biller, statement line, target."""
    return f"{KIND}:{biller_id}:{line_key}:{target_id}"


def payment_reference(key: str) -> str:
    """The reference sent with ``payments:import``: derived from the operation key."""
    return "BOPS-" + hashlib.sha256(key.encode()).hexdigest()[:16].upper()


@dataclass(frozen=True)
class Payment:
    """One payment to record: the statement line it comes from and the open item it pays."""

    line: int
    line_key: str
    kind: str
    item_id: str
    number: str
    pennies: int


@dataclass(frozen=True)
class Recorded:
    """What happened to one payment in this run."""

    line: int
    line_key: str
    number: str
    kind: str
    amount: Decimal
    state: str
    payment_ids: list[str]
    note: str
    sent_now: bool  # sent by this run (so a confirmed payment was recorded by this run)

    @property
    def settled(self) -> bool:
        """Recorded at the service, or refused for good: nothing more will happen to it."""
        return self.state in (OperationState.CONFIRMED.value, OperationState.FAILED.value)


def _intent(biller_id: str, run_id: str, payment: Payment, paid_before: int) -> Intent:
    key = operation_key(biller_id, payment.line_key, payment.item_id)
    reference = payment_reference(key)
    digest = hashlib.sha256(
        f"{payment.kind}|{payment.item_id}|{payment.pennies}|{reference}".encode()
    )
    return Intent(
        key=key,
        kind=KIND,
        biller=biller_id,
        request_digest=digest.hexdigest(),
        run_id=run_id,
        payload={
            "line_key": payment.line_key,
            "line": payment.line,
            "target_kind": payment.kind,
            "target_id": payment.item_id,
            "number": payment.number,
            "amount": str(pounds(payment.pennies)),
            "reference": reference,
            "paid_before": paid_before,
        },
    )


def _pennies_of(value: object) -> int:
    return int((Decimal(str(value or 0)) * 100).to_integral_value())


def _sender(client: BillingClient, payload: dict[str, object]) -> Callable[[], Sent]:
    target = str(payload["target_id"])
    if payload["target_kind"] == "payment_request":

        def mark_paid() -> Sent:
            pr = client.payment_requests.mark_as_paid(target)
            return Sent(remote_id=str(pr.id), result={"status": str(pr.status), "payments": []})

        return mark_paid

    def import_payment() -> Sent:
        answer = client.payments.import_payment(
            invoice_id=target,
            amount=Decimal(str(payload["amount"])),
            reference=str(payload["reference"]),
        )
        ids = [str(p.id) for p in answer.payments]
        return Sent(remote_id=ids[0] if ids else None, result={"payments": ids})

    return import_payment


def _look_up(client: BillingClient) -> Callable[[Operation], Sent | None]:
    def look_up(op: Operation) -> Sent | None:
        payload = op.payload or {}
        target = str(payload["target_id"])
        if payload.get("target_kind") == "payment_request":
            pr = client.payment_requests.retrieve(target)
            if str(pr.status) in PAID_STATUSES:
                return Sent(remote_id=target, result={"status": str(pr.status), "found": True})
            return None
        invoice = client.invoices.retrieve(target)
        paid_now = _pennies_of(invoice.paid_amount)
        if paid_now >= int(payload["paid_before"]) + _pennies_of(payload["amount"]):
            return Sent(remote_id=None, result={"payments": [], "found": True})
        return None

    return look_up


@dataclass
class PaidSoFar:
    """What is paid on each invoice as this run goes (pennies), starting from the open items."""

    paid: dict[str, int]

    def before(self, item_id: str) -> int:
        return self.paid.get(item_id, 0)

    def add(self, item_id: str, pennies: int) -> None:
        self.paid[item_id] = self.paid.get(item_id, 0) + pennies


def record_payments(
    client: BillingClient,
    ledger: Ledger,
    payments: Sequence[Payment],
    *,
    biller_id: str,
    run_id: str,
    worker: str,
    paid: PaidSoFar,
    claims: ClaimPolicy,
    budget: SendBudget | None = None,
) -> list[Recorded]:
    """Record each payment once, in order; returns what happened to each (see the module
    docstring for the item that waits)."""
    done: list[Recorded] = []
    look_up = _look_up(client)
    in_doubt: set[str] = set()
    for payment in payments:
        if payment.item_id in in_doubt:
            done.append(_waiting(payment))
            continue
        intent = _intent(biller_id, run_id, payment, paid.before(payment.item_id))
        attempt = partial(
            write_once,
            ledger,
            intent,
            _sender(client, intent.payload),
            worker=worker,
            claims=claims,
            budget=budget,
            look_up=look_up,
        )
        try:
            op, sent_in_run, note = _twice(attempt)
        except (ApiError, TransportError) as exc:
            unasked = _left_unknown(ledger, intent.key, exc)
            if unasked is None:
                raise  # refused before anything was applied (429, 401, 403): stop the run
            in_doubt.add(payment.item_id)
            done.append(unasked(payment))
            continue
        if op.state is OperationState.CONFIRMED and sent_in_run:
            # Sent in this run, so not in the paid amounts fetched before it.
            paid.add(payment.item_id, payment.pennies)
        elif not op.state.settled:
            in_doubt.add(payment.item_id)
        done.append(_recorded(payment, op, note or (op.error or ""), sent_in_run))
    return done


def _twice(attempt: Callable[[], WriteAttempt]) -> tuple[Operation, bool, str]:
    """One write; when its answer was lost, a second go that asks the service first (look_up)
    and sends again only if the payment is not there (the run's send budget bounds how often).
    Returns the operation, whether this run sent it, and a note."""
    first = attempt()
    if first.operation.state is not OperationState.UNKNOWN:
        return first.operation, first.sent_now, first.note
    second = attempt()
    return second.operation, first.sent_now or second.sent_now, second.note


def _recorded(payment: Payment, op: Operation, note: str, sent_now: bool) -> Recorded:
    return Recorded(
        line=payment.line,
        line_key=payment.line_key,
        number=payment.number,
        kind=payment.kind,
        amount=pounds(payment.pennies),
        state=op.state.value,
        payment_ids=[str(p) for p in (op.result or {}).get("payments", [])],
        note=note,
        sent_now=sent_now,
    )


def _left_unknown(ledger: Ledger, key: str, exc: Exception) -> Callable[[Payment], Recorded] | None:
    """When asking the service after a lost answer failed, the payment stays unknown (the next
    run asks again) and the run goes on with other items; any other failure is None."""
    op = ledger.get(key)
    if op is None or op.state is not OperationState.UNKNOWN:
        return None

    def recorded(payment: Payment) -> Recorded:
        return Recorded(
            line=payment.line,
            line_key=payment.line_key,
            number=payment.number,
            kind=payment.kind,
            amount=pounds(payment.pennies),
            state=OperationState.UNKNOWN.value,
            payment_ids=[],
            note=f"in doubt, and the service could not be asked ({exc}): the next run asks again",
            sent_now=False,
        )

    return recorded


def _waiting(payment: Payment) -> Recorded:
    return Recorded(
        line=payment.line,
        line_key=payment.line_key,
        number=payment.number,
        kind=payment.kind,
        amount=pounds(payment.pennies),
        state=WAITING,
        payment_ids=[],
        note=f"waits for the next run: an earlier payment of {payment.number} is in doubt",
        sent_now=False,
    )


def confirmed(state: str) -> bool:
    """Whether an operation state means the payment is recorded at the service."""
    return state == OperationState.CONFIRMED.value
