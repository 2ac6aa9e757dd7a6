"""The approval form of the Prefect UI: the run pauses, an operator answers, the ledger records it.

The form is answered the way the UI does it, through the API (``resume_flow_run`` with the run
input), while the flow waits in another thread."""

from __future__ import annotations

import threading
import time
from pathlib import Path
from uuid import UUID

from prefect import flow
from prefect.client.orchestration import get_client
from prefect.flow_runs import resume_flow_run

from flows.approval import ApprovalRefused, require_approval
from ledger import Ledger


@flow(name="approval-probe")
def _needs_approval(ledger_url: str) -> str:
    with Ledger(ledger_url) as ledger:
        return require_approval(
            ledger,
            action="delete-missing payment requests",
            subject="acme:june.csv",
            approved_by=None,
            reason=None,
            interactive=True,
        )


def _run_and_answer(ledger_url: str, answer: dict[str, object]) -> dict[str, object]:
    result: dict[str, object] = {}

    def run() -> None:
        try:
            result["value"] = _needs_approval(ledger_url)
        except BaseException as exc:  # collected for the assertion in the main thread
            result["error"] = exc

    thread = threading.Thread(target=run)
    thread.start()
    paused = _wait_for_paused_run()
    resume_flow_run(paused, run_input=answer)
    thread.join(timeout=60)
    assert not thread.is_alive()
    return result


def _wait_for_paused_run() -> UUID:
    from prefect.client.schemas.filters import (
        FlowFilter,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateName,
    )

    deadline = time.monotonic() + 30
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            runs = client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=["approval-probe"])),
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Paused"]))
                ),
            )
            if runs:
                return runs[0].id
            time.sleep(0.2)
    raise AssertionError("the flow never paused for its approval form")


def test_an_approval_from_the_form_lets_the_run_continue_and_is_audited(
    prefect: None, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"

    result = _run_and_answer(url, {"approve": True, "approver": "Dana", "comment": "June sync"})

    assert result.get("value") == "Dana", result
    with Ledger(url) as ledger:
        (entry,) = ledger.audit_entries(subject="acme:june.csv")
    assert (entry.action, entry.approver, entry.comment) == (
        "approve:delete-missing payment requests",
        "Dana",
        "June sync",
    )


def test_a_refusal_from_the_form_stops_the_run_and_is_audited(
    prefect: None, tmp_path: Path
) -> None:
    url = f"sqlite:///{tmp_path / 'ledger.db'}"

    result = _run_and_answer(url, {"approve": False, "approver": "Sam", "comment": "not today"})

    assert isinstance(result.get("error"), ApprovalRefused)
    with Ledger(url) as ledger:
        (entry,) = ledger.audit_entries(subject="acme:june.csv")
    assert entry.action.startswith("refuse:") and entry.comment == "not today"
