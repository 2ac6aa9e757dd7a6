"""Reading back what the Prefect server received (its events API), for assertions."""

from __future__ import annotations

import time
from typing import Any

import httpx
from prefect.settings import PREFECT_API_URL


def events_of(resource_id: str, prefix: str = "billops.service.") -> list[dict[str, Any]]:
    """Every event the server stored for ``resource_id`` whose name starts with ``prefix``."""
    body = {
        "filter": {"event": {"prefix": [prefix]}, "resource": {"id": [resource_id]}},
        "limit": 50,
    }
    answer = httpx.post(f"{PREFECT_API_URL.value()}/events/filter", json=body, timeout=30)
    answer.raise_for_status()
    return list(answer.json()["events"])


def wait_for_events(
    resource_id: str, count: int, prefix: str = "billops.service.", timeout: float = 30.0
) -> list[dict[str, Any]]:
    """The server's events once ``count`` arrived (it persists in batches every few seconds)."""
    deadline = time.monotonic() + timeout
    while len(found := events_of(resource_id, prefix)) < count:
        assert time.monotonic() < deadline, f"{len(found)} of {count} events reached Prefect"
        time.sleep(0.5)
    return found
