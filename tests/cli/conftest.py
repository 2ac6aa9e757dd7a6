"""Fixtures of the ``billops auth`` / ``billops setup`` tests: the CLI in-process (typer's
runner) and as a real subprocess, with ``BILLOPS_HOME`` in a temporary directory."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest
from typer.testing import CliRunner

from tests.blocks.conftest import short_admin, short_token_sandbox  # noqa: F401 - re-exported
from tests.blocks.helpers import subprocess_env

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def billops_home(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    home = tmp_path / "billops-home"
    monkeypatch.setenv("BILLOPS_HOME", str(home))
    return home


@pytest.fixture
def runner() -> CliRunner:
    return CliRunner()


@pytest.fixture
def prefect_api(prefect: None) -> str:
    from prefect.settings import PREFECT_API_URL

    return str(PREFECT_API_URL.value())


def billops_command(*args: str) -> list[str]:
    """``billops ARGS`` as a subprocess command line (the installed console script's module)."""
    return [sys.executable, "-m", "billops.cli", *args]


def cli_env(home: Path, **extra: str) -> dict[str, str]:
    return subprocess_env(BILLOPS_HOME=str(home), PYTHONPATH=str(ROOT), **extra)
