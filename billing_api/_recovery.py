"""The write-ahead journal of a rotating refresh token: durable storage for a token set the
service has granted but the credential's store does not hold yet.

The refresh procedure records, per credential:

1. before the grant, an *intent* (no secret: the rotation it refreshes from, which process, when);
2. the instant the grant answers, the new *token set*, flushed to disk (``fsync``) before anything
   else happens;
3. once the store holds that rotation, nothing: the records are removed.

So a process killed at any instant leaves either the old refresh token unused, or the new token
set in the journal, where the next holder of the refresh lock adopts it, except in one window the
client cannot close alone: after the service has rotated the token and before its answer arrives.
An intent with no token set after it is how that case is told apart from the others.

:class:`RecoveryDirectory` keeps one journal file per credential, ``<directory>/<name>.journal``:
JSON lines, mode 0600 in a 0700 directory. The directory is given by the caller: the client does
not know where billops keeps its files.
"""

from __future__ import annotations

import contextlib
import json
import logging
import os
import re
import socket
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from datetime import datetime
from pathlib import Path
from typing import Any, Protocol, runtime_checkable

from billing_api._token_set import TokenSet, token_set_from_dict, token_set_to_dict, utc_now

__all__ = [
    "JournalRecords",
    "JournalState",
    "RecoveryDirectory",
    "RefreshIntent",
    "TokenJournal",
    "read_recovery_file",
    "recovery_file_path",
]

_log = logging.getLogger(__name__)


@dataclass(frozen=True)
class RefreshIntent:
    """A refresh that was about to be sent: from which rotation, by which process, when."""

    from_rotation: int
    pid: int | None
    host: str | None
    at: datetime | None

    def __str__(self) -> str:
        when = self.at.isoformat(timespec="seconds") if self.at else "an unknown time"
        return (
            f"the refresh from rotation {self.from_rotation} started by pid {self.pid} on host "
            f"{self.host} at {when}"
        )


@dataclass(frozen=True)
class JournalState:
    """What a credential's journal holds: the newest token set recorded, and an intent that no
    token set followed (a refresh in flight, or one whose process stopped in flight)."""

    tokens: TokenSet | None = None
    intent: RefreshIntent | None = None

    @property
    def empty(self) -> bool:
        return self.tokens is None and self.intent is None


@runtime_checkable
class TokenJournal(Protocol):
    """Durable storage of the token sets a store has not received yet (see the module doc)."""

    def location(self, store_name: str) -> str:
        """Where this credential's records are kept, for messages (no secret)."""
        ...

    def record_intent(self, store_name: str, *, from_rotation: int) -> None:
        """Note that a refresh from ``from_rotation`` is about to be sent."""
        ...

    def record(self, store_name: str, tokens: TokenSet) -> None:
        """Keep ``tokens`` durably (flushed to the disk) before returning."""
        ...

    def state(self, store_name: str) -> JournalState:
        """The newest token set recorded and an intent that no token set followed."""
        ...

    def settle(self, store_name: str, *, stored_rotation: int) -> None:
        """Remove what the store now holds: token sets up to ``stored_rotation`` and intents
        from earlier rotations."""
        ...

    def clear_intent(self, store_name: str) -> None:
        """Forget this process's intents: its refresh ended (refused before it was processed, or
        reported). Another process's intent stays: it is why the token may be dead, and every
        later worker (and ``billops auth status``) must be able to say so."""
        ...


def recovery_file_path(recovery_dir: Path, store_name: str) -> Path:
    """``<recovery_dir>/<store name>.journal``; characters unsafe in a file name become ``_``."""
    safe = re.sub(r"[^A-Za-z0-9._-]", "_", store_name).lstrip(".") or "credential"
    return recovery_dir / f"{safe}.journal"


def _fsync_directory(directory: Path) -> None:
    fd = os.open(directory, os.O_RDONLY | os.O_CLOEXEC)
    try:
        os.fsync(fd)
    finally:
        os.close(fd)


