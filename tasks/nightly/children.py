"""Billers' nights as child runs of the per-biller deployment, on whichever worker takes them.

Each child is started with ``run_deployment`` under an idempotency key made of the night and the
biller (``nightly:2026-11-24:acme``; a retry adds ``:retry-N``), so a coordinator run again the
same night finds the children of the first one instead of starting new ones: a finished night is
reported, a running one is waited for, a failed one is tried again.

A child whose process is gone stays ``Running`` on the server forever (nobody is left to say it
ended). The coordinator tells it apart and marks it ``Crashed``:

- the child labels its run with ``billops.process = host:pid`` as it starts; on the same host
  the coordinator sees at once that the process no longer exists;
- elsewhere, the worker that took it (Prefect's ``prefect.worker.name`` label) is no longer
  online and the run has sent no heartbeat for three heartbeat periods
  (``PREFECT_FLOWS_HEARTBEAT_FREQUENCY`` as the coordinator's process has it; Prefect 3.8's
  default is 180 s, the README's workers set 30);
- a run still ``Pending``, or ``Running`` without that process label, longer than
  :data:`STUCK_STARTING` (the coordinator's ``stuck_starting_minutes``): its worker died while
  starting it. A worker started again under the same name is online, so the rule above never
  fires, and nobody else will ever move the run on. A process that was only slow to start and
  runs after all is harmless: it waits for the biller's slot (limit 1) behind the retry, and the
  ledger keeps every write once.

The slots a crashed child held (``tasks/nightly/limits.py``) are released as it is marked, from
the lease id it labelled its run with, so its retry does not wait out the lease.

A failed or crashed child is tried again once, on another online worker when there is one: each
worker also polls a work queue named after itself (the README's "Deployments"), and the retry
is put in that queue.
"""

from __future__ import annotations

import logging
import os
import socket
from dataclasses import dataclass
from datetime import UTC, date, datetime, timedelta
from typing import Any
from uuid import UUID

from tasks.nightly.limits import LEASE_LABEL, release_lease
from tasks.nightly.night import BillerResult, artifact_key_of, decode, failed_result

PROCESS_LABEL = "billops.process"
WORKER_LABEL = "prefect.worker.name"
HEARTBEAT_EVENT = "prefect.flow-run.heartbeat"
MAX_ATTEMPTS = 10  # over every rerun of one night; then the biller waits for a person
# A child started this long ago that has not announced its process never will: minutes of
# process start-up on a loaded machine are normal, ten are not.
STUCK_STARTING = timedelta(minutes=10)
_log = logging.getLogger(__name__)


def idempotency_key(block: str, night: date, attempt: int) -> str:
    """The key of a biller's night: the first attempt is the night and the biller alone."""
    key = f"nightly:{night.isoformat()}:{block}"
    return key if attempt == 1 else f"{key}:retry-{attempt - 1}"


def this_process() -> str:
    return f"{socket.gethostname()}:{os.getpid()}"


def announce_process() -> None:
    """Label the current flow run with this host and process (see the module docstring)."""
    from prefect.client.orchestration import get_client
    from prefect.runtime import flow_run

    run_id = flow_run.get_id()
    if not run_id:
        return
    with get_client(sync_client=True) as client:
        client.update_flow_run_labels(UUID(str(run_id)), {PROCESS_LABEL: this_process()})


def process_gone(label: str) -> bool:
    """True when ``label`` (``host:pid``) names a process of this host that no longer runs (or
    is a zombie nobody reaped); False for another host or a live process."""
    host, _, pid_text = label.rpartition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    try:
        os.kill(int(pid_text), 0)
    except ProcessLookupError:
        return True
    except PermissionError:
        return False
    try:
        with open(f"/proc/{pid_text}/stat", encoding="ascii") as stat:
            return stat.read().rsplit(")", 1)[1].split()[0] == "Z"
    except (OSError, IndexError):
        return False


@dataclass
class Child:
    """One biller's current attempt and the run behind it."""

    biller: str
    attempt: int
    run: Any  # prefect.client.schemas.objects.FlowRun
    retried: bool = False  # this coordinator has tried it again already
    note: str = ""

    @property
    def worker(self) -> str:
        return str(self.run.labels.get(WORKER_LABEL, "") or "")

    @property
    def final(self) -> bool:
        return self.run.state is not None and self.run.state.is_final()


