"""Approval before a run makes a write people must agree to (deleting, voiding, paying;
``docs/conventions.md`` §10 Dry run and approval).

An approval comes from a person, through one of two channels, and never from a run parameter
(anyone who can start a run could fill one in, and a retry would replay it):

- ``ui-form``: a deployment's run pauses and the Prefect UI shows a form (:class:`Approval`)
  saying what is asked (the action, its facts: counts, totals, deletions) and until when. A
  ``billops.approval.requested`` event is emitted first, so an automation can tell someone. Each
  pause has a key of its own, so a retried run asks again instead of reading the earlier answer.
- ``cli``: a person at a terminal runs the flow in the CLI's own process inside
  :func:`approved_from_cli` (``--approve-as NAME --reason TEXT``): a context of that process,
  which no deployment form can set.

Either way the decision is written to the ledger's audit table with the approver, the reason, the
run id, the run's attempt and the channel. A refusal (or a form nobody answered in time) raises
:class:`ApprovalRefused`, which flows turn into a named, non-failed state
(:func:`tasks.common.outcome.refused`). A run with neither channel raises
:class:`ApprovalRequired`, saying how to approve.
"""

from __future__ import annotations

import contextlib
import contextvars
import threading
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any, Literal
from uuid import UUID, uuid4
from zoneinfo import ZoneInfo

from prefect.events import emit_event
from prefect.flow_runs import pause_flow_run, resume_flow_run
from prefect.input import RunInput
from prefect.runtime import deployment, flow_run
from pydantic import Field

from ledger import Ledger

APPROVAL_TIMEOUT_SECONDS = 3600
APPROVAL_POLL_SECONDS = 5  # how soon the run notices the form was answered
CLOSING_GRACE_SECONDS = 60
NOBODY = "(nobody: the form expired)"
APPROVAL_EVENT = "billops.approval.requested"
LONDON = ZoneInfo("Europe/London")
Channel = Literal["cli", "ui-form"]


class Approval(RunInput):
    """The approval form. Nothing is preset: a form submitted unchanged is refused by Prefect's
    validation, never read as a refusal or an approval."""

    decision: Literal["approve", "refuse"] = Field(
        description="approve: the run goes on and makes the writes described above; "
        "refuse: it ends now and sends nothing."
    )
    approver: str = Field(
        min_length=1, description="Your name, as it goes into the ledger's audit table."
    )
    reason: str = Field(min_length=1, description="Why: recorded with your decision.")


@dataclass(frozen=True)
class CliApproval:
    """A person's approval given at the terminal."""

    approver: str
    reason: str


@dataclass(frozen=True)
class Decision:
    """A person's answer, as recorded in the audit table."""

    approved: bool
    approver: str
    reason: str
    channel: Channel
    expired: bool = False

    @property
    def message(self) -> str:
        if self.expired:
            return f"nobody answered the approval form in time: {self.reason}"
        verb = "approved" if self.approved else "refused"
        return f"{verb} by {self.approver} ({self.channel}): {self.reason}"


class ApprovalRequired(Exception):
    """The run needs an approval and has no channel to ask for one."""


class ApprovalRefused(Exception):
    """A person refused (or nobody answered in time); ``decision`` says who, why and how."""

    def __init__(self, action: str, decision: Decision) -> None:
        super().__init__(f"{action}: {decision.message}")
        self.decision = decision


_cli: ContextVar[CliApproval | None] = ContextVar("billops_cli_approval", default=None)


@contextmanager
def approved_from_cli(approver: str, reason: str) -> Iterator[None]:
    """Runs started inside this block, in this process, are approved by ``approver``."""
    if not approver.strip() or not reason.strip():
        raise ValueError("an approval needs the approver's name and a reason")
    token = _cli.set(CliApproval(approver.strip(), reason.strip()))
    try:
        yield
    finally:
        _cli.reset(token)


def cli_approval() -> CliApproval | None:
    """The terminal approval in force in this process, if any."""
    return _cli.get()


def require_approval(
    ledger: Ledger,
    *,
    action: str,
    subject: str,
    consequence: str,
    facts: Sequence[tuple[str, str]] = (),
    interactive: bool | None = None,
) -> Decision:
    """The approval of ``action`` on ``subject``, recorded in the audit table.

    ``consequence`` says what approving lets happen ("deletes payment requests"); ``facts`` are
    the numbers a person approves (("rows to send", "12"), ("total", "£1,234.00"), ...).
    ``interactive``: pause for the UI form; by default only a deployment's runs do (a run started
    at a terminal has nobody watching the UI: it needs ``--approve-as``).
    Raises :class:`ApprovalRefused` or :class:`ApprovalRequired`.
    """
    given = cli_approval()
    if given is not None:
        decision = Decision(True, given.approver, given.reason, "cli")
        _audit(ledger, action, subject, decision, facts)
        return decision
    if interactive is None:
        interactive = deployment.get_id() is not None
    if not interactive:
        raise ApprovalRequired(
            f"{action} {consequence} and needs an approval: rerun with "
            "--approve-as NAME --reason TEXT (or run it from its deployment in the Prefect UI, "
            "which pauses for an approval form)"
        )
    decision = _ask_on_the_form(action, subject, consequence, facts)
    _audit(ledger, action, subject, decision, facts)
    if not decision.approved:
        raise ApprovalRefused(action, decision)
    return decision