def _parse_records(text: str, source: str) -> list[dict[str, Any]]:
    records = []
    for number, line in enumerate(text.splitlines(), start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except json.JSONDecodeError:
            # A line cut short by a power loss before its fsync: it was never durable.
            _log.warning("%s: line %d is not a complete record; ignored", source, number)
            continue
        if isinstance(record, dict):
            records.append(record)
    return records


def _intent_of(record: dict[str, Any]) -> RefreshIntent:
    at = record.get("at")
    return RefreshIntent(
        from_rotation=int(record.get("from_rotation", 0)),
        pid=record.get("pid") if isinstance(record.get("pid"), int) else None,
        host=record.get("host") if isinstance(record.get("host"), str) else None,
        at=datetime.fromisoformat(at) if isinstance(at, str) else None,
    )


def _state_of(records: list[dict[str, Any]], source: str) -> JournalState:
    tokens: TokenSet | None = None
    intent: RefreshIntent | None = None
    for record in records:
        if record.get("kind") == "tokens":
            found = token_set_from_dict(record, source=source)
            if tokens is None or found.rotation >= tokens.rotation:
                tokens = found
                intent = None
        elif record.get("kind") == "intent":
            candidate = _intent_of(record)
            if tokens is None or candidate.from_rotation >= tokens.rotation:
                intent = candidate
    return JournalState(tokens, intent)


class JournalRecords:
    """A journal's records as JSON-ready dicts, for any storage of them (a file here, a database
    table in ``ledger/token_journal.py``): how they are made and what they mean."""

    @staticmethod
    def intent(from_rotation: int) -> dict[str, Any]:
        """An intent of this process to refresh from ``from_rotation``, now."""
        return {
            "kind": "intent",
            "from_rotation": from_rotation,
            "pid": os.getpid(),
            "host": socket.gethostname(),
            "at": utc_now().isoformat(),
        }

    @staticmethod
    def tokens(tokens: TokenSet) -> dict[str, Any]:
        """A token set (it holds the secrets: store it only where its owner alone can read)."""
        return {"kind": "tokens", **token_set_to_dict(tokens)}

    @staticmethod
    def state(records: list[dict[str, Any]], source: str) -> JournalState:
        """The newest token set and an intent no token set followed."""
        return _state_of(records, source)

    @staticmethod
    def settled(records: list[dict[str, Any]], stored_rotation: int) -> list[dict[str, Any]]:
        """The records left once the store holds ``stored_rotation``."""
        return [
            r
            for r in records
            if r.get("kind") == "tokens"
            and int(r.get("rotation", 0)) > stored_rotation
            or r.get("kind") == "intent"
            and int(r.get("from_rotation", 0)) >= stored_rotation
        ]

    @staticmethod
    def without_own_intents(records: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """The records without this process's intents."""
        pid, host = os.getpid(), socket.gethostname()
        return [
            r
            for r in records
            if not (r.get("kind") == "intent" and r.get("pid") == pid and r.get("host") == host)
        ]


class RecoveryDirectory:
    """A :class:`TokenJournal` of one file per credential in ``directory`` (see the module doc)."""

    def __init__(self, directory: Path) -> None:
        self.directory = Path(directory)

    def __repr__(self) -> str:
        return f"RecoveryDirectory({str(self.directory)!r})"

    def path(self, store_name: str) -> Path:
        """The journal file of ``store_name``."""
        return recovery_file_path(self.directory, store_name)

    def location(self, store_name: str) -> str:
        return str(self.path(store_name))

    def _ensure_directory(self) -> None:
        self.directory.mkdir(mode=0o700, parents=True, exist_ok=True)
        if self.directory.stat().st_mode & 0o077:
            os.chmod(self.directory, 0o700)

    def _append(self, store_name: str, record: dict[str, Any], *, durable: bool) -> None:
        path = self.path(store_name)
        line = (json.dumps({**record, "store": store_name}) + "\n").encode("utf-8")
        # The file usually exists (it is emptied in place, never removed): open it first, and
        # check the directory only when it must be made. A grant's record is written in the
        # window where a kill loses the token, so every system call here counts.
        created = False
        try:
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CLOEXEC)
        except FileNotFoundError:
            self._ensure_directory()
            created = True
            fd = os.open(path, os.O_WRONLY | os.O_APPEND | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            os.fchmod(fd, 0o600)
            os.write(fd, line)
            if durable or created:
                os.fsync(fd)
        finally:
            os.close(fd)
        if created:
            _fsync_directory(self.directory)  # the new file's name must survive a crash too

    def record_intent(self, store_name: str, *, from_rotation: int) -> None:
        """Append an intent. It is not flushed: a killed process keeps it (the kernel has it);
        only a power loss can drop it, and then it was only ever a diagnosis."""
        self._append(store_name, JournalRecords.intent(from_rotation), durable=False)

    def record(self, store_name: str, tokens: TokenSet) -> None:
        """Append the token set and ``fsync`` the file before returning."""
        self._append(store_name, JournalRecords.tokens(tokens), durable=True)

    def _records(self, store_name: str) -> list[dict[str, Any]]:
        path = self.path(store_name)
        try:
            text = path.read_text(encoding="utf-8")
        except FileNotFoundError:
            return []
        return _parse_records(text, f"recovery journal {path}")

    def state(self, store_name: str) -> JournalState:
        return _state_of(self._records(store_name), f"recovery journal {self.path(store_name)}")

    def settle(self, store_name: str, *, stored_rotation: int) -> None:
        self._keep(store_name, lambda records: JournalRecords.settled(records, stored_rotation))

    def clear_intent(self, store_name: str) -> None:
        self._keep(store_name, JournalRecords.without_own_intents)

    def _keep(
        self,
        store_name: str,
        keep: Callable[[list[dict[str, Any]]], list[dict[str, Any]]],
    ) -> None:
        records = self._records(store_name)
        kept = keep(records)
        if len(kept) == len(records):
            return
        path = self.path(store_name)
        if not kept:
            # Emptied in place: no secret stays in it, and the file's name is already durable.
            with contextlib.suppress(FileNotFoundError):
                os.truncate(path, 0)
            return
        text = "".join(json.dumps(r) + "\n" for r in kept)
        fd, temp_name = tempfile.mkstemp(prefix=f".{path.name}.", dir=self.directory)
        try:
            os.fchmod(fd, 0o600)
            with os.fdopen(fd, "w", encoding="utf-8") as handle:
                handle.write(text)
                handle.flush()
                os.fsync(handle.fileno())
            os.replace(temp_name, path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp_name)
            raise
        _fsync_directory(self.directory)


def read_recovery_file(path: Path) -> TokenSet | None:
    """The newest token set in a journal file (``billops auth recover --file``), or None.

    A single JSON object (the format of earlier versions) is read too.
    """
    text = path.read_text(encoding="utf-8")
    source = f"recovery file {path}"
    stripped = text.strip()
    if stripped.startswith("{") and "\n{" not in stripped:
        try:
            data = json.loads(stripped)
        except json.JSONDecodeError as error:
            raise ValueError(
                f"{source}: not valid JSON (line {error.lineno}, column {error.colno})"
            ) from None
        if isinstance(data, dict) and "kind" not in data:
            return token_set_from_dict(data, source=source)
    return _state_of(_parse_records(text, source), source).tokens
