"""The inbox's own report beside each file: what it was taken for, what was done, where the
job's reports are, and what to do next. Plain text, written atomically."""

from __future__ import annotations

import os
import tempfile
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path

REPORT_SUFFIX = ".inbox.txt"


@dataclass
class Outcome:
    """What became of one file. ``failed`` decides the folder it goes to."""

    file: str
    biller: str
    kind: str | None
    status: str
    failed: bool
    message: str
    run_id: str | None = None
    sha256: str | None = None
    next_step: str = ""
    details: list[str] = field(default_factory=list)

    def text(self, at: datetime) -> str:
        lines = [
            f"file:     {self.file}",
            f"biller:   {self.biller}",
            f"kind:     {self.kind or 'unknown'}",
            f"outcome:  {self.status}",
            f"when:     {at.isoformat(timespec='seconds')}",
        ]
        if self.run_id:
            lines.append(f"run:      {self.run_id}")
        if self.sha256:
            lines.append(f"sha256:   {self.sha256}")
        lines += ["", self.message]
        if self.details:
            lines += ["", *self.details]
        if self.next_step:
            lines += ["", f"Next: {self.next_step}"]
        return "\n".join(lines) + "\n"


def report_path(file: Path) -> Path:
    return file.with_name(file.name + REPORT_SUFFIX)


def write_report(file: Path, outcome: Outcome, at: datetime) -> Path:
    """``<file>.inbox.txt`` beside ``file`` (replaced atomically)."""
    target = report_path(file)
    handle, temporary = tempfile.mkstemp(prefix=".inbox-", dir=target.parent)
    with os.fdopen(handle, "w", encoding="utf-8") as out:
        out.write(outcome.text(at))
    os.chmod(temporary, 0o644)
    os.replace(temporary, target)
    return target
