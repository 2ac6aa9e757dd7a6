"""Fuzz the sandbox with schemathesis: every phase (examples, coverage, fuzzing, stateful via the
contract's links), positive and negative data, and the checks a third party relies on; then say
what the stateful phase reached.

    .venv/bin/python scripts/fuzz.py [--examples N] [--stateful-examples N] [--report-dir DIR]
                                     [--phases examples,coverage,fuzzing,stateful]

A sandbox starts on a free port (SQLite in a temporary folder); biller operations run with a
biller token, ``/apps/...`` with a platform token of the app that owns the path's ``clientId``
(``/oauth2/*`` stays out: its form bodies are exercised by the OAuth tests). The run passes when
schemathesis finds nothing (no server error, no answer outside the contract: status, content
type, headers, body schema; no request the schema forbids accepted) and when the stateful phase
reached every operation that takes an id with a usable id (``scripts/fuzz_coverage.py`` says what
that means; ``scripts/fuzz_hooks.py`` records the steps, steers positive bodies of the stateful
phase to the rules JSON Schema cannot state and plays the payer's part on the hosted pages).

``make fuzz`` runs it deep; ``make test`` runs a short round
(``tests/sandbox/test_schemathesis.py``).
Besides schemathesis' own output it prints, per run, each link of the contract with how often it
was followed, how often with a usable id and how often answered 2xx, the same per operation that
takes an id, and the totals. Exit status 0 on success.
"""

from __future__ import annotations

import argparse
import os
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import httpx
import yaml

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
sys.path.insert(0, str(ROOT / "scripts"))

import fuzz_coverage  # noqa: E402

from sandbox.config import SandboxSettings  # noqa: E402
from sandbox.serve import serve_in_thread  # noqa: E402

CONTRACT = ROOT / "billing_api" / "openapi.yaml"
PHASES = "examples,coverage,fuzzing,stateful"
SEED = "20261124"
CHECKS = ",".join(
    (
        "not_a_server_error",
        "status_code_conformance",
        "content_type_conformance",
        "response_headers_conformance",
        "response_schema_conformance",
        "negative_data_rejection",
    )
)


@dataclass(frozen=True)
class Run:
    """The operations one token may use: a biller's, or a platform app's."""

    name: str
    token: str
    path_pattern: str  # the operations whose path matches (re.search) are selected
    include: bool  # True: select the matching paths; False: select all others
    path_values: dict[str, str]

    def selects(self, path: str) -> bool:
        return bool(re.search(self.path_pattern, path)) == self.include

    @property
    def selection(self) -> list[str]:
        flag = "--include-path-regex" if self.include else "--exclude-path-regex"
        return [flag, self.path_pattern]


@dataclass(frozen=True)
class Family:
    """Operations whose stateful sequences run together: the create of a record, what creates
    it needs (a customer) and the operations on it. Run apart, a sequence's steps go to the
    records it created instead of thinning out over every link of the contract."""

    name: str
    run: str  # Run.name
    operation_ids: str  # regular expression (re.search) on operationId

    def holds(self, operation_id: str) -> bool:
        return re.search(self.operation_ids, operation_id) is not None


# A customer's mandate (signed by the payer's part in ``scripts/fuzz_hooks.py`` every other time)
# lets invoices and payment requests be collected by direct debit, paused and resumed.
FAMILIES = (
    Family(
        "customers", "biller", r"^(customers|customer_autopilot_settings|cards_on_file|mandates)\."
    ),
    Family(
        "invoices", "biller", r"^(customers\.create|mandates\.create|invoices\..+|payments\..+)$"
    ),
    Family(
        "payment-requests",
        "biller",
        r"^(customers\.create|mandates\.create|payment_requests\..+)$",
    ),
    Family("recurring-invoices", "biller", r"^(customers\.create|recurring_invoices\..+)$"),
    Family(
        "recurring-payment-requests",
        "biller",
        r"^(customers\.create|recurring_payment_requests\..+)$",
    ),
    Family("webhooks", "platform", r"^webhooks\."),
)


