"""What an operator reads in the run's logs in the UI: the client's retry warnings (a rate-limited
service answering 429), the credential's CRITICAL recovery line, and what the run did.

The sandbox here is the test's own: a fault plan is sandbox-wide."""

from __future__ import annotations

import logging
from collections.abc import Iterator
from pathlib import Path

import pytest
from prefect import flow

from flows.payment_requests import import_payment_requests, poll_import_jobs
from tasks.common.session import open_biller
from tests.support.faults import plan_faults
from tests.support.import_billers import ImportBiller, make_biller, write_rows
from tests.support.prefect_api import flow_run_logs
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox


@pytest.fixture(scope="module")
def own_sandbox(tmp_path_factory: pytest.TempPathFactory) -> Iterator[SandboxAdmin]:
    database = tmp_path_factory.mktemp("logs-sandbox") / "sandbox.db"
    with running_sandbox(f"sqlite:///{database}") as admin:
        yield admin


@pytest.fixture
def rate_limited_biller(prefect: None, own_sandbox: SandboxAdmin) -> Iterator[ImportBiller]:
    biller = make_biller(own_sandbox, customers=2)
    yield biller
    biller.api.close()
    own_sandbox.http.delete("/_sandbox/faults")


def test_the_clients_retry_warnings_reach_the_runs_logs(
    rate_limited_biller: ImportBiller, own_sandbox: SandboxAdmin, ledger_home: Path
) -> None:
    plan_faults(
        own_sandbox, {"pathPrefix": "/api/biller", "method": "GET", "rateLimit": 1, "retryAfter": 0}
    )

    state = poll_import_jobs(biller=rate_limited_biller.block, return_state=True)

    assert state.is_failed()  # every attempt was refused
    run_id = state.state_details.flow_run_id
    assert run_id is not None
    logs = flow_run_logs(run_id, contains="429")
    retries = [log for log in logs if log.name.startswith("billing_api") and "429" in log.message]
    assert retries, [(log.name, log.message) for log in logs]
    assert all(log.level == logging.WARNING for log in retries)


@flow(name="recovery-line-probe")
def _token_trouble(block: str) -> None:
    with open_biller(block):
        # The token manager's line when a new token set could not be saved to its store.
        logging.getLogger("billing_api._tokens").critical(
            "the new token set of %s was written to the recovery file; run billops auth recover",
            block,
        )


def test_the_credentials_critical_line_reaches_the_runs_logs(
    import_biller: ImportBiller, ledger_home: Path
) -> None:
    state = _token_trouble(import_biller.block, return_state=True)

    logs = flow_run_logs(state.state_details.flow_run_id, contains="recovery file")  # type: ignore[arg-type]
    (line,) = [log for log in logs if "recovery file" in log.message]
    assert (line.name, line.level) == ("billing_api._tokens", logging.CRITICAL)


def test_an_import_run_says_what_it_did(
    import_biller: ImportBiller, ledger_home: Path, tmp_path: Path
) -> None:
    file = write_rows(tmp_path / "said.csv", import_biller, 3)

    state = import_payment_requests(
        file=file, biller=import_biller.block, dry_run=False, return_state=True
    )

    logs = flow_run_logs(state.state_details.flow_run_id, contains="said.csv")  # type: ignore[arg-type]
    text = "\n".join(log.message for log in logs)
    summary = state.result()
    (chunk,) = summary.chunks
    assert f"job {chunk.job_id}" in text and "(3 rows)" in text
    assert "said.csv: Completed" in text and "CREATED 3" in text
