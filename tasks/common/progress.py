"""Progress of a long poll, shown twice: a Prefect progress artifact and the CLI's progress bar.

The CLI cannot see inside a flow run, so it registers a listener here and the polling task reports
to every listener as jobs finish. Listeners run in the task's thread and must be quick.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any
from uuid import UUID

from prefect.artifacts import create_progress_artifact, update_progress_artifact

Listener = Callable[[str, int, int], None]
_listeners: list[Listener] = []


def add_listener(listener: Listener) -> Callable[[], None]:
    """Register ``listener(label, done, total)``; returns the function that removes it."""
    _listeners.append(listener)
    return lambda: _listeners.remove(listener)


class JobProgress:
    """Counts finished jobs of one run and publishes the fraction done."""

    def __init__(self, total: int, label: str = "import jobs") -> None:
        self.total = total
        self.done = 0
        self.label = label
        self._artifact: UUID | None = None
        if total:
            artifact = create_progress_artifact(
                progress=0.0, description=f"{label}: 0 of {total} finished"
            )
            self._artifact = artifact if isinstance(artifact, UUID) else None
        self._publish()

    def job_finished(self, _job: Any = None) -> None:
        self.done += 1
        self._publish()

    def finish(self) -> None:
        self.done = self.total
        self._publish()

    def _publish(self) -> None:
        if self._artifact is not None:
            update_progress_artifact(
                artifact_id=self._artifact,
                progress=100.0 * self.done / self.total,
                description=f"{self.label}: {self.done} of {self.total} finished",
            )
        for listener in list(_listeners):
            listener(self.label, self.done, self.total)
