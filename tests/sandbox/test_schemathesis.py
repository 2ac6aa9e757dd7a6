"""A short round of the sandbox's fuzz (``scripts/fuzz.py``; ``make fuzz`` runs it deep).

schemathesis runs every phase (examples, coverage, fuzzing, and stateful sequences that follow
the contract's links) with positive and negative data against a sandbox of its own, and must find
nothing: no server error, no answer outside the contract (status code, content type, headers,
body schema), no request the schema forbids accepted. Its JUnit reports must show the phases ran
test cases and none failed.
"""

from __future__ import annotations

import os
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = os.environ.get("BILLOPS_FUZZ_EXAMPLES", "5")


@pytest.mark.timeout(900)
def test_a_short_fuzz_round_finds_nothing(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fuzz.py"), "--examples", EXAMPLES]
        + ["--report-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=880,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-20_000:] + run.stderr[-5_000:]
    for name in ("biller", "platform"):
        suites = ElementTree.parse(tmp_path / f"{name}.xml").getroot()
        cases = suites.findall(".//testcase")
        assert len(cases) >= (60 if name == "biller" else 7), name
        assert [c.get("name") for c in cases if c.find("failure") is not None] == [], name
