"""Approval before a run deletes anything (ARCHITECTURE: approval before money moves).

From the Prefect UI the run pauses and shows a form (:class:`Approval`); from the CLI the operator
passes ``--approve-as NAME --reason TEXT`` up front. Either way the approval is written to the
ledger's audit table with the approver, the reason and the run id. A run with neither is refused
with a message that says how to approve it.
"""

from __future__ import annotations

from prefect.flow_runs import pause_flow_run
from prefect.input import RunInput
from prefect.runtime import deployment, flow_run

from ledger import Ledger

APPROVAL_TIMEOUT_SECONDS = 3600


class Approval(RunInput):
    """The form an operator fills in to let the run continue."""

    approve: bool = False
    approver: str = ""
    comment: str = ""


class ApprovalRequired(Exception):
    """The run would delete and nobody approved it."""


class ApprovalRefused(Exception):
    """An operator declined, or the approval form was incomplete."""


def require_approval(
    ledger: Ledger,
    *,
    action: str,
    subject: str,
    approved_by: str | None,
    reason: str | None,
    interactive: bool | None = None,
) -> str:
    """Return the approver's name once the action is approved; record it in the audit table.

    ``interactive``: pause for the UI form; by default only runs of a deployment do (a CLI run
    has nobody watching the UI, so it needs ``--approve-as``).
    """
    run_id = str(flow_run.get_id() or "")
    if approved_by:
        if not reason:
            raise ApprovalRequired(f"{action}: --reason is required with --approve-as")
        ledger.audit(
            actor=approved_by,
            action=f"approve:{action}",
            subject=subject,
            reason=reason,
            approver=approved_by,
            comment=reason,
            run_id=run_id,
        )
        return approved_by
    if interactive is None:
        interactive = deployment.get_id() is not None
    if not interactive:
        raise ApprovalRequired(
            f"{action} deletes payment requests and needs an approval: rerun with "
            "--approve-as NAME --reason TEXT (or run it from its deployment in the Prefect UI, "
            "which pauses for an approval form)"
        )
    answer = pause_flow_run(
        wait_for_input=Approval.with_initial_data(
            description=f"**{action}** on {subject} deletes payment requests. Approve?"
        ),
        timeout=APPROVAL_TIMEOUT_SECONDS,
    )
    if not answer.approve or not answer.approver.strip():
        ledger.audit(
            actor=answer.approver or "unknown",
            action=f"refuse:{action}",
            subject=subject,
            comment=answer.comment,
            run_id=run_id,
        )
        raise ApprovalRefused(f"{action} was not approved (approver {answer.approver!r})")
    ledger.audit(
        actor=answer.approver,
        action=f"approve:{action}",
        subject=subject,
        reason=answer.comment,
        approver=answer.approver,
        comment=answer.comment,
        run_id=run_id,
    )
    return answer.approver
