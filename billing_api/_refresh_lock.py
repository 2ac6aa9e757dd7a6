"""The refresh lock of a credential: the protocol the refresh procedure needs, and a file lock.

A lock that cannot wedge is one the operating system (or the database) frees when its holder
dies: :class:`FileLock` is an exclusive ``flock`` on a file, released by the kernel when the
holding process ends, however it ends (``kill -9`` included). It serialises the processes of one
machine; ``blocks`` adds a PostgreSQL advisory lock for workers on several machines.

The holder writes who it is (host, pid, since when) into the lock file, so a waiter that gives up
can say who held the lock. That record is only a description: whether the lock is held is always
asked of the kernel, never read from the file.

The file also says which lock object released it last, cleanly, and what rotation the store held
then. A worker that takes the lock again and finds its own release there, with nobody in between,
knows the store still holds the token set it saved, and skips re-reading it (a Prefect API round
trip per rotation). Anything else in between (another holder, a write that did not report a
rotation, a holder that died holding it) clears that record, and the store is read.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import random
import socket
import time
import uuid
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Protocol, runtime_checkable

from billing_api._exceptions import RefreshLockTimeout
from billing_api._token_set import utc_now

__all__ = [
    "FileLock",
    "LockHolder",
    "RefreshLock",
    "holding",
    "lock_timeout",
    "process_alive",
]


@dataclass(frozen=True)
class LockHolder:
    """Who holds a refresh lock, as far as it is known."""

    pid: int | None = None
    host: str | None = None
    since: datetime | None = None

    def __str__(self) -> str:
        if self.pid is None and self.host is None:
            return "an unknown holder"
        where = f"pid {self.pid}" if self.pid is not None else "a process"
        if self.host:
            where += f" on host {self.host}"
        if self.since is not None:
            where += f" since {self.since.isoformat(timespec='seconds')}"
        return where

    def is_here(self) -> bool:
        """Whether the holder runs on this machine (so its process can be checked)."""
        return self.host == socket.gethostname()

    def to_json(self) -> str:
        since = self.since.isoformat() if self.since else None
        return json.dumps({"pid": self.pid, "host": self.host, "since": since})

    @classmethod
    def from_json(cls, text: str) -> LockHolder:
        """The holder record of a lock file; an unreadable one is an unknown holder."""
        try:
            data = json.loads(text)
            since = datetime.fromisoformat(data["since"]) if data.get("since") else None
            pid = data.get("pid")
            return cls(pid if isinstance(pid, int) else None, data.get("host"), since)
        except (ValueError, TypeError, KeyError, AttributeError):
            return cls()

    @classmethod
    def this_process(cls) -> LockHolder:
        return cls(os.getpid(), socket.gethostname(), utc_now())


def process_alive(pid: int) -> bool:
    """Whether process ``pid`` exists on this machine."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:  # it exists, under another user
        return True
    return True


@runtime_checkable
class RefreshLock(Protocol):
    """One credential's refresh lock, spanning every process (and machine) that refreshes it."""

    @property
    def description(self) -> str:
        """What the lock is, for messages (``file lock /path``, ``advisory lock ... on host``)."""
        ...

    def try_acquire(self, wait: float) -> bool:
        """Take the lock, waiting at most ``wait`` seconds (0: one attempt); False if not taken."""
        ...

    def still_held(self) -> bool:
        """Whether this object still holds the lock (a database session may have been lost)."""
        ...

    def release(self, stored_rotation: int | None = None) -> None:
        """Give the lock back (a no-op if it was lost meanwhile). ``stored_rotation``: the
        rotation the store holds now, as this holder knows it (None: unknown, or changed by a
        write that did not say)."""
        ...

    def holder(self) -> LockHolder | None:
        """Who holds the lock now (None when it is free)."""
        ...

    def untouched_since_release(self) -> int | None:
        """Right after taking the lock: the ``stored_rotation`` this same object released it
        with, if nobody took it in between; else None (the store must be read)."""
        ...

    def peek_rotation(self) -> int | None:
        """Without taking the lock: the store's rotation at the last clean release, if known. A
        waiter whose token is older knows the store has a newer one without asking it."""
        ...