@contextmanager
def sandbox() -> Iterator[str]:
    with tempfile.TemporaryDirectory(prefix="billops-fuzz-") as folder:
        settings = SandboxSettings(port=0, database_url=f"sqlite:///{folder}/sandbox.db")
        with serve_in_thread(settings) as root:
            yield root


def _ok(response: httpx.Response) -> dict[str, str]:
    response.raise_for_status()
    return dict(response.json())


def tokens(root: str) -> tuple[str, str, str]:
    """(biller access token, platform access token, the app's client id) of a fresh app."""
    with httpx.Client(base_url=root, timeout=30) as http:
        app = _ok(http.post("/_sandbox/apps", json={"name": "fuzz"}))
        biller = _ok(http.post("/_sandbox/billers", json={"name": "Fuzz Ltd"}))
        code = _ok(
            http.post(
                f"/_sandbox/apps/{app['clientId']}/authorization_codes",
                json={"billerId": biller["billerId"]},
            )
        )
        auth = (app["clientId"], app["clientSecret"])
        grant = {"grant_type": "authorization_code", "code": code["code"]}
        biller_token = _ok(http.post("/api/oauth2/token", data=grant, auth=auth))["access_token"]
        platform = {"grant_type": "client_credentials"}
        platform_token = _ok(http.post("/api/oauth2/token", data=platform, auth=auth))
    return biller_token, platform_token["access_token"], app["clientId"]


def write_config(run: Run, report: Path, name: str, stateful_examples: int) -> Path:
    config = report / f"{name}.toml"
    # Stateful sequences follow the contract's own links (not schemathesis' guesses), long
    # enough to go from a create to the operations on what it created and on to a second record.
    # NUL in text is refused with 400 by design (the contract's convention 18): generating it
    # would only spend the examples on requests that can never pass.
    lines = ["[generation]", "allow-x00 = false", ""]
    lines += ["[phases.stateful]", "max-steps = 20", "inference = { algorithms = [] }", ""]
    lines += ["[phases.stateful.generation]", f"max-examples = {stateful_examples}", ""]
    lines += ["[parameters]"] + [f'"path.{k}" = "{v}"' for k, v in run.path_values.items()]
    config.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return config


@dataclass(frozen=True)
class Settings:
    root: str
    examples: int
    stateful_examples: int
    seed: str
    report: Path
    require_reach: bool


def run_schemathesis(
    settings: Settings, run: Run, name: str, phases: str, selection: list[str], steps: Path
) -> int:
    """schemathesis' exit status; the stateful steps are appended to ``steps``."""
    config = write_config(run, settings.report, name, settings.stateful_examples)
    command = [
        str(Path(sys.executable).with_name("schemathesis")),
        "--config-file",
        str(config),
        "run",
        str(CONTRACT),
        "--url",
        f"{settings.root}/api",
        "--header",
        f"Authorization: Bearer {run.token}",
        "--phases",
        phases,
        "--checks",
        CHECKS,
        "--mode",
        "all",
        "--max-examples",
        str(settings.examples),
        "--seed",
        settings.seed,
        "--continue-on-failure",
        "--request-timeout",
        "60",
        "--report",
        "junit",
        "--report-junit-path",
        str(settings.report / f"{name}.xml"),
        "--output-sanitize",
        "true",
        *selection,
    ]
    print(f"== {name}: schemathesis {phases}", flush=True)
    env = os.environ.copy()
    env["SCHEMATHESIS_HOOKS"] = str(ROOT / "scripts" / "fuzz_hooks.py")
    env["BILLOPS_FUZZ_STEPS"] = str(steps)
    return subprocess.run(command, check=False, env=env).returncode


def fuzz(settings: Settings, run: Run, phases: list[str]) -> tuple[int, list[str]]:
    """The unit phases over every operation of the run, then the stateful phase per family;
    schemathesis' exit status (0 or not) and the stateful coverage's problems (the contract's
    whenever the stateful phase runs, what was not reached when ``settings.require_reach``)."""
    steps = settings.report / f"{run.name}-steps.jsonl"
    steps.unlink(missing_ok=True)
    status = 0
    unit = [phase for phase in phases if phase != "stateful"]
    if unit:
        status |= run_schemathesis(settings, run, run.name, ",".join(unit), run.selection, steps)
    if "stateful" not in phases:
        return status, []
    for family in (family for family in FAMILIES if family.run == run.name):
        name = f"{run.name}-{family.name}"
        selection = [*run.selection, "--include-operation-id-regex", family.operation_ids]
        status |= run_schemathesis(settings, run, name, "stateful", selection, steps)
    unreached = stateful_coverage(run, steps)
    problems = contract_problems(run)
    if settings.require_reach:
        problems += [f"{run.name}: never reached with a usable id: {label}" for label in unreached]
    return status, problems


