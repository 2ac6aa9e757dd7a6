"""Reading what a run left on the Prefect API: a run waiting on its approval form, events about
a run, its logs and artifacts — what an operator sees in the UI."""

from __future__ import annotations

import time
from typing import Any
from uuid import UUID

from prefect.client.orchestration import get_client


def wait_for_paused_run(flow_name: str, timeout: float = 30, not_key: str | None = None) -> UUID:
    """The id of a run of ``flow_name`` waiting in a Paused state (other than pause ``not_key``)."""
    from prefect.client.schemas.filters import (
        FlowFilter,
        FlowFilterName,
        FlowRunFilter,
        FlowRunFilterState,
        FlowRunFilterStateName,
    )

    deadline = time.monotonic() + timeout
    with get_client(sync_client=True) as client:
        while time.monotonic() < deadline:
            runs = client.read_flow_runs(
                flow_filter=FlowFilter(name=FlowFilterName(any_=[flow_name])),
                flow_run_filter=FlowRunFilter(
                    state=FlowRunFilterState(name=FlowRunFilterStateName(any_=["Paused"]))
                ),
            )
            for run in runs:
                key = run.state.state_details.pause_key if run.state else None
                if not_key is None or key != not_key:
                    return run.id
            time.sleep(0.2)
    raise AssertionError(f"no run of {flow_name!r} paused for its approval form")


def pause_key(run_id: UUID) -> str | None:
    with get_client(sync_client=True) as client:
        run = client.read_flow_run(run_id)
    return run.state.state_details.pause_key if run.state else None


def flow_run_events(run_id: UUID | str, event: str, timeout: float = 20) -> list[Any]:
    """Events named ``event`` about flow run ``run_id`` (events reach the API asynchronously)."""
    from prefect.events.filters import EventFilter, EventNameFilter, EventResourceFilter

    resource = f"prefect.flow-run.{run_id}"
    deadline = time.monotonic() + timeout
    while True:
        with get_client(sync_client=True) as client:
            page = client.read_events(
                filter=EventFilter(
                    event=EventNameFilter(name=[event]),
                    resource=EventResourceFilter(id=[resource]),
                ),
                limit=50,
            )
        if page.events or time.monotonic() > deadline:
            return list(page.events)
        time.sleep(0.5)


def flow_run_logs(run_id: UUID | str, timeout: float = 15, contains: str = "") -> list[Any]:
    """The logs of flow run ``run_id`` on the API (sent in batches: waits for ``contains``)."""
    from prefect.client.schemas.filters import LogFilter, LogFilterFlowRunId

    deadline = time.monotonic() + timeout
    while True:
        with get_client(sync_client=True) as client:
            logs = client.read_logs(
                log_filter=LogFilter(flow_run_id=LogFilterFlowRunId(any_=[UUID(str(run_id))]))
            )
        if any(contains in log.message for log in logs) or time.monotonic() > deadline:
            return list(logs)
        time.sleep(0.5)


def flow_run_artifacts(run_id: UUID | str) -> list[Any]:
    """Every artifact created during flow run ``run_id`` (on the run or on one of its tasks)."""
    from prefect.client.schemas.filters import ArtifactFilter, ArtifactFilterFlowRunId

    with get_client(sync_client=True) as client:
        return list(
            client.read_artifacts(
                artifact_filter=ArtifactFilter(
                    flow_run_id=ArtifactFilterFlowRunId(any_=[UUID(str(run_id))])
                )
            )
        )
