"""The refresh lock: a Prefect global concurrency limit (GCL) of 1 per credential block.

Why a GCL (prefect-notes §1.6): it lives on the Prefect server, so it spans processes and machines
that share the API, and its slot is a lease that expires if the holder dies, so a crashed worker
cannot wedge the credential. It is always taken with ``strict=True``: without it Prefect silently
runs the block *unlocked* when the limit is missing. The limit is created when missing
(get-or-create), and put back to 1/active if someone changed it, so the block never runs unlocked.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import ExitStack, contextmanager

import httpx

LIMIT_PREFIX = "billops-token-refresh-"
PLATFORM_LIMIT_PREFIX = "billops-platform-token-"
# The shortest lease Prefect accepts; the client renews it while the refresh runs.
LEASE_SECONDS = 60.0
DEFAULT_TIMEOUT_SECONDS = 120.0

_log = logging.getLogger(__name__)
# Limits this process has already checked, keyed by (Prefect API URL, limit name): checking once
# per process saves a round trip on every refresh; a limit deleted later is recreated on demand.
_checked: set[tuple[str, str]] = set()
_checked_guard = threading.Lock()


def _api_key(name: str) -> tuple[str, str]:
    from prefect.settings import PREFECT_API_URL

    return (str(PREFECT_API_URL.value() or ""), name)


def ensure_limit(name: str) -> bool:
    """Create the GCL ``name`` with limit 1 if it is missing (or repair it); True if it changed."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import (
        GlobalConcurrencyLimitCreate,
        GlobalConcurrencyLimitUpdate,
    )
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    changed = False
    with get_client(sync_client=True) as client:
        try:
            existing = client.read_global_concurrency_limit_by_name(name)
        except ObjectNotFound:
            try:
                client.create_global_concurrency_limit(
                    GlobalConcurrencyLimitCreate(name=name, limit=1, active=True)
                )
                changed = True
            except (ObjectAlreadyExists, httpx.HTTPStatusError):
                # Another worker created it between our read and create (the server answers
                # 409, or 500 on a unique-constraint race): fine if it now exists.
                client.read_global_concurrency_limit_by_name(name)
        else:
            if existing.limit != 1 or not existing.active:
                # A limit above 1 (or inactive) would let two workers refresh at once.
                _log.warning(
                    "global concurrency limit %s was limit=%s active=%s; setting limit=1 active",
                    name,
                    existing.limit,
                    existing.active,
                )
                client.update_global_concurrency_limit(
                    name, GlobalConcurrencyLimitUpdate(limit=1, active=True)
                )
                changed = True
    with _checked_guard:
        _checked.add(_api_key(name))
    return changed


@contextmanager
def refresh_lock(name: str, *, timeout_seconds: float = DEFAULT_TIMEOUT_SECONDS) -> Iterator[None]:
    """Hold the GCL ``name`` (one slot of a limit of 1) for the duration of the block.

    Raises ``TimeoutError`` if the slot is not free within ``timeout_seconds``.
    """
    from prefect.concurrency.asyncio import ConcurrencySlotAcquisitionError
    from prefect.concurrency.sync import concurrency

    key = _api_key(name)
    with _checked_guard:
        checked = key in _checked
    if not checked:
        ensure_limit(name)
    with ExitStack() as stack:
        for attempt in (1, 2):
            try:
                stack.enter_context(
                    concurrency(
                        name,
                        occupy=1,
                        timeout_seconds=timeout_seconds,
                        lease_duration=LEASE_SECONDS,
                        strict=True,
                    )
                )
            except ConcurrencySlotAcquisitionError:
                if attempt == 2:
                    raise
                # The limit was deleted since this process checked it: recreate, try once more.
                ensure_limit(name)
                continue
            break
        yield
