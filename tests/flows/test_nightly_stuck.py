"""A child a worker died while starting: the coordinator marks it Crashed and tries it again.

A worker SIGKILLed while it submits a run leaves that run ``Pending`` (or ``Running`` before the
night announced its process) with the worker's name on it; the worker started again under the
same name is online, so "its worker is offline" never fires. Here the run is put in that state
by hand on the session's Prefect harness and a worker of that name sends heartbeats: no platform
to start, a few seconds.
"""

from __future__ import annotations

import time
import uuid
from collections.abc import Iterator
from datetime import date, timedelta
from typing import Any

import pytest

from tasks.nightly.children import PROCESS_LABEL, WORKER_LABEL, Child, Children
from tasks.nightly.limits import LEASE_LABEL, ensure_limit

BOUND = timedelta(seconds=2)
NIGHT = date(2026, 11, 24)


@pytest.fixture
def children(prefect: None) -> Iterator[Children]:
    """The per-biller deployment in a pool of its own, whose worker ``w1`` is online."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import WorkPoolCreate
    from prefect.deployments.runner import EntrypointType

    from flows.nightly_biller import nightly_biller

    pool = f"stuck-{uuid.uuid4().hex[:8]}"
    with get_client(sync_client=True) as client:
        client.create_work_pool(WorkPoolCreate(name=pool, type="process"))
        client.send_worker_heartbeat(pool, "w1", heartbeat_interval_seconds=30)
    nightly_biller.to_deployment(
        name=pool, work_pool_name=pool, entrypoint_type=EntrypointType.MODULE_PATH
    ).apply()
    yield Children(f"nightly-biller/{pool}", NIGHT, stuck_starting=BOUND)


def _put(child: Child, state: Any, labels: dict[str, str]) -> None:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        client.update_flow_run_labels(child.run.id, {WORKER_LABEL: "w1", **labels})
        client.set_flow_run_state(child.run.id, state, force=True)
        child.run = client.read_flow_run(child.run.id)


def _held_lease(block: str) -> str:
    """A slot of the biller's limit, held as a night holds it (the lease a dead run leaves)."""
    from prefect.concurrency._sync import acquire_concurrency_slots_with_lease

    name = f"billops-biller-{block}"
    ensure_limit(name, 1)
    taken = acquire_concurrency_slots_with_lease([name], 1, lease_duration=300, strict=True)
    return str(taken.lease_id)


def _active_slots(block: str) -> int:
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        found = client.read_global_concurrency_limit_by_name(f"billops-biller-{block}")
    return int(found.active_slots)


def test_a_run_left_pending_by_a_worker_back_online_is_crashed_and_tried_again(
    children: Children,
) -> None:
    from prefect.states import Pending

    block = f"stuck-{uuid.uuid4().hex[:8]}"
    child = children.first(block)
    _put(child, Pending(), {})

    assert children.crash_if_gone(child) is False  # within the bound: it may still be starting
    assert child.run.state.is_pending()
    time.sleep(BOUND.total_seconds() + 0.5)
    assert children.crash_if_gone(child) is True

    assert child.run.state.is_crashed()
    message = str(child.run.state.message)
    assert "Pending for" in message and "w1 died while starting it" in message
    again = children.retry(child)
    assert again.attempt == 2 and again.run.id != child.run.id
    assert again.run.idempotency_key == f"nightly:{NIGHT.isoformat()}:{block}:retry-1"


def test_a_run_running_without_its_process_is_crashed_and_its_slots_handed_back(
    children: Children,
) -> None:
    from prefect.states import Running

    block = f"stuck-{uuid.uuid4().hex[:8]}"
    child = children.first(block)
    lease = _held_lease(block)
    _put(child, Running(), {LEASE_LABEL: lease})
    assert _active_slots(block) == 1
    time.sleep(BOUND.total_seconds() + 0.5)

    assert children.crash_if_gone(child) is True
    assert child.run.state.is_crashed()
    assert "Running for" in str(child.run.state.message)
    assert _active_slots(block) == 0


def test_a_run_that_announced_a_live_process_is_never_taken_for_stuck(
    children: Children,
) -> None:
    from prefect.states import Running

    from tasks.nightly.children import this_process

    child = children.first(f"stuck-{uuid.uuid4().hex[:8]}")
    _put(child, Running(), {PROCESS_LABEL: this_process()})
    time.sleep(BOUND.total_seconds() + 0.5)

    assert children.crash_if_gone(child) is False
    assert child.run.state.is_running()
