"""The nightly run: for every biller, settle what earlier runs left open.

Later jobs (bank files, payouts, pausing delinquent customers) join here. Billers run in parallel
(bounded) and independently: one biller's failure is reported and the others carry on; the run
fails at the end, after the summary table is written, when any biller failed.
"""

from __future__ import annotations

from dataclasses import dataclass

from prefect import flow, get_run_logger, task
from prefect.artifacts import create_table_artifact
from prefect.cache_policies import NO_CACHE
from prefect.task_runners import ThreadPoolTaskRunner

from blocks import BillerCredentials
from tasks import import_jobs
from tasks.biller_session import biller_session, open_ledger
from tasks.payment_request_import import CLAIMS
from tasks.workers import worker_name

MAX_PARALLEL_BILLERS = 4


@dataclass(frozen=True)
class BillerResult:
    """One biller's line in the nightly summary."""

    biller: str
    ok: bool
    imports_settled: int = 0
    imports_open: int = 0
    error: str = ""


class NightlyFailed(Exception):
    """At least one biller failed; the summary artifact says which and why."""


@task(name="nightly-biller", cache_policy=NO_CACHE)
def nightly_for_biller(block: str) -> BillerResult:
    """Everything the night does for one biller. Errors become a failed line, not a failed run."""
    logger = get_run_logger()
    ledger = open_ledger()
    try:
        with biller_session(block, ledger) as session:
            worker = worker_name()
            settled = [
                import_jobs.settle_one(
                    session.client,
                    ledger,
                    op,
                    import_jobs.PollSettings(),
                    worker=worker,
                    claims=CLAIMS,
                )
                for op in import_jobs.unsettled_imports(ledger, session.biller_id)
            ]
        still_open = sum(op.state not in ("confirmed", "failed") for op in settled)
        return BillerResult(block, True, len(settled) - still_open, still_open)
    except Exception as exc:  # one biller's failure must not stop the others
        logger.error("biller %s failed: %s", block, exc)
        return BillerResult(block, False, error=f"{type(exc).__name__}: {exc}")
    finally:
        ledger.close()


def all_biller_blocks() -> list[str]:
    """Names of every biller credential block on this Prefect server."""
    from prefect.client.orchestration import get_client

    with get_client(sync_client=True) as client:
        documents = client.read_block_documents_by_type(
            BillerCredentials.get_block_type_slug(), include_secrets=False
        )
    return sorted(doc.name for doc in documents if doc.name)


@flow(
    name="nightly",
    task_runner=ThreadPoolTaskRunner(max_workers=MAX_PARALLEL_BILLERS),  # type: ignore[arg-type]
)
def nightly(billers: list[str] | None = None) -> list[BillerResult]:
    """The nightly run for every biller (or the named credential blocks).

    - **billers**: credential block names; empty means every biller credential block.
    """
    names = billers or all_biller_blocks()
    futures = [nightly_for_biller.submit(name) for name in names]
    results = [future.result() for future in futures]
    create_table_artifact(
        [
            {
                "biller": r.biller,
                "status": "ok" if r.ok else "FAILED",
                "imports settled": r.imports_settled,
                "imports still open": r.imports_open,
                "error": r.error,
            }
            for r in results
        ],
        key="nightly-summary",
        description=f"Nightly run over {len(results)} biller(s)",
    )
    failed = [r.biller for r in results if not r.ok]
    if failed:
        raise NightlyFailed(
            f"{len(failed)} of {len(results)} biller(s) failed: {', '.join(failed)}"
        )
    return results
