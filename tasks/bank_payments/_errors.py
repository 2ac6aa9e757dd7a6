"""What goes wrong with a bank statement file, named so a person can fix it."""

from __future__ import annotations

from dataclasses import dataclass


class StatementRefused(ValueError):
    """The whole file is refused: nothing from it is used. Carries the file, the line and why."""

    def __init__(self, file: str, line: int | None, reason: str) -> None:
        self.file = file
        self.line = line
        self.reason = reason
        where = f"{file}: line {line}" if line is not None else file
        super().__init__(f"{where}: {reason}")


class UnknownLayout(StatementRefused):
    """No profile matches the file; ``closest`` names the nearest ones, ``template`` a starter."""

    def __init__(
        self, file: str, line: int | None, reason: str, closest: list[str], template: str | None
    ) -> None:
        self.closest = closest
        self.template = template
        super().__init__(file, line, reason)


@dataclass(frozen=True)
class BadLine:
    """A line of a readable file that cannot be used, and why."""

    line: int
    reason: str
    text: str = ""
