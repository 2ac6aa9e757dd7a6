"""What billops already did for each customer, read from the ledger's operations.

Every call the job makes is an operation whose key is ``delinquency:<biller>:<customer>:<period>:
<action>:<payment request>[:<mandate>]`` (:func:`operation_key`): the period is the hold
(``h<n>-<first day>``) for pauses and resumes, the state's entry (``<state>@<day>``) for
cancel-on-failure; the mandate is the one the call is made under. :class:`Done` groups a
customer's operations by period, action and payment request.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable
from dataclasses import dataclass, field
from enum import StrEnum

from ledger import Operation, OperationState
from ledger.delinquency import operation_prefix


class Action(StrEnum):
    """What a call does to one payment request."""

    PAUSE = "pause"
    RESUME = "resume"
    CANCEL_ON_FAILURE = "cancel-on-failure"


def operation_key(biller: str, customer_id: str, period: str, action: str, target: str) -> str:
    """The key of a call without its mandate suffix."""
    return f"{operation_prefix(biller, customer_id)}{period}:{action}:{target}"


@dataclass(frozen=True)
class Done:
    """What billops already did for one customer, read from the ledger's operations."""

    ops: dict[tuple[str, str, str], list[Operation]] = field(default_factory=dict)

    @classmethod
    def from_operations(cls, biller: str, operations: Iterable[Operation]) -> dict[str, Done]:
        """Operations grouped per customer, then by (period, action, target)."""
        grouped: dict[str, dict[tuple[str, str, str], list[Operation]]] = defaultdict(dict)
        for op in operations:
            parts = op.key.split(":", 6)
            if len(parts) < 6 or parts[1] != biller:
                continue
            customer, period, action, target = parts[2], parts[3], parts[4], parts[5]
            grouped[customer].setdefault((period, action, target), []).append(op)
        return {customer: cls(dict(ops)) for customer, ops in grouped.items()}

    def of(self, period: str, action: Action, target: str) -> list[Operation]:
        return self.ops.get((period, action.value, target), [])

    def confirmed(self, period: str, action: Action, target: str) -> bool:
        return any(op.state is OperationState.CONFIRMED for op in self.of(period, action, target))

    def unsettled(self, period: str, action: Action, target: str) -> bool:
        """An attempt at the call is still open (intended, in flight, or its answer lost)."""
        return any(not op.state.settled for op in self.of(period, action, target))

    def targets(self, period: str, action: Action, *, unsettled_too: bool = False) -> list[str]:
        """Targets billops made ``action`` on in ``period`` (confirmed; or still open, when
        ``unsettled_too``: an attempt whose answer was lost may have been applied)."""
        return sorted(
            target
            for (p, a, target), ops in self.ops.items()
            if p == period
            and a == action.value
            and any(
                op.state is OperationState.CONFIRMED or (unsettled_too and not op.state.settled)
                for op in ops
            )
        )

    def resumed_ever(self, target: str) -> bool:
        """Whether a resume of ``target`` by billops was confirmed in any period."""
        return any(
            a == Action.RESUME.value
            and t == target
            and any(o.state is OperationState.CONFIRMED for o in ops)
            for (_, a, t), ops in self.ops.items()
        )
