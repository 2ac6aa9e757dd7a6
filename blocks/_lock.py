"""The refresh lock of a credential block, kept on the ledger's database (``docs/credentials.md``).

The lock must be freed without a person when its holder is gone, whatever took it away: a
``kill -9``, a crashed machine, a network split, a restart of any server. Prefect's global
concurrency limits do not: their lease lives in the Prefect server's memory by default, so a
server restart leaves the slot taken with no lease to expire it. So the lock is one the ledger's
database engine frees by itself:

- **SQLite ledger** (one machine): an exclusive ``flock`` on ``<ledger.db>.locks/<name>.lock``,
  freed by the kernel the instant the holding process ends;
- **PostgreSQL ledger** (several machines): a session-level advisory lock, freed by PostgreSQL
  when the holding session ends. The session asks the server to probe the client (TCP keepalives
  every 5 s after 10 s idle, 3 probes), so a holder whose machine died or was cut off loses the
  lock within about 25 s.

Every process and machine that refreshes a credential must therefore use the same
``BILLOPS_LEDGER_URL`` (they must already, for the ledger).
"""

from __future__ import annotations

import os
import re
import socket
import zlib
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from billing_api import FileLock, LockHolder, RefreshLock, TokenStoreError, utc_now
from blocks._common import CredentialsConfigError

if TYPE_CHECKING:
    import psycopg

LIMIT_PREFIX = "billops-token-refresh-"
PLATFORM_LIMIT_PREFIX = "billops-platform-token-"
DEFAULT_TIMEOUT_SECONDS = 120.0
# The first key of every billops advisory lock ("bill"), so they never meet another program's.
ADVISORY_NAMESPACE = 0x62696C6C
_APP_PREFIX = "billops-lock"


def refresh_lock_for(name: str, *, ledger_url: str | None = None) -> RefreshLock:
    """The refresh lock named ``name`` on the ledger's database (``BILLOPS_LEDGER_URL``)."""
    from sqlalchemy.engine import make_url
    from sqlalchemy.exc import ArgumentError

    from ledger.settings import BillopsSettings

    url = ledger_url or BillopsSettings().ledger_database_url
    try:
        parsed = make_url(url)
    except ArgumentError:
        raise CredentialsConfigError(f"the ledger URL is not a database URL: {url!r}") from None
    backend = parsed.get_backend_name()
    if backend == "sqlite":
        database = parsed.database
        if not database or database == ":memory:":
            raise CredentialsConfigError(
                "the ledger is an in-memory SQLite database, which no other process can see: "
                "refresh locks need a ledger file (BILLOPS_LEDGER_URL=sqlite:///path/ledger.db)"
            )
        path = Path(database).expanduser().resolve()
        safe = re.sub(r"[^A-Za-z0-9._-]", "_", name).lstrip(".") or "credential"
        return FileLock(path.parent / f"{path.name}.locks" / f"{safe}.lock")
    if backend == "postgresql":
        return AdvisoryLock(url, name)
    raise CredentialsConfigError(
        f"the ledger's database is {backend}: refresh locks support SQLite and PostgreSQL"
    )


def _libpq(url: str) -> str:
    from sqlalchemy.engine import make_url

    return make_url(url).set(drivername="postgresql").render_as_string(hide_password=False)


