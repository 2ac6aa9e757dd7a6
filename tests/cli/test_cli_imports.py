"""A read-only command pays only for what it uses: loading the ``billops`` command line imports
none of the heavy packages (each command imports what it needs when it runs; see the README's
"Performance" section for what that saves)."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
HEAVY = (
    "prefect",
    "pandas",
    "pyarrow",
    "sqlalchemy",
    "alembic",
    "ledger",
    "flows",
    "tasks",
    "blocks",
    "billing_api",
    "httpx",
    "pydantic",
    "rich",
    "urllib.request",
    "openpyxl",
)
PROBE = f"""
import json, sys
import billops.cli
print(json.dumps(sorted(m for m in {list(HEAVY)!r} if m in sys.modules)))
"""


def test_loading_the_command_line_imports_no_heavy_package() -> None:
    # A fresh interpreter: this test process has imported everything already.
    done = subprocess.run(
        [sys.executable, "-c", PROBE], cwd=ROOT, capture_output=True, text=True, check=True
    )

    assert json.loads(done.stdout.strip().splitlines()[-1]) == []


def test_the_lazy_console_prints_what_rich_prints() -> None:
    probe = """
import io
from rich.console import Console
from billops.console import LazyConsole, new_table
lazy, eager = io.StringIO(), io.StringIO()
table = new_table("a", "b", title="t")
table.add_row("1", "[x]")
for console in (LazyConsole(file=lazy, soft_wrap=True), Console(file=eager, soft_wrap=True)):
    console.print("[bold]run[/bold]: /a/very/long/path " * 5, highlight=False)
    console.print(table)
assert lazy.getvalue() == eager.getvalue(), (lazy.getvalue(), eager.getvalue())
print("same")
"""
    done = subprocess.run(
        [sys.executable, "-c", probe], cwd=ROOT, capture_output=True, text=True, check=False
    )

    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "same"
