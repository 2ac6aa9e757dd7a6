"""The refresh lock on a PostgreSQL ledger: a session advisory lock that excludes across
processes, waits under ``lock_timeout``, is freed when its holder dies, says who holds it, and
that ``billops auth unlock`` frees only when the holder is provably gone."""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path

import psycopg
import pytest

from blocks._lock import ADVISORY_NAMESPACE, AdvisoryLock, refresh_lock_for
from blocks.admin import unlock
from tests.support.credentials import unique_name

pytestmark = pytest.mark.postgres


def libpq_url(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


ROOT = Path(__file__).resolve().parents[2]
HOLD = """
import sys, time
from blocks._lock import refresh_lock_for
lock = refresh_lock_for(sys.argv[1])
assert lock.try_acquire(10)
print("held", flush=True)
time.sleep(120)
"""


def test_it_is_chosen_for_a_postgresql_ledger_and_excludes(postgres_url: str) -> None:
    name = unique_name("pg")
    first = refresh_lock_for(name, ledger_url=postgres_url)
    second = refresh_lock_for(name, ledger_url=postgres_url)
    assert isinstance(first, AdvisoryLock) and isinstance(second, AdvisoryLock)
    try:
        assert first.try_acquire(0) and first.still_held()
        started = time.monotonic()
        assert not second.try_acquire(0.3)  # waits under lock_timeout, then gives up
        assert 0.25 < time.monotonic() - started < 5
        holder = second.holder()
        assert holder is not None
        assert (holder.pid, holder.host) == (os.getpid(), socket.gethostname())
        first.release()
        assert second.try_acquire(0) and first.holder() is not None
    finally:
        first.close()
        second.close()


def test_a_killed_holder_frees_it_and_a_lost_session_is_noticed(postgres_url: str) -> None:
    name = unique_name("pgkill")
    env = {**os.environ, "PYTHONPATH": str(ROOT), "BILLOPS_LEDGER_URL": postgres_url}
    holder = subprocess.Popen(
        [sys.executable, "-c", HOLD, name], cwd=ROOT, env=env, stdout=subprocess.PIPE, text=True
    )
    lock = refresh_lock_for(name, ledger_url=postgres_url)
    assert isinstance(lock, AdvisoryLock)
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        found = lock.holder()
        assert found is not None and found.pid == holder.pid
        os.kill(holder.pid, signal.SIGKILL)
        holder.wait(10)
        assert lock.try_acquire(5)  # the server ended the session and its lock
        # Fencing: a session ended from outside is noticed before anything is sent.
        with psycopg.connect(libpq_url(postgres_url), autocommit=True) as admin:
            session = lock.holder_session()
            assert session is not None
            admin.execute("SELECT pg_terminate_backend(%s)", (session[0],))
        assert not lock.still_held()
    finally:
        holder.kill()
        lock.close()


def test_unlock_ends_the_session_of_a_holder_that_is_gone_and_refuses_a_live_one(
    postgres_url: str, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("BILLOPS_LEDGER_URL", postgres_url)
    name = unique_name("pgunlock")
    key = AdvisoryLock(postgres_url, name).key
    gone = subprocess.Popen([sys.executable, "-c", "pass"])
    gone.wait(10)  # a pid that no longer runs on this machine
    # A session that outlived its process (as after a machine vanished without closing it).
    orphan = psycopg.connect(
        libpq_url(postgres_url),
        autocommit=True,
        application_name=f"billops-lock {socket.gethostname()} {gone.pid} 2026-01-01T00:00:00",
    )
    orphan.execute("SELECT pg_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, key))

    report = unlock(name)

    assert report.outcome == "freed" and f"pid {gone.pid}" in report.reason
    assert orphan.closed or _session_ended(orphan)
    live = refresh_lock_for(name)
    try:
        assert live.try_acquire(0)
        refused = unlock(name)
        assert refused.outcome == "refused" and "is running" in refused.reason
        assert live.still_held()
    finally:
        if isinstance(live, AdvisoryLock):
            live.close()


def _session_ended(conn: psycopg.Connection[object]) -> bool:
    try:
        conn.execute("SELECT 1")
    except psycopg.OperationalError:
        return True
    return False