def _ask_on_the_form(
    action: str, subject: str, consequence: str, facts: Sequence[tuple[str, str]]
) -> Decision:
    timeout = APPROVAL_TIMEOUT_SECONDS
    deadline = datetime.now(UTC) + timedelta(seconds=timeout)
    until = deadline.astimezone(LONDON).strftime("%d/%m/%Y %H:%M %Z")
    _announce(action, subject, consequence, facts, deadline)
    description = "\n".join(
        [
            f"## Approve: {action}",
            "",
            f"On **{subject}**: this run {consequence}.",
            "",
            *(f"- {label}: **{value}**" for label, value in facts),
            "",
            f"Answer by **{until}** ({timeout // 60} minutes); after that the run ends without "
            "sending anything. Refusing ends it now, also without sending anything.",
        ]
    )
    answer = _wait_for_the_form(Approval.with_initial_data(description=description), timeout)
    if answer.approver == NOBODY:
        return Decision(False, "", f"the form was open until {until}", "ui-form", expired=True)
    approved = answer.decision == "approve"
    return Decision(approved, answer.approver.strip(), answer.reason.strip(), "ui-form")


def _wait_for_the_form(form: type[Approval], timeout: int) -> Approval:
    """The form's answer; when nobody answers in ``timeout`` seconds, :data:`NOBODY`'s.

    Prefect's own pause timeout would leave the run unable to end any way but ``Failed``, so
    the pause is given longer and billops closes the form itself at its deadline, answering it
    as :data:`NOBODY` (a person's answer that arrived first wins).
    """
    context = contextvars.copy_context()  # the run's context, for the waiting thread
    box: dict[str, Any] = {}

    def wait() -> None:
        try:
            # A fresh key per pause: a retried run asks again instead of reading the last answer.
            box["answer"] = context.run(
                pause_flow_run,
                wait_for_input=form,
                timeout=timeout + CLOSING_GRACE_SECONDS,
                poll_interval=APPROVAL_POLL_SECONDS,
                key=f"approval-{uuid4().hex}",
            )
        except BaseException as exc:  # handed to the run's own thread below
            box["error"] = exc

    waiting = threading.Thread(target=wait, name="billops-approval-form", daemon=True)
    waiting.start()
    waiting.join(timeout)
    if waiting.is_alive():
        run_id = flow_run.get_id()
        with contextlib.suppress(RuntimeError):  # answered meanwhile: that answer stands
            resume_flow_run(
                UUID(str(run_id)),
                run_input={"decision": "refuse", "approver": NOBODY, "reason": "no answer"},
            )
        waiting.join(CLOSING_GRACE_SECONDS)
    if "error" in box:
        raise box["error"]
    if "answer" not in box:
        raise ApprovalRequired("the approval form could not be closed at its deadline")
    answer: Approval = box["answer"]
    return answer


def _announce(
    action: str,
    subject: str,
    consequence: str,
    facts: Sequence[tuple[str, str]],
    deadline: datetime,
) -> None:
    """The event an automation can turn into a message: a run waits for a person."""
    run_id = str(flow_run.get_id() or "")
    emit_event(
        event=APPROVAL_EVENT,
        resource={
            "prefect.resource.id": f"prefect.flow-run.{run_id}",
            "prefect.resource.name": str(flow_run.get_name() or run_id),
        },
        payload={
            "action": action,
            "subject": subject,
            "consequence": consequence,
            "facts": dict(facts),
            "deadline": deadline.isoformat(),
            "ui_url": str(flow_run.get_flow_run_ui_url() or ""),
        },
    )


def _audit(
    ledger: Ledger,
    action: str,
    subject: str,
    decision: Decision,
    facts: Sequence[tuple[str, str]],
) -> None:
    verb = "approve" if decision.approved else ("expire" if decision.expired else "refuse")
    details: dict[str, Any] = {
        "channel": decision.channel,
        "attempt": flow_run.get_run_count(),
        "facts": dict(facts),
    }
    ledger.audit(
        actor=decision.approver or "billops",
        action=f"{verb}:{action}",
        subject=subject,
        reason=decision.reason,
        approver=decision.approver if decision.approved else None,
        comment=decision.reason,
        run_id=str(flow_run.get_id() or ""),
        details=details,
    )
