"""Every command's ``--help`` shows what its options' help says, square brackets included.

Typer renders help through Rich, whose markup takes ``[default: ...]`` for a style tag and
drops it: ``--file`` of ``auth recover`` read "A recovery file ." and hid where the journal is.
Option help writes ``\\[`` for a literal bracket; this walks every command and holds each
option's rendered help to its text.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import typer
from typer.testing import CliRunner

from billops.cli import app


def _commands(group: Any, path: list[str]) -> Iterator[tuple[list[str], Any]]:
    """Every leaf command under ``group`` (Typer's own copy of click: told by shape)."""
    for name, command in group.commands.items():
        if hasattr(command, "commands"):
            yield from _commands(command, [*path, name])
        else:
            yield [*path, name], command


def test_bracketed_defaults_in_option_help_are_shown(runner: CliRunner) -> None:
    root = typer.main.get_command(app)
    checked = 0
    for path, command in _commands(root, []):
        defaults = [
            p.help.replace("\\[", "[")
            for p in command.params
            if p.param_type_name == "option" and p.help and "[default:" in p.help.replace("\\", "")
        ]
        if not defaults:
            continue
        result = runner.invoke(app, [*path, "--help"], env={"COLUMNS": "400"})
        assert result.exit_code == 0, result.output
        shown = " ".join(result.output.split())
        for text in defaults:
            assert " ".join(text.split()) in shown, (path, text)
            checked += 1
    assert checked >= 10  # the options that name a default this way
