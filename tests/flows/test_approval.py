"""Approvals come from a person: the pause form of the Prefect UI, or the CLI's ``--approve-as``.

The form is answered the way the UI does it, through the API (``resume_flow_run`` with the run
input), while the flow waits in another thread. Covered: the form's fields are required and it
says what is approved and until when; a refusal ends the run in a named, non-failed state; an
event announces the wait; a retried run asks again; the audit says which channel approved.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any
from uuid import UUID

import pytest
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.client.schemas.objects import State
from prefect.flow_runs import resume_flow_run

from ledger import Ledger
from tasks.common import approval
from tasks.common.approval import (
    APPROVAL_EVENT,
    ApprovalRefused,
    ApprovalRequired,
    approved_from_cli,
    require_approval,
)
from tasks.common.outcome import ATTENTION_EVENT, end_run, refused
from tests.support.prefect_api import flow_run_events, pause_key, wait_for_paused_run


@pytest.fixture(autouse=True)
def quick_polls(monkeypatch: pytest.MonkeyPatch) -> None:
    """The run notices an answer within a second (five in production)."""
    monkeypatch.setattr(approval, "APPROVAL_POLL_SECONDS", 1)


FACTS = [("payment requests sent", "12"), ("their total", "£1,234.50"), ("deleted", "3")]
SUBJECT = "acme:june.csv"


def _ask(ledger_url: str) -> Any:
    with Ledger(ledger_url) as ledger:
        try:
            decision = require_approval(
                ledger,
                action="delete-missing payment requests",
                subject=SUBJECT,
                consequence="deletes payment requests",
                facts=FACTS,
                interactive=True,
            )
        except ApprovalRefused as exc:
            return end_run(refused(exc), data="refused")
    return decision.approver


@flow(name="approval-probe")
def _needs_approval(ledger_url: str) -> Any:
    return _ask(ledger_url)


_attempts: list[int] = []


@flow(name="approval-retry-probe")
def _approved_then_crashes(ledger_url: str) -> Any:
    approver = _ask(ledger_url)
    _attempts.append(1)
    if len(_attempts) == 1:
        raise RuntimeError("crashed after the approval, before anything was sent")
    return approver


def _retry(run_id: UUID, ledger_url: str) -> Any:
    """What the UI's Retry does: the run goes back to AwaitingRetry and a worker runs it again
    in a fresh process (a fresh engine and context for the same flow run)."""
    from prefect.flow_engine import run_flow
    from prefect.states import AwaitingRetry

    with get_client(sync_client=True) as client:
        client.set_flow_run_state(run_id, AwaitingRetry(), force=True)
        run = client.read_flow_run(run_id)
    return run_flow(
        _approved_then_crashes,
        flow_run=run,
        parameters={"ledger_url": ledger_url},
        return_type="state",
    )


def _in_thread(run: Callable[[], Any]) -> tuple[threading.Thread, dict[str, Any]]:
    result: dict[str, Any] = {}

    def target() -> None:
        try:
            result["state"] = run()
        except BaseException as exc:  # collected for the assertions in the main thread
            result["error"] = exc

    thread = threading.Thread(target=target)
    thread.start()
    return thread, result


def _run_and_answer(ledger_url: str, answer: dict[str, object]) -> tuple[UUID, State[Any]]:
    thread, result = _in_thread(lambda: _needs_approval(ledger_url, return_state=True))
    paused = wait_for_paused_run("approval-probe")
    resume_flow_run(paused, run_input=answer)
    thread.join(timeout=60)
    assert not thread.is_alive() and "error" not in result, result
    return paused, result["state"]


def test_an_approval_from_the_form_lets_the_run_continue_and_is_audited(
    prefect: None, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"

    _run, state = _run_and_answer(
        url, {"decision": "approve", "approver": "Dana", "reason": "June sync"}
    )

    assert state.is_completed() and state.result() == "Dana"
    with Ledger(url) as ledger:
        (entry,) = ledger.audit_entries(subject=SUBJECT)
    assert (entry.action, entry.approver, entry.reason) == (
        "approve:delete-missing payment requests",
        "Dana",
        "June sync",
    )
    assert entry.details is not None and entry.details["channel"] == "ui-form"
    assert entry.details["facts"]["their total"] == "£1,234.50"


def test_a_refusal_ends_in_a_named_state_that_is_not_failed_and_is_audited(
    prefect: None, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"

    run_id, state = _run_and_answer(
        url, {"decision": "refuse", "approver": "Sam", "reason": "not today"}
    )

    assert state.is_completed() and not state.is_failed()
    assert state.name == "Approval refused"
    assert "refused by Sam" in (state.message or "") and "not today" in (state.message or "")
    with Ledger(url) as ledger:
        (entry,) = ledger.audit_entries(subject=SUBJECT)
    assert entry.action == "refuse:delete-missing payment requests" and entry.reason == "not today"
    assert ATTENTION_EVENT in {e.event for e in flow_run_events(run_id, ATTENTION_EVENT)}


def test_the_form_requires_every_field_and_says_what_and_until_when(
    prefect: None, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    thread, result = _in_thread(lambda: _needs_approval(url, return_state=True))
    paused = wait_for_paused_run("approval-probe")
    try:
        with get_client(sync_client=True) as client:
            run = client.read_flow_run(paused)
        keyset = run.state.state_details.run_input_keyset  # type: ignore[union-attr]
        assert keyset is not None
        with get_client(sync_client=True) as client:
            schema = client.read_flow_run_input(paused, keyset["schema"])
            description = client.read_flow_run_input(paused, keyset["description"])
        assert json.loads(schema)["required"] == ["decision", "approver", "reason"]
        for text in ("12", "£1,234.50", "deleted", "Answer by", "deletes payment requests"):
            assert text in description, (text, description)
        for unchanged in ({}, {"decision": "approve", "approver": "", "reason": "x"}):
            with pytest.raises(RuntimeError, match="Validation failed"):
                resume_flow_run(paused, run_input=unchanged)
        assert thread.is_alive()  # still waiting: an incomplete form neither approves nor refuses
        events = flow_run_events(paused, APPROVAL_EVENT)
        assert events and events[0].payload["facts"]["payment requests sent"] == "12"
    finally:
        resume_flow_run(paused, run_input={"decision": "refuse", "approver": "t", "reason": "t"})
        thread.join(timeout=60)
    assert "error" not in result, result


def test_a_retried_run_asks_again_instead_of_reusing_the_first_answer(
    prefect: None, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"
    _attempts.clear()
    thread, result = _in_thread(lambda: _approved_then_crashes(url, return_state=True))
    first = wait_for_paused_run("approval-retry-probe")
    first_key = pause_key(first)
    resume_flow_run(first, run_input={"decision": "approve", "approver": "Dana", "reason": "one"})
    thread.join(timeout=60)
    assert result["state"].is_failed()

    thread, result = _in_thread(lambda: _retry(first, url))
    second = wait_for_paused_run("approval-retry-probe", timeout=60, not_key=first_key)
    resume_flow_run(second, run_input={"decision": "approve", "approver": "Lee", "reason": "two"})
    thread.join(timeout=60)

    assert "error" not in result and result["state"].result() == "Lee", result
    with Ledger(url) as ledger:
        entries = ledger.audit_entries(subject=SUBJECT)
    assert [e.approver for e in entries] == ["Dana", "Lee"]
    first_attempt, second_attempt = (e.details["attempt"] for e in entries)  # type: ignore[index]
    assert second_attempt > first_attempt


def test_the_cli_approves_through_its_own_context_and_the_audit_says_so(
    prefect: None, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"

    with approved_from_cli("Dana Finance", "July re-sync"):
        assert _needs_approval(url) == "Dana Finance"

    with Ledger(url) as ledger:
        (entry,) = ledger.audit_entries(subject=SUBJECT)
    assert entry.details is not None and entry.details["channel"] == "cli"
    assert (entry.approver, entry.reason) == ("Dana Finance", "July re-sync")


def test_without_a_person_the_run_is_refused_with_how_to_approve(tmp_path: Path) -> None:
    with (
        Ledger(f"sqlite:///{tmp_path / 'ledger.db'}") as ledger,
        pytest.raises(ApprovalRequired, match="--approve-as NAME --reason TEXT"),
    ):
        require_approval(
            ledger, action="delete", subject="s", consequence="deletes", interactive=False
        )


def test_a_form_nobody_answers_ends_approval_expired(
    prefect: None, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(approval, "APPROVAL_TIMEOUT_SECONDS", 2)
    url = f"sqlite:///{tmp_path / 'ledger.db'}"

    state = _needs_approval(url, return_state=True)

    assert state.is_completed() and state.name == "Approval expired"
    with Ledger(url) as ledger:
        (entry,) = ledger.audit_entries(subject=SUBJECT)
    assert entry.action == "expire:delete-missing payment requests"
