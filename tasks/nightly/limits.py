"""The global concurrency limits a biller's night runs under (Prefect's, held on its server).

- ``billops-service-<client id>``: the service's rate limit is shared by every biller of one
  app, so the billers of an app run at most this many nights at once, on every worker of every
  machine together. Created with :data:`DEFAULT_SERVICE_SLOTS` slots when missing; an operator
  changes it with ``prefect gcl update billops-service-<client id> --limit N`` (never
  overwritten here).
- ``billops-biller-<block>``: limit 1 — a biller's night never runs twice at once (a retry, a
  second coordinator, a run started from the UI wait for the first).

Slots are leases of :data:`LEASE_SECONDS` that the holder renews while it runs: the slot of a
process that died frees itself when its lease runs out, as long as the Prefect server keeps
running (the README's "Deployments" says what to do after a server restart); a coordinator that
sees the holder's process gone releases it at once. ``strict``: a
limit that is missing is an error, never a silent run without a limit.
"""

from __future__ import annotations

import contextlib
import re
from collections.abc import Iterator
from contextlib import contextmanager

DEFAULT_SERVICE_SLOTS = 8
LEASE_SECONDS = 60  # Prefect's minimum: a dead holder's slot is free again within a minute
WAIT_SECONDS = 2 * 3600  # a night that cannot get its slots in two hours fails (and says so)
LEASE_LABEL = "billops.lease"  # the run's label holding its slots' lease id
_NOT_NAME = re.compile(r"[^a-z0-9_.-]+")


def _name_part(text: str) -> str:
    return _NOT_NAME.sub("-", text.casefold()).strip("-") or "unnamed"


def biller_limit(block: str) -> str:
    """The name of a biller's own limit (limit 1)."""
    return f"billops-biller-{_name_part(block)}"


def service_limit(client_id: str) -> str:
    """The name of the limit every biller of one service app shares."""
    return f"billops-service-{_name_part(client_id)}"


def ensure_limit(name: str, slots: int) -> bool:
    """Create the global concurrency limit ``name`` with ``slots`` if it is missing; an existing
    one is left as it is. True when created here."""
    from prefect.client.orchestration import get_client
    from prefect.client.schemas.actions import GlobalConcurrencyLimitCreate
    from prefect.exceptions import ObjectAlreadyExists, ObjectNotFound

    with get_client(sync_client=True) as client:
        with contextlib.suppress(ObjectNotFound):  # missing: created below
            client.read_global_concurrency_limit_by_name(name)
            return False
        try:
            client.create_global_concurrency_limit(
                GlobalConcurrencyLimitCreate(name=name, limit=slots)
            )
        except ObjectAlreadyExists:  # another biller's night created it a moment ago
            return False
    return True


@contextmanager
def night_slots(
    block: str, client_id: str, *, wait_seconds: float = WAIT_SECONDS
) -> Iterator[list[str]]:
    """Hold a slot of the app's service limit and the biller's own limit while the night runs;
    yields the limits' names. Both are taken in one request (never one without the other).

    The lease is Prefect's own (``prefect.concurrency``'s acquire, renew and release, as its
    ``concurrency()`` does them); it is held here by hand only to label the run with the lease's
    id (:data:`LEASE_LABEL`), so a coordinator that finds the run's process gone hands the slots
    back at once (:func:`release_lease`) instead of making the retry wait out the lease."""
    from prefect.concurrency._leases import maintain_concurrency_lease
    from prefect.concurrency._sync import (
        acquire_concurrency_slots_with_lease,
        release_concurrency_slots_with_lease,
    )

    names = [service_limit(client_id), biller_limit(block)]
    ensure_limit(names[0], DEFAULT_SERVICE_SLOTS)
    ensure_limit(names[1], 1)
    taken = acquire_concurrency_slots_with_lease(
        names, 1, timeout_seconds=wait_seconds, lease_duration=LEASE_SECONDS, strict=True
    )
    try:
        _label_run({LEASE_LABEL: str(taken.lease_id)})
        # A renewal the server missed once must not kill a night half done: the ledger keeps
        # every write once whatever happens, and the next renewal usually gets through.
        with maintain_concurrency_lease(
            taken.lease_id, LEASE_SECONDS, raise_on_lease_renewal_failure=False
        ):
            yield names
    finally:
        release_concurrency_slots_with_lease(taken.lease_id)


def release_lease(lease_id: str) -> None:
    """Hand back the slots of a lease whose holder is gone (the server ignores a lease it no
    longer knows: released already, or expired)."""
    from uuid import UUID

    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        client.release_concurrency_slots_with_lease(UUID(lease_id))


def _label_run(labels: dict[str, bool | int | float | str]) -> None:
    from uuid import UUID

    from prefect.client.orchestration import get_client
    from prefect.runtime import flow_run

    run_id = flow_run.get_id()
    if not run_id:
        return
    with get_client(sync_client=True) as client:
        client.update_flow_run_labels(UUID(str(run_id)), labels)
