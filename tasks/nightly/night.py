"""What one biller's night did, as its line of the nightly summary, and the night's outcome.

A biller's night runs every job for that biller (``flows/nightly_biller.py``); each job ends in a
named state (``tasks/common/outcome.py``) that becomes a :class:`JobLine`. The figures count only
what the service did in this night's runs: rows the service created or updated, payments it
recorded, pause and resume calls it answered — never what was merely planned or found done by
an earlier run.

A child run on a worker hands its :class:`BillerResult` back through a table artifact on its own
flow run (``nightly-biller-<block>``): the Prefect server keeps it, whichever machine ran the
child, and an operator sees the same row there.
"""

from __future__ import annotations

import json
from dataclasses import asdict, dataclass, field, replace
from datetime import date, datetime
from typing import Any
from zoneinfo import ZoneInfo

from tasks.common.outcome import WITH_REJECTIONS

LONDON = ZoneInfo("Europe/London")
ARTIFACT_PREFIX = "nightly-biller"


def night_of(when: datetime | None = None) -> date:
    """The night a run belongs to: the day in Europe/London (the schedule's zone)."""
    return (when or datetime.now(LONDON)).astimezone(LONDON).date()


@dataclass(frozen=True)
class JobLine:
    """One job of one biller's night: the state it ended in and its message."""

    job: str
    state: str
    message: str
    ok: bool = True

    def text(self) -> str:
        return f"{self.job}: {self.state}" + (f" ({self.message})" if self.message else "")


@dataclass(frozen=True)
class BillerResult:
    """One biller's line in the nightly summary.

    ``imports_settled`` / ``imports_open`` (import jobs earlier runs left), ``delinquency`` (the
    delinquency run's state and message), ``bank`` and ``payouts`` (each waiting statement or
    report and what became of it) keep the words the CLI and the demo print.
    """

    biller: str
    ok: bool
    imports_settled: int = 0
    imports_open: int = 0
    error: str = ""
    delinquency: str = ""
    bank: str = ""
    payouts: str = ""
    jobs: tuple[JobLine, ...] = ()
    rows: int = 0
    payments: int = 0
    pauses: int = 0
    seconds: float = 0.0
    outcome: str = ""
    attempts: int = 1
    worker: str = ""
    run_id: str = ""
    files: tuple[str, ...] = field(default_factory=tuple)

    @property
    def jobs_text(self) -> str:
        failed = sum(not j.ok for j in self.jobs)
        return f"{len(self.jobs)} run" + (f", {failed} failed" if failed else "")

    def with_attempt(self, attempts: int, worker: str, run_id: str) -> BillerResult:
        return replace(self, attempts=attempts, worker=worker or self.worker, run_id=run_id)


def failed_result(
    biller: str, error: str, *, attempts: int, worker: str, run_id: str
) -> BillerResult:
    """The line of a biller whose night could not say what it did (it crashed, or never ran)."""
    return BillerResult(
        biller,
        False,
        error=error,
        outcome="Failed",
        attempts=attempts,
        worker=worker,
        run_id=run_id,
    )


def summary_row(result: BillerResult) -> dict[str, Any]:
    """The biller's row of the summary table (what an operator reads)."""
    return {
        "biller": result.biller,
        "status": "ok" if result.ok else "FAILED",
        "outcome": result.outcome,
        "jobs": result.jobs_text,
        "rows": result.rows,
        "payments": result.payments,
        "pauses": result.pauses,
        "duration (s)": round(result.seconds, 1),
        "attempts": result.attempts,
        "worker": result.worker,
        "imports settled": result.imports_settled,
        "imports still open": result.imports_open,
        "delinquency": result.delinquency,
        "bank statements": result.bank,
        "payouts": result.payouts,
        "details": "; ".join(job.text() for job in result.jobs),
        "error": result.error,
    }


def artifact_key_of(block: str) -> str:
    """The key of the table artifact a biller's night leaves on its run."""
    return f"{ARTIFACT_PREFIX}-{block}"


def artifact_row(result: BillerResult, night: date) -> dict[str, Any]:
    """The one row of the artifact a biller's night leaves: the night, its summary row, and the
    whole result (for the coordinator, :func:`decode`)."""
    return {
        "night": night.isoformat(),
        **summary_row(result),
        "result": json.dumps(asdict(result), sort_keys=True),
    }


def decode(table: str) -> BillerResult:
    """The result a child run left in its artifact (see :func:`artifact_row`)."""
    (row,) = json.loads(table)
    data = json.loads(row["result"])
    data["jobs"] = tuple(JobLine(**job) for job in data.get("jobs", ()))
    data["files"] = tuple(data.get("files", ()))
    return BillerResult(**data)


@dataclass(frozen=True)
class NightSummary:
    """The whole night: how many billers, which failed, the totals."""

    results: tuple[BillerResult, ...]

    @property
    def failed(self) -> list[str]:
        return [r.biller for r in self.results if not r.ok]

    @property
    def with_rejections(self) -> list[str]:
        """The billers whose night went on past a refused file or policy."""
        return [r.biller for r in self.results if r.ok and r.outcome == WITH_REJECTIONS]

    @property
    def still_open(self) -> int:
        return sum(r.imports_open for r in self.results)

    def message(self) -> str:
        results = self.results
        text = (
            f"{len(results)} biller(s): {sum(r.rows for r in results)} row(s) imported, "
            f"{sum(r.payments for r in results)} payment(s) recorded, "
            f"{sum(r.pauses for r in results)} pause/resume call(s), "
            f"{sum(r.imports_settled for r in results)} open import job(s) settled, "
            f"{self.still_open} still open"
        )
        retried = sum(r.attempts > 1 for r in results)
        if retried:
            text += f"; {retried} retried"
        if self.failed:
            text = f"{len(self.failed)} of {len(results)} biller(s) failed: " + (
                ", ".join(self.failed) + f". {text}"
            )
        return text
