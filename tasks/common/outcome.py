"""How a run ends: a named state that says its outcome, for every job.

A run that worked but whose outcome needs a person — a file rejected, rows skipped, an approval
refused — ends ``Completed`` (it is not a crash: retrying would do the same) under a name that
says so, with the outcome as the state's message, so the Prefect UI's run list shows it instead of
a plain green "Completed". A run that needs attention also emits a ``billops.run.needs-attention``
event, so one automation can catch every job's problems (the README's "Notifications"). A run
that could not do its work still fails (an exception), and its ``Failed`` state is what the
"Failed or Crashed" automation catches.

Names every job shares (a job may add its own, named the same way: what happened, capitalised):

- ``Completed`` — did what it was asked; ``Dry run`` — reported only, nothing sent;
- ``Rejected`` — the input was refused, nothing was sent;
- ``Completed with rejections`` — the good part was done, some input was refused;
- ``Completed with failures`` — sent, and the service refused some of it;
- ``Already imported`` — this exact input was done before, nothing sent;
- ``Pending`` — sent, the service has not finished (the nightly run settles it);
- ``Approval refused`` / ``Approval expired`` — a person said no, or nobody answered in time.

Use: ``return end_run(Outcome(REJECTED, "3 bad rows: nothing was sent", attention=True), data)``
from the flow; a caller of the flow gets ``data`` back, the UI shows the name and message. A run
that did its work for some and failed for others (the nightly run when a biller failed) returns
:func:`failed_run` instead: a ``Failed`` state under its own name, after its report is written.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from prefect.client.schemas.objects import State
from prefect.events import emit_event
from prefect.runtime import flow_run
from prefect.states import Completed, Failed

from tasks.common.approval import ApprovalRefused

COMPLETED = "Completed"
DRY_RUN = "Dry run"
REJECTED = "Rejected"
WITH_REJECTIONS = "Completed with rejections"
WITH_FAILURES = "Completed with failures"
ALREADY_IMPORTED = "Already imported"
PENDING = "Pending"
APPROVAL_REFUSED = "Approval refused"
APPROVAL_EXPIRED = "Approval expired"
ATTENTION_EVENT = "billops.run.needs-attention"


@dataclass(frozen=True)
class Outcome:
    """The end of one run: its state's name, its message, and whether a person should look."""

    name: str
    message: str
    attention: bool = False


def refused(exc: ApprovalRefused) -> Outcome:
    """The outcome of a run whose approval was refused or never given in time."""
    name = APPROVAL_EXPIRED if exc.decision.expired else APPROVAL_REFUSED
    return Outcome(name, f"{exc}: nothing was sent", attention=True)


def end_run(outcome: Outcome, data: Any = None) -> State[Any]:
    """The run's final state (returned by the flow): ``Completed`` under the outcome's name."""
    if outcome.attention:
        run_id = str(flow_run.get_id() or "")
        emit_event(
            event=ATTENTION_EVENT,
            resource={
                "prefect.resource.id": f"prefect.flow-run.{run_id}",
                "prefect.resource.name": str(flow_run.get_name() or run_id),
            },
            payload={
                "outcome": outcome.name,
                "message": outcome.message,
                "flow": str(flow_run.get_flow_name() or ""),
            },
        )
    return Completed(name=outcome.name, message=outcome.message, data=data)


def failed_run(outcome: Outcome, error: Exception) -> State[Any]:
    """The final state of a run that failed after writing its report: ``Failed`` under the
    outcome's name and message (caught by the "Failed or Crashed" automation); a caller of the
    flow gets ``error`` raised."""
    return Failed(name=outcome.name, message=outcome.message, data=error)
