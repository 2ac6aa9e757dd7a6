"""Which kind a file is: its folder says so, or each job's own detection is asked.

Detectors are passed in by the flow (``flows/inbox.py``), one per kind: each returns None when
the file is of its kind, or the reason it is not. A top-level file must be claimed by exactly
one detector; none or several is a failure whose report lists every detector's answer.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from pathlib import Path

from tasks.inbox.layout import FileKind

Detector = Callable[[Path], str | None]


class Unclassifiable(Exception):
    """No job (or more than one) recognises the file; the message says what each one said."""


@dataclass(frozen=True)
class Classified:
    kind: FileKind
    reason: str


def classify(
    path: Path, folder_kind: FileKind | None, detectors: Mapping[FileKind, Detector]
) -> Classified:
    """The kind of ``path``: the folder's, or the one detector that recognises it."""
    if folder_kind is not None:
        return Classified(folder_kind, f"dropped in {folder_kind.value}/")
    answers: dict[FileKind, str | None] = {}
    for kind, detect in detectors.items():
        try:
            answers[kind] = detect(path)
        except Exception as exc:  # a detector's failure is its answer, not the inbox's crash
            answers[kind] = f"{type(exc).__name__}: {exc}"
    matches = [kind for kind, answer in answers.items() if answer is None]
    if len(matches) == 1:
        return Classified(matches[0], f"recognised as {matches[0].value} from its content")
    lines = [f"- {kind.value}: {answer or 'recognised'}" for kind, answer in answers.items()]
    if not detectors:
        lines = ["- no job can detect kinds here: drop the file in a kind's sub-folder"]
    what = "no job recognises" if not matches else "several jobs recognise"
    raise Unclassifiable(
        f"{what} {path.name}; drop it in payment-requests/, bank/ or payouts/ to say what it "
        "is.\n" + "\n".join(lines)
    )