class Children:
    """The children of one night, started through ``deployment`` (``flow/deployment``)."""

    def __init__(
        self, deployment: str, night: date, stuck_starting: timedelta = STUCK_STARTING
    ) -> None:
        from prefect.client.orchestration import get_client

        self.deployment = deployment
        self.night = night
        self.stuck_starting = stuck_starting
        with get_client(sync_client=True) as client:
            found = client.read_deployment_by_name(deployment)
        self.deployment_id: UUID = found.id
        self.pool = str(found.work_pool_name or "")

    # --- starting -------------------------------------------------------------------------
    def start(self, block: str, attempt: int, queue: str | None = None) -> Any:
        """The run of this attempt: started now, or the one an earlier coordinator started."""
        from prefect.deployments import run_deployment

        return run_deployment(
            self.deployment_id,
            parameters={"biller": block, "night": self.night.isoformat()},
            idempotency_key=idempotency_key(block, self.night, attempt),
            flow_run_name=f"{block} {self.night.isoformat()} #{attempt}",
            work_queue_name=queue,
            timeout=0,
        )

    def first(self, block: str) -> Child:
        """The attempt this coordinator watches: the night's first run, or — when earlier
        coordinators' attempts failed — the next one (never more than :data:`MAX_ATTEMPTS`)."""
        run: Any = None
        for attempt in range(1, MAX_ATTEMPTS + 1):
            run = self.start(block, attempt)
            state = run.state
            if state is None or not state.is_final() or state.is_completed():
                return Child(block, attempt, run)
        note = f"{MAX_ATTEMPTS} attempts failed this night: look at their runs"
        return Child(block, MAX_ATTEMPTS, run, retried=True, note=note)

    def retry(self, child: Child) -> Child:
        """Try a failed or crashed child again, once, on another online worker if any."""
        queue = self._another_workers_queue(child.worker)
        run = self.start(child.biller, child.attempt + 1, queue)
        where = f"on {queue}" if queue else "on any worker (no other worker has its own queue)"
        _log.warning(
            "%s: attempt %d ended %s; trying again %s",
            child.biller,
            child.attempt,
            child.run.state.name if child.run.state else "?",
            where,
        )
        return Child(child.biller, child.attempt + 1, run, retried=True)

    def _another_workers_queue(self, worker: str) -> str | None:
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.objects import WorkerStatus

        with get_client(sync_client=True) as client:
            online = {
                w.name
                for w in client.read_workers_for_work_pool(self.pool)
                if w.status == WorkerStatus.ONLINE
            }
            queues = {q.name for q in client.read_work_queues(work_pool_name=self.pool)}
        candidates = sorted((online & queues) - {worker})
        return candidates[0] if candidates else None

    # --- watching -------------------------------------------------------------------------
    def refresh(self, children: list[Child]) -> None:
        """Read every child's run again (a few requests for the whole night)."""
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.filters import FlowRunFilter, FlowRunFilterId

        ids = [c.run.id for c in children]
        runs: dict[UUID, Any] = {}
        with get_client(sync_client=True) as client:
            for start in range(0, len(ids), 200):
                page = ids[start : start + 200]
                found = client.read_flow_runs(
                    flow_run_filter=FlowRunFilter(id=FlowRunFilterId(any_=page)), limit=len(page)
                )
                runs.update({run.id: run for run in found})
        for child in children:
            child.run = runs.get(child.run.id, child.run)

    def crash_if_gone(self, child: Child) -> bool:
        """Mark a child ``Crashed`` when its process is gone (module docstring); True if so."""
        from prefect.client.orchestration import get_client
        from prefect.states import Crashed

        reason = self._gone(child.run)
        if reason is None:
            return False
        with get_client(sync_client=True) as client:
            again = client.read_flow_run(child.run.id)  # it may have just finished on its own
            if again.state is not None and again.state.is_final():
                child.run = again
                return False
            client.set_flow_run_state(child.run.id, Crashed(message=reason), force=True)
            child.run = client.read_flow_run(child.run.id)
        lease = str(child.run.labels.get(LEASE_LABEL, "") or "")
        if lease:  # the dead night's slots, free for its retry now rather than in a minute
            release_lease(lease)
        _log.warning("%s: attempt %d crashed: %s", child.biller, child.attempt, reason)
        return True

    def _gone(self, run: Any) -> str | None:
        state = run.state
        if state is None or not (state.is_running() or state.is_pending()):
            return None
        process = str(run.labels.get(PROCESS_LABEL, "") or "")
        if process and process_gone(process):
            return f"its process ({process}) is gone"
        if not process and (stuck := self._stuck_starting(run)):
            return stuck
        worker = str(run.labels.get(WORKER_LABEL, "") or "")
        if not worker or self._worker_online(worker):
            return None
        if state.is_pending() or not self._heartbeat_since(run.id, _heartbeat_window()):
            return f"its worker {worker} is offline and the run has gone silent"
        return None

    def _stuck_starting(self, run: Any) -> str | None:
        """Why a run that never announced its process is taken for dead: in its state (Pending, or
        Running before the night's first line) longer than the bound, and — when the run sends
        heartbeats — none of late. ``None`` while it may still be starting."""
        state = run.state
        # Stamped by the server; a coordinator's clock seconds off (NTP) does not matter at minutes.
        age = datetime.now(UTC) - state.timestamp
        if age < self.stuck_starting:
            return None
        if state.is_running() and self._heartbeat_since(run.id, _heartbeat_window()):
            return None
        minutes = age.total_seconds() / 60
        where = str(run.labels.get(WORKER_LABEL, "") or "") or "no worker"
        return (
            f"{state.name} for {minutes:.1f} min without announcing its process "
            f"(over {self.stuck_starting.total_seconds() / 60:g} min): {where} died while "
            "starting it"
        )

    def _worker_online(self, worker: str) -> bool:
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.objects import WorkerStatus

        with get_client(sync_client=True) as client:
            workers = client.read_workers_for_work_pool(self.pool)
        return any(w.name == worker and w.status == WorkerStatus.ONLINE for w in workers)

    def _heartbeat_since(self, run_id: UUID, window: timedelta) -> bool:
        from prefect.client.orchestration import get_client
        from prefect.events.filters import (
            EventFilter,
            EventNameFilter,
            EventOccurredFilter,
            EventResourceFilter,
        )

        since = datetime.now(UTC) - window
        with get_client(sync_client=True) as client:
            page = client.read_events(
                filter=EventFilter(
                    event=EventNameFilter(name=[HEARTBEAT_EVENT]),
                    resource=EventResourceFilter(id=[f"prefect.flow-run.{run_id}"]),
                    occurred=EventOccurredFilter(since=since),
                ),
                limit=1,
            )
        return bool(page.events)

    # --- results --------------------------------------------------------------------------
    def result(self, child: Child) -> BillerResult:
        """What the child's night did, from the artifact it left on its run; a line saying what
        became of it when it left none (it crashed, or was cancelled)."""
        state = child.run.state
        table = self._artifact(child)
        if table is not None:
            found = decode(table)
            return found.with_attempt(child.attempt, child.worker, str(child.run.id))
        said = f"{state.name}: {state.message}" if state is not None else "no state"
        return failed_result(
            child.biller,
            child.note or f"attempt {child.attempt} ended {said}",
            attempts=child.attempt,
            worker=child.worker,
            run_id=str(child.run.id),
        )

    def _artifact(self, child: Child) -> str | None:
        from prefect.client.orchestration import get_client
        from prefect.client.schemas.filters import (
            ArtifactFilter,
            ArtifactFilterFlowRunId,
            ArtifactFilterKey,
        )

        with get_client(sync_client=True) as client:
            found = client.read_artifacts(
                artifact_filter=ArtifactFilter(
                    flow_run_id=ArtifactFilterFlowRunId(any_=[child.run.id]),
                    key=ArtifactFilterKey(any_=[artifact_key_of(child.biller)]),
                ),
                limit=1,
            )
        if not found or not isinstance(found[0].data, str):
            return None
        return found[0].data


def _heartbeat_window() -> timedelta:
    from prefect.settings import get_current_settings

    every = get_current_settings().flows.heartbeat_frequency or 180
    return timedelta(seconds=3 * max(every, 30))
