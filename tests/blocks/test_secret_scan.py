"""The secret scan plugin (tests/support/secret_scan.py) finds a leak and names only the log."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from tests.support.secret_scan import find_leaks

ROOT = Path(__file__).resolve().parents[2]
LEAKY = """
from tests.support.secret_scan import register_log, register_secret

def test_prints_a_secret():
    register_secret("s3cr3t-value-0123456789")
    print("token is s3cr3t-value-0123456789")

def test_registers_a_clean_log():
    register_log("nothing to see", label="clean subprocess log")

def test_a_state_directory_may_hold_tokens_only_where_allowed(tmp_path):
    from tests.support.secret_scan import register_tree
    register_secret("journal-token-0123456789")
    (tmp_path / "recovery").mkdir()
    (tmp_path / "recovery" / "acme.journal").write_text("journal-token-0123456789")
    (tmp_path / "ledger.db.locks").mkdir()
    (tmp_path / "ledger.db.locks" / "x.lock").write_text("journal-token-0123456789")
    register_tree(tmp_path, allowed=[tmp_path / "recovery"], label="home")
"""


def test_find_leaks_names_each_leaking_log_once() -> None:
    logs = [("a", "x secret-one-long-value x"), ("b", "clean"), ("a", "secret-one-long-value")]
    assert find_leaks(["secret-one-long-value"], logs) == ["a"]
    assert find_leaks([], logs) == []


def test_a_session_that_prints_a_registered_secret_fails(tmp_path: Path) -> None:
    (tmp_path / "test_leaky.py").write_text(LEAKY)
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "tests.support.secret_scan",
            "-p",
            "no:cacheprovider",
            str(tmp_path / "test_leaky.py"),
        ],
        cwd=tmp_path,
        env={"PYTHONPATH": str(ROOT), "PATH": "/usr/bin:/bin"},
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert result.returncode == 1
    assert "3 passed" in result.stdout
    assert "secret found in: test_leaky.py::test_prints_a_secret (call): Captured stdout call" in (
        result.stdout
    )
    assert "clean subprocess log" not in result.stdout
    assert "secret found in: home: ledger.db.locks/x.lock" in result.stdout
    assert "home: recovery" not in result.stdout
    assert "s3cr3t-value-0123456789" not in result.stdout + result.stderr
    assert "journal-token-0123456789" not in result.stdout + result.stderr
