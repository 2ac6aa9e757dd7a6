"""Read-only commands load only what they read: ``billops ledger status`` and ``billops audit``
need the ledger, not the service client; ``billops bank profiles`` needs the profiles, not the
ledger (README "Performance": what each saves).

Each command runs to its end in a fresh interpreter (this test process has imported everything
already), and what it loaded is read from ``sys.modules`` afterwards.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from ledger import upgrade_database

ROOT = Path(__file__).resolve().parents[2]
SERVICE_CLIENT = ("billing_api", "httpx", "prefect", "pandas", "pyarrow")
PROBE = """
import json, sys
from typer.testing import CliRunner
from billops.cli import app
done = CliRunner().invoke(app, {argv!r})
print(json.dumps({{"exit": done.exit_code, "output": done.output,
    "loaded": sorted(m for m in {unwanted!r} if m in sys.modules)}}))
"""


def _run(argv: list[str], unwanted: tuple[str, ...], home: Path) -> dict[str, object]:
    env = {"PATH": "/usr/bin:/bin", "BILLOPS_HOME": str(home), "HOME": str(home)}
    done = subprocess.run(
        [sys.executable, "-c", PROBE.format(argv=argv, unwanted=list(unwanted))],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        check=True,
    )
    result: dict[str, object] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


@pytest.mark.parametrize("argv", [["ledger", "status"], ["audit"]], ids=["status", "audit"])
def test_reading_the_ledger_loads_no_service_client(argv: list[str], tmp_path: Path) -> None:
    upgrade_database(f"sqlite:///{tmp_path / 'ledger.db'}")

    result = _run(argv, SERVICE_CLIENT, tmp_path)

    assert result["exit"] == 0, result["output"]
    assert result["loaded"] == []


def test_listing_bank_profiles_loads_neither_ledger_nor_reader(tmp_path: Path) -> None:
    unwanted = ("sqlalchemy", "alembic", "ledger._ledger", "pyarrow", "numpy", *SERVICE_CLIENT)

    result = _run(["bank", "profiles"], unwanted, tmp_path)

    assert result["exit"] == 0, result["output"]
    assert "barclays" in str(result["output"])
    assert result["loaded"] == []