class AdvisoryLock:
    """A PostgreSQL session-level advisory lock ``(ADVISORY_NAMESPACE, crc32(name))``.

    One connection per lock object, opened on first use and kept: the lock lives exactly as long
    as that session. The session's ``application_name`` says who holds it
    (``billops-lock <host> <pid> <since>``), which ``pg_stat_activity`` shows to everyone.
    """

    def __init__(self, url: str, name: str) -> None:
        from sqlalchemy.engine import make_url

        parsed = make_url(url)
        self.name = name
        self.key = zlib.crc32(name.encode("utf-8")) & 0x7FFFFFFF
        self._url = url
        self._where = f"{parsed.host or 'localhost'}:{parsed.port or 5432}/{parsed.database}"
        self._conn: psycopg.Connection[Any] | None = None
        self._held = False

    def __repr__(self) -> str:
        return f"AdvisoryLock({self.name!r}, {self._where!r})"

    @property
    def description(self) -> str:
        """``PostgreSQL advisory lock <name> on <host:port/db>``."""
        return f"PostgreSQL advisory lock {self.name} on {self._where}"

    def _error(self, doing: str, error: Exception) -> TokenStoreError:
        self._drop()
        return TokenStoreError(
            self.name, f"{self.description}: {doing} failed: {type(error).__name__}: {error}"
        )

    def _drop(self) -> None:
        conn, self._conn, self._held = self._conn, None, False
        if conn is not None:
            try:
                conn.close()
            except Exception:  # closing a broken connection can fail too; it is gone either way
                return

    def _connection(self) -> psycopg.Connection[Any]:
        import psycopg

        if self._conn is None or self._conn.closed:
            self._conn = psycopg.connect(
                _libpq(self._url),
                autocommit=True,
                connect_timeout=10,
                application_name=f"{_APP_PREFIX} {socket.gethostname()} {os.getpid()}"[:63],
                # The client notices a dead server, and the server a dead client, within ~25 s.
                keepalives=1,
                keepalives_idle=10,
                keepalives_interval=5,
                keepalives_count=3,
            )
            for setting in ("tcp_keepalives_idle", "tcp_keepalives_interval"):
                value = 10 if setting.endswith("idle") else 5
                self._conn.execute(f"SET {setting} = {value}")
            self._conn.execute("SET tcp_keepalives_count = 3")
        return self._conn

    def try_acquire(self, wait: float) -> bool:
        """``pg_try_advisory_lock``, or ``pg_advisory_lock`` under ``lock_timeout`` = ``wait``."""
        import psycopg
        from psycopg import errors

        if self._held:
            raise RuntimeError(f"{self.description} is already held by this object")
        try:
            conn = self._connection()
            if wait <= 0:
                row = conn.execute(
                    "SELECT pg_try_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, self.key)
                ).fetchone()
                got = bool(row and row[0])
            else:
                conn.execute(f"SET lock_timeout = {max(1, int(wait * 1000))}")
                try:
                    conn.execute("SELECT pg_advisory_lock(%s, %s)", (ADVISORY_NAMESPACE, self.key))
                    got = True
                except errors.LockNotAvailable:
                    got = False
                conn.execute("SET lock_timeout = 0")
            if got:
                since = utc_now().isoformat(timespec="seconds")
                label = f"{_APP_PREFIX} {socket.gethostname()} {os.getpid()} {since}"[:63]
                conn.execute("SELECT set_config('application_name', %s, false)", (label,))
        except psycopg.Error as error:
            raise self._error("taking the lock", error) from None
        self._held = got
        return got

    def still_held(self) -> bool:
        """Whether this session still holds the lock (False if the session was lost)."""
        if not self._held or self._conn is None:
            return False
        try:
            row = self._conn.execute(
                "SELECT count(*) FROM pg_locks WHERE locktype = 'advisory' AND classid = %s "
                "AND objid = %s AND objsubid = 2 AND granted AND pid = pg_backend_pid()",
                (ADVISORY_NAMESPACE, self.key),
            ).fetchone()
        except Exception:
            self._drop()
            return False
        return bool(row and row[0])

    def untouched_since_release(self) -> int | None:
        """Always None: the store is read under every hold (one query; machines share it)."""
        return None

    def peek_rotation(self) -> int | None:
        """Always None: waiters learn of a rotation by re-reading the store."""
        return None

    def release(self, stored_rotation: int | None = None) -> None:
        """``pg_advisory_unlock``; a lost session has released it already."""
        if not self._held:
            return
        self._held = False
        try:
            conn = self._connection()
            conn.execute("SELECT pg_advisory_unlock(%s, %s)", (ADVISORY_NAMESPACE, self.key))
            conn.execute(
                "SELECT set_config('application_name', %s, false)",
                (f"{_APP_PREFIX} {socket.gethostname()} {os.getpid()}"[:63],),
            )
        except Exception:
            self._drop()

    def holder_session(self) -> tuple[int, LockHolder] | None:
        """The backend pid of the session holding the lock and who it says it is."""
        import psycopg

        try:
            row = (
                self._connection()
                .execute(
                    "SELECT a.pid, a.application_name, a.backend_start FROM pg_locks l "
                    "JOIN pg_stat_activity a ON a.pid = l.pid WHERE l.locktype = 'advisory' "
                    "AND l.classid = %s AND l.objid = %s AND l.objsubid = 2 AND l.granted",
                    (ADVISORY_NAMESPACE, self.key),
                )
                .fetchone()
            )
        except psycopg.Error as error:
            raise self._error("looking up the holder", error) from None
        if row is None:
            return None
        backend_pid, application, started = row
        return int(backend_pid), _holder_of(str(application or ""), started)

    def holder(self) -> LockHolder | None:
        found = self.holder_session()
        return found[1] if found else None

    def terminate(self, backend_pid: int) -> bool:
        """End the session ``backend_pid`` (which frees its locks); True if it was ended."""
        import psycopg

        try:
            row = (
                self._connection()
                .execute("SELECT pg_terminate_backend(%s)", (backend_pid,))
                .fetchone()
            )
        except psycopg.Error as error:
            raise self._error("ending the holder's session", error) from None
        return bool(row and row[0])

    def close(self) -> None:
        """Close the connection (releasing the lock if held)."""
        self._drop()


def _holder_of(application: str, started: datetime | None) -> LockHolder:
    """The holder an ``application_name`` of ours describes (``billops-lock host pid since``)."""
    parts = application.split(" ")
    if len(parts) < 3 or parts[0] != _APP_PREFIX or not parts[2].isdigit():
        return LockHolder(since=started)
    since = started
    if len(parts) >= 4:
        try:
            since = datetime.fromisoformat(parts[3])
        except ValueError:
            since = started
    return LockHolder(int(parts[2]), parts[1], since)
