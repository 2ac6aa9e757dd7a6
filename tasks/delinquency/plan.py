"""The plan: from each customer's decision to the exact calls (which payment request, pause or
resume, which method), each a ledger operation keyed by customer, period, action, target and the
mandate it is made under.

Pure: it reads the evaluation, the snapshot's open debts and what the ledger says billops already
did (:class:`Done`). The rules (README, "Pausing collection for delinquent customers"):

- while a customer is in a pausing state (a *hold*, named ``h<n>-<first day>``), every open
  payment request collected by direct debit is paused — new debts too, on the next run — except
  one a person paused or resumed (billops never fights a person), one in ``SUBMITTED`` (it cannot be
  paused: deferred to the next run), and any while the customer has no usable mandate (the
  service refuses it, and nothing is collected anyway);
- an earlier pause left unsettled (its answer lost, or deferred while ``SUBMITTED``) is driven to
  its end, unless a person has resumed the debt since: then it is not made again, and the applied
  run settles its ledger operation by asking the service (``settles``: no call is made);
- when the hold ends with ``resume_collection``, billops resumes exactly what it paused in that
  hold and is still paused; a hold whose pauses cannot all be resumed yet (no usable mandate, a
  customer-level pause set in the console) stays open and is tried again on the next run;
- ``cancel_collection_on_failure`` is set once per state entry on each debit being collected.

The mandate is part of the key, so a call the service refused for want of a mandate is made
again, once, under the customer's next mandate, and never twice under the same one.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Mapping
from dataclasses import dataclass, replace
from datetime import date
from decimal import Decimal
from enum import StrEnum
from typing import Any

import pandas as pd

from ledger import OperationState
from tasks.delinquency.evaluate import Evaluation
from tasks.delinquency.history import Action, Done, operation_key
from tasks.delinquency.snapshot import NOT_DEBT_STATUSES, PAYMENT_REQUEST, to_pounds

__all__ = [
    "AUTO_COLLECT",
    "Action",
    "CallStatus",
    "Done",
    "Plan",
    "PlannedCall",
    "build_plan",
    "operation_key",
]

AUTO_COLLECT = "AUTO_COLLECT"
FINISH_NOTE = "an earlier attempt left no answer: the service is asked, then it is finished"
PERSON_RESUMED_NOTE = "collection resumed by a person: left collecting"
USABLE_MANDATE = ("PENDING", "ACTIVE")
SUBMITTED = "SUBMITTED"


class CallStatus(StrEnum):
    """Whether the call is part of this run."""

    SEND = "send"  # made by this run (a dry run only lists it)
    DEFERRED = "deferred"  # cannot be made today; tried again on the next run
    SKIPPED = "skipped"  # not made, on purpose; the note says why


@dataclass(frozen=True)
class PlannedCall:
    """One call of the plan, or one call deliberately not made (with the reason)."""

    biller: str
    customer_id: str
    customer_name: str
    before: str
    after: str
    action: Action
    target_id: str
    target_number: str
    invoice_id: str
    amount: Decimal
    due_on: date | None
    period: str
    mandate_id: str
    status: CallStatus
    note: str
    rule: str
    method: str = AUTO_COLLECT
    # Not made, but an earlier attempt under ``key`` is still open: the applied run settles it
    # by asking the service (never by sending it again).
    settles: bool = False

    @property
    def key(self) -> str:
        """The ledger key: customer, period, action, target and the mandate it is made under."""
        key = operation_key(self.biller, self.customer_id, self.period, self.action, self.target_id)
        return key if self.action is Action.CANCEL_ON_FAILURE else f"{key}:{self.mandate_id}"


@dataclass(frozen=True)
class Plan:
    """Every decision and every call of one run for one biller."""

    biller: str
    as_of: date
    evaluation: Evaluation
    calls: tuple[PlannedCall, ...]
    # Customers whose hold cannot end in this run (pauses left to resume on a later run).
    holds_kept_open: frozenset[str]

    @property
    def to_send(self) -> list[PlannedCall]:
        return [c for c in self.calls if c.status is CallStatus.SEND]

    @property
    def to_settle(self) -> list[PlannedCall]:
        """Calls not made whose earlier, unsettled attempt the applied run settles."""
        return [c for c in self.calls if c.settles]

    @property
    def customers_changed(self) -> int:
        """Customers whose collection this run changes (the blast-radius measure)."""
        return len({c.customer_id for c in self.to_send})

    @property
    def amount_changed(self) -> Decimal:
        """Pounds of the debts this run's calls touch, each debt once (the blast-radius measure)."""
        debts = {c.target_id: c.amount for c in self.to_send}
        return sum(debts.values(), Decimal("0.00"))

    def over_cap(self, max_customers: int, max_amount: Decimal) -> list[str]:
        """Why the plan exceeds the cap (empty when it does not)."""
        found = []
        if self.customers_changed > max_customers:
            found.append(f"{self.customers_changed} customers (cap {max_customers})")
        if self.amount_changed > max_amount:
            found.append(f"£{self.amount_changed:,.2f} (cap £{max_amount:,.2f})")
        return found