class FileLock:
    """An exclusive ``flock`` on ``path`` (created 0600 in a 0700 directory).

    ``flock`` belongs to an open file description, so two ``FileLock`` objects exclude each other
    even inside one process. The descriptor is close-on-exec: a program this process starts does
    not inherit the lock.
    """

    def __init__(
        self,
        path: Path,
        *,
        sleep: Callable[[float], None] = time.sleep,
        poll_seconds: float = 0.025,
    ) -> None:
        self.path = Path(path)
        self._sleep = sleep
        self._poll = poll_seconds
        self._fd: int | None = None
        self._owner = uuid.uuid4().hex
        self._untouched: int | None = None

    def __repr__(self) -> str:
        return f"FileLock({str(self.path)!r})"

    @property
    def description(self) -> str:
        """``file lock <path>``."""
        return f"file lock {self.path}"

    def _open(self, flags: int) -> int:
        self.path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
        return os.open(self.path, flags | os.O_CLOEXEC, 0o600)

    def try_acquire(self, wait: float) -> bool:
        """Take the lock within ``wait`` seconds, then record this process as its holder."""
        if self._fd is not None:
            raise RuntimeError(f"{self.description} is already held by this object")
        fd = self._open(os.O_RDWR | os.O_CREAT)
        deadline = time.monotonic() + max(0.0, wait)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                break
            except BlockingIOError:
                if time.monotonic() >= deadline:
                    os.close(fd)
                    return False
                # Jitter keeps waiters that woke together from retrying in step.
                self._sleep(self._poll * (0.5 + random.random()))
        previous = _record_of(fd)
        # A holder record left behind means its holder died holding the lock: whatever it did
        # is unknown, so the last clean release says nothing any more.
        last = previous.get("last") if not previous.get("holder") else None
        self._untouched = None
        if isinstance(last, dict) and last.get("owner") == self._owner:
            rotation = last.get("rotation")
            self._untouched = rotation if isinstance(rotation, int) else None
        holder = json.loads(LockHolder.this_process().to_json())
        try:
            # The next holder trusts "last" only if this record is here: it must be written.
            _write_record(fd, {"holder": holder, "last": last})
        except OSError:
            fcntl.flock(fd, fcntl.LOCK_UN)
            os.close(fd)
            raise
        self._fd = fd
        return True

    def peek_rotation(self) -> int | None:
        """The rotation the store held at the last clean release (no lock taken; may lag)."""
        try:
            fd = self._open(os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            last = _record_of(fd).get("last")
        finally:
            os.close(fd)
        rotation = last.get("rotation") if isinstance(last, dict) else None
        return rotation if isinstance(rotation, int) else None

    def untouched_since_release(self) -> int | None:
        """See :class:`RefreshLock`."""
        return self._untouched

    def still_held(self) -> bool:
        """True while this object holds it: only this process's death releases a ``flock``."""
        return self._fd is not None

    def release(self, stored_rotation: int | None = None) -> None:
        """Record this clean release (and the store's rotation, if known), then unlock."""
        if self._fd is None:
            return
        last = {"owner": self._owner, "rotation": stored_rotation}
        with contextlib.suppress(OSError):  # without it the next holder simply reads the store
            _write_record(self._fd, {"last": last} if stored_rotation is not None else {})
        fd, self._fd = self._fd, None
        try:
            fcntl.flock(fd, fcntl.LOCK_UN)
        finally:
            os.close(fd)

    def holder(self) -> LockHolder | None:
        """None if nobody holds the lock, else the holder its record names."""
        try:
            fd = self._open(os.O_RDONLY)
        except FileNotFoundError:
            return None
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
            except BlockingIOError:
                record = os.pread(fd, 4096, 0).decode("utf-8", errors="replace")
                return _holder_in(record)
            fcntl.flock(fd, fcntl.LOCK_UN)
            return None
        finally:
            os.close(fd)


def _record_of(fd: int) -> dict[str, object]:
    try:
        record = json.loads(os.pread(fd, 4096, 0) or b"{}")
    except (OSError, ValueError):
        return {}
    return record if isinstance(record, dict) else {}


def _write_record(fd: int, record: dict[str, object]) -> None:
    os.ftruncate(fd, 0)
    os.pwrite(fd, json.dumps(record).encode("utf-8"), 0)


def _holder_in(record: str) -> LockHolder:
    try:
        data = json.loads(record)
    except ValueError:
        return LockHolder()
    holder = data.get("holder") if isinstance(data, dict) else None
    return LockHolder.from_json(json.dumps(holder)) if isinstance(holder, dict) else LockHolder()


@contextlib.contextmanager
def holding(
    lock: RefreshLock, *, timeout: float, store: str, unlock_command: str | None
) -> Iterator[None]:
    """Hold ``lock`` for the block (no re-reading while waiting: for short administrative writes).

    Raises :class:`~billing_api.RefreshLockTimeout` naming the holder and the unlock command.
    """
    if not lock.try_acquire(timeout):
        raise lock_timeout(lock, timeout=timeout, store=store, unlock_command=unlock_command)
    try:
        yield
    finally:
        lock.release()


def lock_timeout(
    lock: RefreshLock, *, timeout: float, store: str, unlock_command: str | None
) -> RefreshLockTimeout:
    """The error of a wait that ran out: the store, the lock, who holds it, what frees it."""
    try:
        holder: LockHolder | None = lock.holder()
    except Exception as exc:  # the description must not hide the timeout itself
        holder = None
        held_by = f"a holder that could not be looked up ({type(exc).__name__})"
    else:
        held_by = str(holder) if holder is not None else "a holder that has just released it"
    how = (
        f" If that holder is gone, run: {unlock_command} (it refuses while the holder lives)."
        if unlock_command
        else ""
    )
    return RefreshLockTimeout(
        store,
        f"the refresh lock of {store} ({lock.description}) was still held after {timeout:g} s "
        f"by {held_by}.{how}",
        holder=str(holder) if holder is not None else None,
        command=unlock_command,
    )
