"""``FileTokenStore``: a token set in a JSON file, for people who run billops without Prefect.

- The file is written atomically (temporary file, fsync, rename) with mode 0600.
- :meth:`FileTokenStore.refresh_lock` is a :class:`~billing_api._refresh_lock.FileLock` (an
  exclusive ``flock``) on ``<file>.lock``: it serialises refreshes across the processes (and
  threads) of one machine, and the kernel frees it when its holder dies. It does not span machines
  unless the file system's ``flock`` does; share a Prefect block instead when workers run on
  several hosts.
- :meth:`FileTokenStore.write` is a compare-and-swap on the rotation counter, made atomic by its
  own short lock on ``<file>.cas.lock``, independent of the refresh lock.
"""

from __future__ import annotations

import contextlib
import fcntl
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from billing_api._refresh_lock import FileLock
from billing_api._token_set import (
    StaleTokenSet,
    TokenSet,
    token_set_from_dict,
    token_set_to_dict,
)

__all__ = ["FileTokenStore", "LockTimeout"]


class LockTimeout(TimeoutError):
    """The file's compare-and-swap lock was not obtained in time (another process holds it)."""


@contextlib.contextmanager
def _flock(path: Path, *, timeout: float | None, sleep: Callable[[float], None]) -> Iterator[None]:
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        if timeout is None:
            fcntl.flock(fd, fcntl.LOCK_EX)
        else:
            deadline = time.monotonic() + timeout
            while True:
                try:
                    fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
                    break
                except BlockingIOError:
                    if time.monotonic() >= deadline:
                        raise LockTimeout(f"lock {path} still held after {timeout} s") from None
                    sleep(0.01)
        try:
            yield
        finally:
            fcntl.flock(fd, fcntl.LOCK_UN)
    finally:
        os.close(fd)


class FileTokenStore:
    """A :class:`~billing_api._tokens.TokenStore` kept in one JSON file (mode 0600)."""

    def __init__(
        self,
        path: Path | str,
        *,
        name: str | None = None,
        reauthorize_command: str | None = None,
        recover_command: str | None = None,
        unlock_command: str | None = None,
        lock_timeout: float | None = 120.0,
    ) -> None:
        self.path = Path(path)
        self._name = name or self.path.stem
        self._reauthorize_command = reauthorize_command
        self._recover_command = recover_command
        self._unlock_command = unlock_command
        self._lock_timeout = lock_timeout

    def __repr__(self) -> str:
        return f"FileTokenStore(path={str(self.path)!r}, name={self._name!r})"

    @property
    def name(self) -> str:
        """The store's name (the file's stem unless given)."""
        return self._name

    @property
    def reauthorize_command(self) -> str | None:
        """The command that logs in again, when the owner of the file gave one."""
        return self._reauthorize_command

    @property
    def recover_command(self) -> str | None:
        """How a person restores a journal's token set here, when the owner of the file gave one
        (e.g. "copy the newest record of the journal over the token file")."""
        return self._recover_command

    @property
    def unlock_command(self) -> str | None:
        """What frees the refresh lock of a holder that is gone (a ``flock`` frees itself)."""
        return self._unlock_command

    @property
    def lock_path(self) -> Path:
        """The file whose ``flock`` is the refresh lock."""
        return self.path.with_name(self.path.name + ".lock")

    @property
    def _cas_lock_path(self) -> Path:
        return self.path.with_name(self.path.name + ".cas.lock")

    def read(self) -> TokenSet:
        """The stored token set; a missing or malformed file is a ``ValueError`` naming it."""
        try:
            text = self.path.read_text(encoding="utf-8")
        except FileNotFoundError:
            raise ValueError(
                f"token file {self.path} does not exist: log in first to create it"
            ) from None
        try:
            data = json.loads(text)
        except json.JSONDecodeError as error:
            where = f"line {error.lineno}, column {error.colno}"
            raise ValueError(f"token file {self.path}: not valid JSON ({where})") from None
        return token_set_from_dict(data, source=f"token file {self.path}")

    def refresh_lock(self) -> FileLock:
        """The refresh lock: an exclusive ``flock`` on :attr:`lock_path`."""
        return FileLock(self.lock_path)

    def write(self, tokens: TokenSet, *, expected_rotation: int) -> None:
        """Store ``tokens`` if the file still holds ``expected_rotation`` (else StaleTokenSet)."""
        with _flock(self._cas_lock_path, timeout=self._lock_timeout, sleep=time.sleep):
            stored = self.read().rotation if self.path.exists() else None
            if stored is not None and stored != expected_rotation:
                raise StaleTokenSet(
                    f"token file {self.path} is at rotation {stored}, expected {expected_rotation}"
                )
            self._replace(tokens)

    def initialize(self, tokens: TokenSet) -> None:
        """Create or overwrite the file with ``tokens`` (after a login; no counter check)."""
        with _flock(self._cas_lock_path, timeout=self._lock_timeout, sleep=time.sleep):
            self._replace(tokens)

    def _replace(self, tokens: TokenSet) -> None:
        payload = json.dumps(token_set_to_dict(tokens), indent=2)
        fd, temp_name = tempfile.mkstemp(prefix=f".{self.path.name}.", dir=self.path.parent)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(payload)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp_name, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
            raise
