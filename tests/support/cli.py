"""The CLI as a real subprocess in tests: its command line and its environment."""

from __future__ import annotations

import sys
from pathlib import Path

from tests.support.credentials import subprocess_env

ROOT = Path(__file__).resolve().parents[2]


def billops_command(*args: str) -> list[str]:
    """``billops ARGS`` as a subprocess command line (the installed console script's module)."""
    return [sys.executable, "-m", "billops.cli", *args]


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    """This session's Prefect API, ``BILLOPS_HOME`` and the repository on ``PYTHONPATH``."""
    return subprocess_env(BILLOPS_HOME=str(home), PYTHONPATH=str(ROOT), **extra)
