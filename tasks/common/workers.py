"""Who holds a ledger claim, and whether that holder is gone.

A claim names its worker as ``host:pid:flow-run-id``. A rerun may take over an in-flight claim at
once (instead of waiting for it to go stale) when the holder is certainly dead:

- same host and that process no longer exists (it crashed or was killed), or
- same process, but the holder's flow run has finished (it crashed inside this process, as the
  crash tests do, or an operator's earlier run in a long-lived worker failed).

Anything else (another host, a live process with a running flow) is presumed alive; its claim is
taken over only once it is older than the claim timeout.
"""

from __future__ import annotations

import os
import socket
from uuid import UUID

from prefect.runtime import flow_run

from ledger import Operation
from tasks.common.write_once import ClaimPolicy


def worker_name() -> str:
    """This worker's name for ledger claims: host, process and flow run."""
    return f"{socket.gethostname()}:{os.getpid()}:{flow_run.get_id() or '-'}"


def current_run_id() -> str:
    """The flow run's id, or a local marker when called outside a flow (tests of pure steps)."""
    return str(flow_run.get_id() or f"local-{os.getpid()}")


def _process_exists(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # exists, owned by someone else
        return True
    return True


def _flow_run_finished(run_id: str) -> bool:
    from prefect.client.orchestration import get_client

    try:
        with get_client(sync_client=True) as client:
            state = client.read_flow_run(UUID(run_id)).state
    except Exception:  # unknown run or API unreachable: not proof of death
        return False
    return state is not None and state.is_final()


def holder_dead(op: Operation) -> bool:
    """True only when the worker holding ``op`` is certainly gone (see the module docstring)."""
    host, _, rest = (op.claimed_by or "").partition(":")
    pid_text, _, run_id = rest.partition(":")
    if host != socket.gethostname() or not pid_text.isdigit():
        return False
    pid = int(pid_text)
    if pid != os.getpid():
        return not _process_exists(pid)
    if run_id in ("", "-") or run_id == str(flow_run.get_id() or ""):
        return False
    return _flow_run_finished(run_id)


# The claim policy every job uses: take over a silent claim after the timeout, or at once when
# its holder is provably gone.
CLAIMS = ClaimPolicy(holder_dead=holder_dead)
