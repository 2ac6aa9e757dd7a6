"""A short round of the sandbox's fuzz (``scripts/fuzz.py``; ``make fuzz`` runs it deep), and the
contract's links checked for stateful coverage without a sandbox.

The round runs schemathesis' examples, fuzzing and stateful phases (the coverage phase, about a
minute and a half on its own, is left to ``make fuzz``) with positive and negative data against a
sandbox of its own, and must find nothing: no server error, no answer outside the contract
(status code, content type, headers, body schema), no request the schema forbids accepted. Its
JUnit reports must show the phases ran test cases and none failed, and it must print the stateful
coverage of both runs. Reaching every operation that takes an id needs the deep run's scenarios:
the round prints it without requiring it (``--no-require-reach``).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
import xml.etree.ElementTree as ElementTree
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = os.environ.get("BILLOPS_FUZZ_EXAMPLES", "3")
STATEFUL_EXAMPLES = os.environ.get("BILLOPS_FUZZ_STATEFUL_EXAMPLES", "4")
COVERAGE_LINE = re.compile(
    r"^(biller|platform): links exercised \d+/(\d+), operations taking an id reached with a "
    r"usable id \d+/(\d+)$",
    re.MULTILINE,
)


@pytest.fixture(scope="module")
def fuzz_script():
    sys.path.insert(0, str(ROOT / "scripts"))
    try:
        import fuzz

        yield fuzz
    finally:
        sys.path.remove(str(ROOT / "scripts"))


def test_the_contracts_links_cover_every_operation_taking_an_id(fuzz_script) -> None:
    # Every link in a stateful family, a link to every operation taking an id, a link filling
    # every id a body requires (the distribution update's paymentRequestIds among them).
    for run in fuzz_script.runs("", "", "client"):
        assert fuzz_script.contract_problems(run) == [], run.name


def test_a_link_missing_from_the_contract_is_a_problem(
    fuzz_script, monkeypatch, tmp_path: Path
) -> None:
    import yaml

    contract = yaml.safe_load(fuzz_script.CONTRACT.read_text(encoding="utf-8"))
    links = contract["components"]["responses"]["PaymentRequestCreated"]["links"]
    del links["PaymentRequestsUpdateDistribution"]
    without = tmp_path / "openapi.yaml"
    without.write_text(yaml.safe_dump(contract), encoding="utf-8")
    monkeypatch.setattr(fuzz_script, "CONTRACT", without)
    biller = fuzz_script.runs("", "", "client")[0]
    assert fuzz_script.contract_problems(biller) == [
        "biller: no link of the contract leads to PUT /payment_requests/distribution",
        "biller: no link of the contract fills the id PUT /payment_requests/distribution:"
        " paymentRequestIds",
    ]


@pytest.mark.timeout(600)
def test_a_short_fuzz_round_finds_nothing(tmp_path: Path) -> None:
    run = subprocess.run(
        [sys.executable, str(ROOT / "scripts" / "fuzz.py"), "--examples", EXAMPLES]
        + ["--stateful-examples", STATEFUL_EXAMPLES, "--no-require-reach"]
        + ["--phases", "examples,fuzzing,stateful", "--report-dir", str(tmp_path)],
        capture_output=True,
        text=True,
        timeout=580,
        check=False,
    )
    assert run.returncode == 0, run.stdout[-20_000:] + run.stderr[-5_000:]
    found = COVERAGE_LINE.findall(run.stdout)
    totals = {name: (int(links), int(ops)) for name, links, ops in found}
    assert totals.keys() == {"biller", "platform"}, run.stdout[-5_000:]
    assert totals["biller"][0] >= 60 and totals["biller"][1] >= 50, totals
    for name in ("biller", "platform"):
        suites = ElementTree.parse(tmp_path / f"{name}.xml").getroot()
        cases = suites.findall(".//testcase")
        assert len(cases) >= (60 if name == "biller" else 7), name
        assert [c.get("name") for c in cases if c.find("failure") is not None] == [], name
    stateful = list(tmp_path.glob("*-*.xml"))
    assert len(stateful) == 6, stateful
    for report in stateful:
        cases = ElementTree.parse(report).getroot().findall(".//testcase")
        assert [c.get("name") for c in cases if c.find("failure") is not None] == [], report