def stateful_coverage(run: Run, steps: Path) -> list[str]:
    """Print the run's stateful coverage; the operations taking an id it never reached."""
    contract = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    links = fuzz_coverage.contract_links(contract, run.selects)
    taking = fuzz_coverage.id_taking_operations(contract, run.selects, links)
    coverage = fuzz_coverage.measure(fuzz_coverage.read_steps(steps), links, taking)
    print(fuzz_coverage.render(run.name, coverage), flush=True)
    return coverage.unreached


def contract_problems(run: Run) -> list[str]:
    """What keeps the contract's links from covering the run's operations that take an id: a
    link no stateful family holds, such an operation no link leads to, a required body id no
    link fills. Empty when nothing does."""
    contract = yaml.safe_load(CONTRACT.read_text(encoding="utf-8"))
    selects: Callable[[str], bool] = run.selects
    links = fuzz_coverage.contract_links(contract, selects)
    taking = fuzz_coverage.id_taking_operations(contract, selects, links)
    families = [family for family in FAMILIES if family.run == run.name]
    problems = [
        f"{run.name}: link {link.name} ({link.source} -> {link.target}) is in no stateful family"
        for link in links
        if not any(f.holds(link.source_id) and f.holds(link.target_id) for f in families)
    ]
    problems += [
        f"{run.name}: no link of the contract leads to {label}"
        for label in fuzz_coverage.without_incoming_link(links, taking)
    ]
    required = fuzz_coverage.required_body_ids(contract, selects)
    problems += [
        f"{run.name}: no link of the contract fills the id {label}"
        for label in fuzz_coverage.unfilled_body_ids(links, required)
    ]
    return problems


def runs(biller_token: str, platform_token: str, client_id: str) -> tuple[Run, Run]:
    return (
        Run("biller", biller_token, "^/(oauth2|apps)/", False, {}),
        # The platform token only manages its own app: every /apps path names that app.
        Run("platform", platform_token, "^/apps/", True, {"clientId": client_id}),
    )


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--examples", type=int, default=100, help="examples per operation")
    parser.add_argument(
        "--stateful-examples",
        type=int,
        default=None,
        help="stateful scenarios per family (default: as --examples)",
    )
    parser.add_argument("--report-dir", type=Path, default=ROOT / "fuzz-report")
    parser.add_argument("--phases", default=PHASES, help=f"schemathesis phases (default {PHASES})")
    parser.add_argument("--seed", default=SEED, help=f"schemathesis' seed (default {SEED})")
    parser.add_argument(
        "--require-reach",
        action=argparse.BooleanOptionalAction,
        default=True,
        help="fail when the stateful phase left an operation taking an id unreached (a short"
        " round prints the coverage without requiring it)",
    )
    args = parser.parse_args()
    args.report_dir.mkdir(parents=True, exist_ok=True)
    problems: list[str] = []
    failed = 0
    with sandbox() as root:
        biller_token, platform_token, client_id = tokens(root)
        settings = Settings(
            root,
            args.examples,
            args.stateful_examples or args.examples,
            args.seed,
            args.report_dir,
            args.require_reach,
        )
        for run in runs(biller_token, platform_token, client_id):
            status, found = fuzz(settings, run, args.phases.split(","))
            failed |= status
            problems += found
    for problem in problems:
        print(f"fuzz: {problem}", flush=True)
    if failed:
        print("fuzz: schemathesis found failures (see above)", flush=True)
    ok = not failed and not problems
    reached = "every operation taking an id reached" if args.require_reach else "reach not required"
    print("fuzz: " + (f"no failures, {reached}" if ok else "FAILED"))
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