@dataclass(frozen=True)
class _Debt:
    target_id: str
    number: str
    invoice_id: str
    status: str
    amount: Decimal
    due_on: date | None
    collects: bool
    paused: bool
    override: str


def _debts(items: pd.DataFrame, customers: set[str]) -> dict[str, dict[str, _Debt]]:
    requests = items[(items["kind"] == PAYMENT_REQUEST) & items["customer_id"].isin(customers)]
    found: dict[str, dict[str, _Debt]] = defaultdict(dict)
    for row in requests.itertuples(index=False):
        if row.status in NOT_DEBT_STATUSES or row.due_pence <= 0:
            continue
        found[row.customer_id][row.item_id] = _Debt(
            target_id=row.item_id,
            number=row.number,
            invoice_id=row.invoice_id,
            status=row.status,
            amount=to_pounds(row.due_pence),
            due_on=None if pd.isna(row.due_on) else row.due_on.date(),
            collects=row.collection_method == AUTO_COLLECT or row.status == "SCHEDULED",
            paused=bool(row.auto_paused),
            override=row.auto_override,
        )
    return found


def build_plan(
    evaluation: Evaluation,
    items: pd.DataFrame,
    *,
    biller: str,
    done: Mapping[str, Done],
    customer_paused: frozenset[str] = frozenset(),
) -> Plan:
    """The calls for every customer in, entering or leaving a state (see the module docstring).

    ``customer_paused``: customers whose collection a person paused at customer level (their
    payment settings); a resume would override that pause, so billops leaves its own in place.
    """
    involved = evaluation.involved
    debts = _debts(items, set(involved["customer_id"]))
    calls: list[PlannedCall] = []
    kept_open: set[str] = set()
    for d in involved.to_dict("records"):
        customer = str(d["customer_id"])
        ctx = _Customer(d, biller, debts.get(customer, {}), done.get(customer, Done()))
        if d["holds"]:
            calls.extend(ctx.pauses())
        state = evaluation.policy.state(d["after"]) if d["after"] else None
        if state is not None and state.cancels_on_failure:
            calls.extend(ctx.cancels())
        if d["release"]:
            resumes = ctx.resumes(customer in customer_paused)
            calls.extend(resumes)
            if any(c.status is not CallStatus.SEND for c in resumes if c.action is Action.RESUME):
                kept_open.add(customer)
        elif d["keeps_paused"]:
            calls.extend(ctx.left_paused())
    return Plan(
        biller=biller,
        as_of=evaluation.as_of,
        evaluation=evaluation,
        calls=tuple(calls),
        holds_kept_open=frozenset(kept_open),
    )


