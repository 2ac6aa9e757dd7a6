"""Property-based conformance of the sandbox to its contract (schemathesis).

Every operation but ``/oauth2/*`` is exercised with generated requests against a running sandbox:
biller operations with a long-lived biller token, ``/apps/...`` with a platform token of its own
app. A response must never be a server error and must match the contract (status code, content
type, body schema, declared headers). ``make test`` runs a dozen examples per operation;
``make fuzz`` (``BILLOPS_FUZZ_EXAMPLES``) runs many more.
"""

from __future__ import annotations

import os
from collections.abc import Iterator
from pathlib import Path

import pytest
import schemathesis
import yaml
from hypothesis import HealthCheck, settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)

from tests.support.sandbox_admin import BillerTokens, PlatformToken, SandboxAdmin

# Hypothesis flags any use of the global `random` module while it draws a case, from any thread.
# Our strategies never use it, but Prefect's client threads left by earlier tests in the session
# can (their backoff jitter, prefect/utilities/math.py): not a strategy bug, so the warning is off.
pytestmark = pytest.mark.filterwarnings(
    "ignore:Do not use the `random` module inside strategies"
    ":hypothesis.errors.HypothesisDeprecationWarning"
)

CONTRACT = Path(__file__).resolve().parents[2] / "billing_api" / "openapi.yaml"
EXAMPLES = int(os.environ.get("BILLOPS_FUZZ_EXAMPLES", "12"))
CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    response_headers_conformance,
]

schema = schemathesis.openapi.from_dict(yaml.safe_load(CONTRACT.read_text(encoding="utf-8")))
biller_operations = schema.exclude(path_regex=r"^/(oauth2|apps)/")
platform_operations = schema.include(path_regex=r"^/apps/")
fuzz_settings = settings(
    max_examples=EXAMPLES,
    deadline=None,
    suppress_health_check=list(HealthCheck),
    derandomize=True,  # the same examples every run: a red CI is reproducible
)


@pytest.fixture(scope="module")
def fuzz_admin(sandbox: str) -> Iterator[SandboxAdmin]:
    helper = SandboxAdmin(sandbox)
    yield helper
    helper.close()


@pytest.fixture(scope="module")
def fuzz_biller(fuzz_admin: SandboxAdmin) -> BillerTokens:
    return fuzz_admin.connect_biller("Fuzz Ltd")


@pytest.fixture(scope="module")
def fuzz_platform(fuzz_admin: SandboxAdmin) -> PlatformToken:
    return fuzz_admin.platform_token()


@biller_operations.parametrize()
@fuzz_settings
def test_biller_operations_conform(case, fuzz_admin: SandboxAdmin, fuzz_biller) -> None:
    case.call_and_validate(
        base_url=f"{fuzz_admin.root}/api", headers=fuzz_biller.headers, checks=CHECKS, timeout=30
    )


@platform_operations.parametrize()
@fuzz_settings
def test_platform_operations_conform(case, fuzz_admin: SandboxAdmin, fuzz_platform) -> None:
    if "clientId" in (case.path_parameters or {}):
        case.path_parameters["clientId"] = fuzz_platform.app.client_id
    case.call_and_validate(
        base_url=f"{fuzz_admin.root}/api", headers=fuzz_platform.headers, checks=CHECKS, timeout=30
    )
