"""Spectral (``spectral:oas``, pinned in ``tools/spectral``) finds no error in the contract, and no
warning but the intentional ones, each named in the contract's own description (convention 20).

``make contract-tools`` installs Spectral with ``npm ci``; without it the test skips and says so.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).resolve().parents[1]
CONTRACT = ROOT / "billing_api" / "openapi.yaml"
SPECTRAL = ROOT / "tools" / "spectral" / "node_modules" / ".bin" / "spectral"
RULESET = ROOT / "tools" / "spectral" / "ruleset.yaml"
# (rule, the component it is about): each is explained in the contract's description.
INTENTIONAL = {("oas3-unused-component", "components.schemas.WebhookDelivery")}


def test_spectral_reports_only_the_intentional_warnings() -> None:
    if not SPECTRAL.is_file():
        pytest.skip(f"{SPECTRAL} is missing: `make contract-tools` installs it")
    run = subprocess.run(
        [str(SPECTRAL), "lint", "-r", str(RULESET), "--format", "json", str(CONTRACT)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    results = json.loads(run.stdout or "[]")
    found = {(r["code"], ".".join(str(p) for p in r["path"])) for r in results}
    assert [r for r in results if r["severity"] == 0] == []  # 0: error
    assert found == INTENTIONAL, run.stdout


def test_the_intentional_warnings_are_listed_in_the_contract() -> None:
    description = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))["info"]["description"]
    for rule, where in INTENTIONAL:
        assert rule in description and where.rsplit(".", 1)[-1] in description