class _Customer:
    """One customer's calls (a helper of :func:`build_plan`)."""

    def __init__(
        self, decision: Mapping[str, Any], biller: str, debts: dict[str, _Debt], done: Done
    ) -> None:
        self.d, self.biller, self.debts, self.done = decision, biller, debts, done
        self.mandate = str(decision["mandate_id"])
        self.usable = decision["mandate_status"] in USABLE_MANDATE

    def _call(
        self, action: Action, debt: _Debt, period: str, status: CallStatus, note: str
    ) -> PlannedCall:
        return PlannedCall(
            biller=self.biller,
            customer_id=str(self.d["customer_id"]),
            customer_name=str(self.d["name"]),
            before=str(self.d["before"]),
            after=str(self.d["after"]),
            action=action,
            target_id=debt.target_id,
            target_number=debt.number,
            invoice_id=debt.invoice_id,
            amount=debt.amount,
            due_on=debt.due_on,
            period=period,
            mandate_id=self.mandate,
            status=status,
            note=note,
            rule="; ".join(self.d["reasons"]),
        )

    def _finish(
        self,
        action: Action,
        debt: _Debt,
        period: str,
        status: CallStatus = CallStatus.SEND,
        note: str = FINISH_NOTE,
    ) -> PlannedCall:
        """The call of an earlier attempt that left no answer, under its own key (the service is
        asked first, so it is not made twice); not made, with ``status`` and ``note``, when it is
        only to be settled."""
        op = next(o for o in self.done.of(period, action, debt.target_id) if not o.state.settled)
        call = self._call(action, debt, period, status, note)
        settles = status is not CallStatus.SEND
        return replace(call, mandate_id=op.key.rsplit(":", 1)[1], settles=settles)

    def _resumed_by_person(self, debt: _Debt) -> bool:
        """A person resumed the debt: its override is ``RESUMED`` and billops never resumed it."""
        return debt.override == "RESUMED" and not self.done.resumed_ever(debt.target_id)

    def _open_or_new(self, period: str, action: Action, target: str) -> tuple[bool, str]:
        """(make the call, why not): an unsettled earlier attempt is driven to its end; one
        refused under this mandate is not made again."""
        ops = self.done.of(period, action, target)
        mine = [op for op in ops if op.key.endswith(f":{self.mandate}")] or (
            ops if action is Action.CANCEL_ON_FAILURE else []
        )
        if any(op.state is OperationState.FAILED for op in mine):
            error = next(op.error for op in mine if op.state is OperationState.FAILED)
            return False, f"refused by the service on an earlier run: {error}"
        return True, ""

    def pauses(self) -> list[PlannedCall]:
        period = str(self.d["hold_period"])
        calls = []
        for debt in self.debts.values():
            if not debt.collects:
                continue
            if self.done.confirmed(period, Action.PAUSE, debt.target_id):
                if not debt.paused:
                    calls.append(
                        self._call(
                            Action.PAUSE,
                            debt,
                            period,
                            CallStatus.SKIPPED,
                            "resumed by a person after billops paused it: left collecting",
                        )
                    )
                continue
            if self.done.unsettled(period, Action.PAUSE, debt.target_id):
                if self._resumed_by_person(debt):
                    # Finishing the attempt would pause again what a person resumed since.
                    note = (
                        f"{PERSON_RESUMED_NOTE}; the earlier attempt to pause it is not made again"
                    )
                    calls.append(self._finish(Action.PAUSE, debt, period, CallStatus.SKIPPED, note))
                else:
                    # An earlier attempt left no answer: finish it (the service is asked first).
                    calls.append(self._finish(Action.PAUSE, debt, period))
                continue
            send, why = self._open_or_new(period, Action.PAUSE, debt.target_id)
            status, note = self._pause_status(debt, send, why)
            if status is not None:
                calls.append(self._call(Action.PAUSE, debt, period, status, note))
        return calls

    def _pause_status(self, debt: _Debt, send: bool, why: str) -> tuple[CallStatus | None, str]:
        if not send:
            return CallStatus.SKIPPED, why
        if debt.paused:
            return None, ""  # a person (or the customer-level pause) did it: never billops' to undo
        if self._resumed_by_person(debt):
            return CallStatus.SKIPPED, PERSON_RESUMED_NOTE
        if not self.usable:
            return CallStatus.SKIPPED, (
                f"mandate {self.d['mandate_status']}: AUTO_COLLECT cannot be paused and nothing "
                "is collected by direct debit; collect on demand or ask for a new mandate"
            )
        if debt.status == SUBMITTED:
            return CallStatus.DEFERRED, "SUBMITTED to the bank: cannot be paused now; next run"
        return CallStatus.SEND, "pause AUTO_COLLECT"

    def cancels(self) -> list[PlannedCall]:
        period = f"{self.d['after']}@{self.d['since']}"
        calls = []
        for debt in self.debts.values():
            if not debt.collects or debt.status not in ("SCHEDULED", SUBMITTED):
                continue
            if self.done.confirmed(period, Action.CANCEL_ON_FAILURE, debt.target_id):
                continue
            send, why = self._open_or_new(period, Action.CANCEL_ON_FAILURE, debt.target_id)
            status = CallStatus.SEND if send else CallStatus.SKIPPED
            note = "cancel further collection if the next attempt fails" if send else why
            calls.append(self._call(Action.CANCEL_ON_FAILURE, debt, period, status, note))
        return calls

    def resumes(self, customer_level_pause: bool) -> list[PlannedCall]:
        period = str(self.d["old_hold_period"])
        calls = []
        for target in self.done.targets(period, Action.PAUSE, unsettled_too=True):
            debt = self.debts.get(target)
            if debt is None:
                continue  # paid or closed: nothing to resume
            if self.done.unsettled(period, Action.RESUME, target):
                calls.append(self._finish(Action.RESUME, debt, period))
                continue
            if not debt.paused or debt.override != "PAUSED":
                continue  # a person resumed it already (or the pause never happened)
            if self.done.confirmed(period, Action.RESUME, target):
                continue
            send, why = self._open_or_new(period, Action.RESUME, target)
            if not send:
                status, note = CallStatus.SKIPPED, why
            elif customer_level_pause:
                status, note = (
                    CallStatus.SKIPPED,
                    (
                        "the customer's collection is paused in the console (customer level): "
                        "billops leaves its own pauses until that is lifted"
                    ),
                )
            elif not self.usable:
                status, note = (
                    CallStatus.DEFERRED,
                    (
                        f"mandate {self.d['mandate_status']}: direct debit is not available, so "
                        "AUTO_COLLECT cannot be resumed; resumed once a mandate is active"
                    ),
                )
            else:
                status, note = CallStatus.SEND, "resume AUTO_COLLECT"
            calls.append(self._call(Action.RESUME, debt, period, status, note))
        return calls

    def left_paused(self) -> list[PlannedCall]:
        period = str(self.d["old_hold_period"])
        return [
            self._call(
                Action.RESUME,
                debt,
                period,
                CallStatus.SKIPPED,
                f"state {self.d['before']} does not resume collection: left paused for a person",
            )
            for target in self.done.targets(period, Action.PAUSE)
            if (debt := self.debts.get(target)) is not None and debt.paused
        ]
