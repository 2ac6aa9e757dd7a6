"""Soak (``make soak``): a platform's whole night under faults and kills, checked against the
sandbox's own truth.

Ten billers (``BILLOPS_SOAK_BILLERS``), each with a payment-request file, a bank statement paying
one invoice in full (recorded unattended), a delinquency policy that pauses a direct-debit
customer who owes and its payout export (the sandbox makes no payout before its clock moves, so
usually the header alone), on a sandbox of its own answering 10% of API calls with a 500 and
dropping 5% after they commit, with 429 storms (``Retry-After: 1``) a few seconds long every
half minute.
Two process workers run the billers' nights; fifty times (``BILLOPS_SOAK_KILLS``) at a random
moment a worker running a night is SIGKILLed with that night's process, and started again. The
coordinator is run again (on the next night, for the billers not yet done) until every biller's
night has completed; then:

- the service holds each payment request once (by reference), each invoice's payment once, and
  the direct-debit invoice paused by one change (its ``COLLECTION_PAUSED`` events);
- every ledger operation is settled (confirmed or failed, none intended, sent or unknown);
- every file is in ``processed/`` or ``failed/`` with its report, nothing in ``processing/``;
- each payout report is recorded done in the ledger with its report and its payouts, and the
  service's payouts of its period are as they were when it was downloaded (the job only reads);
- every biller's refresh token is the live one at the service (neither used nor revoked). A kill
  that lands in the service's part of a refresh's window (the request reached it, the answer
  died with the process: ``docs/credentials.md`` §3, beyond any client) spends the token; the
  next run's failure names the refresh's process, and when that process is one the soak killed
  the biller is logged in again, as an operator would, and its night resumes. A dead token that
  no kill explains fails the soak, with what the logs say of that credential;
- no secret the sandbox issued in the run (its ``/_sandbox/secrets``: every client secret and
  token, those the workers rotated included, and webhook credentials) is in the workers' and
  server's logs, the Prefect server's stored logs and artifacts, any file under ``BILLOPS_HOME``
  (reports, the ledger's SQLite file) but the token recovery journal, the output of the
  ``billops`` commands an operator runs the morning after, or any ledger column but the sealed
  token journal's (the session's secret scan, ``tests/support/secret_scan.py``).

The counts are printed. CI's short version (two billers, two kills) runs on a SQLite ledger and
on PostgreSQL's; a slow one puts the Prefect server's database on PostgreSQL too. The default
suite's other short chaos run (one worker killed mid-night) is ``test_nightly_workers.py``.
"""

from __future__ import annotations

import json
import os
import random
import threading
import time
from collections import Counter
from dataclasses import dataclass
from datetime import timedelta
from pathlib import Path
from typing import Any

import pytest
from sqlalchemy.engine import make_url

from flows.nightly import nightly
from ledger import OperationState
from tasks.common.session import open_ledger
from tasks.nightly.limits import LEASE_LABEL
from tasks.nightly.night import night_of
from tests.support.databases import temporary_postgres_database
from tests.support.faults import clear_faults, fault_counts, plan_faults
from tests.support.nightly_world import WholeBiller, night_platform, night_runs, whole_biller
from tests.support.platform import Platform
from tests.support.sandbox_admin import SandboxAdmin, running_sandbox
from tests.support.secret_scan import (
    register_database,
    register_issued,
    register_log,
    register_tree,
)
from tests.support.soak_checks import (
    live_refresh_token,
    morning_commands,
    payout_fate,
    sandbox_truth,
    server_texts,
)
from tests.support.soak_credentials import (
    crashed_attempt_pids,
    credential_dead,
    credential_story,
    log_in_again,
    unfinished_refresh_pids,
)

BILLERS = int(os.environ.get("BILLOPS_SOAK_BILLERS", "10"))
KILLS = int(os.environ.get("BILLOPS_SOAK_KILLS", "50"))
ROWS = 30
MAX_ROUNDS = 12
# A kill while a worker starts a run leaves it Pending: taken for dead after this (the default's
# ten minutes would make the soak mostly waiting).
STUCK_MINUTES = 3.0
BASE = {"errorRate": 0.10, "dropAfterCommit": 0.05}
STORM = {**BASE, "rateLimit": 0.6, "retryAfter": 1}
SETTLED = {OperationState.CONFIRMED, OperationState.FAILED}
# The ledger's only column meant to hold a credential: the token journal's records, sealed
# under BILLOPS_TOKEN_JOURNAL_KEY (docs/credentials.md).
LEDGER_CREDENTIALS = ["ledger_token_journal.sealed"]


class Chaos:
    """The 429 storms and the kills, each on a thread of its own until :meth:`stop`."""

    def __init__(self, running: Platform, admin: SandboxAdmin, kills: int, seed: int) -> None:
        self.running, self.admin, self.wanted = running, admin, kills
        self.rng = random.Random(seed)
        self.kills: list[str] = []  # "worker: biller" of each kill
        self.victims: set[int] = set()  # every process the kills took (workers and their runs)
        self.storms = 0
        # The sandbox counts faults since its plan was last set; each re-plan adds them up here.
        self.injected: Counter[str] = Counter()
        self.done = threading.Event()
        self.threads = [
            threading.Thread(target=self._kill, daemon=True),
            threading.Thread(target=self._storm, daemon=True),
        ]
        for thread in self.threads:
            thread.start()

    def _kill(self) -> None:
        while not self.done.is_set() and len(self.kills) < self.wanted:
            self.done.wait(self.rng.uniform(1.0, 12.0))
            running = [
                run
                for run in night_runs(self.running.url)
                if run["state_type"] == "RUNNING" and LEASE_LABEL in run["labels"]
            ]
            if not running or self.done.is_set():
                continue
            run = self.rng.choice(running)
            worker = run["labels"].get("prefect.worker.name")
            if worker in self.running.workers:
                self.victims.update(self.running.kill_worker(worker))
                self.kills.append(f"{worker}: {run['parameters']['biller']}")
                self.running.start_worker(worker)

    def _storm(self) -> None:
        while not self.done.wait(self.rng.uniform(20.0, 40.0)):
            self.replan(STORM)
            self.storms += 1
            self.done.wait(self.rng.uniform(3.0, 8.0))
            self.replan(BASE)

    def replan(self, rule: dict[str, Any]) -> None:
        self.injected.update(fault_counts(self.admin))
        plan_faults(self.admin, rule, seed=self.rng.randrange(10**6))

    @property
    def finished(self) -> bool:
        """Every kill is in (the storms go on until :meth:`stop`)."""
        return len(self.kills) >= self.wanted

    def stop(self) -> None:
        self.done.set()
        for thread in self.threads:
            thread.join(timeout=120)


def _summary(running: Platform) -> dict[str, dict[str, Any]]:
    from prefect.artifacts import Artifact

    with running.api():
        table = Artifact.get("nightly-summary")
    assert table is not None
    return {row["biller"]: row for row in json.loads(str(table.data))}


@dataclass
class Soak:
    """What a soak did and found (:func:`_soak`)."""

    billers: list[WholeBiller]
    rounds: int
    pending: list[str]
    kills: list[str]
    storms: int
    injected: dict[str, int]
    duration: float
    truth: dict[str, dict[str, Any]]
    references: dict[str, Counter[str]]
    unsettled: list[Any]
    alive: dict[str, bool]
    # Credentials lost to a kill in the service's part of the refresh window, logged in again.
    logged_in_again: list[str]
    leftover: list[str]
    put_away: dict[str, list[str]]
    commands: dict[str, int]  # each billops command run at the end -> its exit code
    issued: int  # secrets the sandbox issued, all in the scan
    statements: dict[str, str]  # each biller's statement reports, to say what happened
    payouts: dict[str, list[str]]  # what is wrong with each biller's payout report (nothing)

    @property
    def duplicates(self) -> dict[str, int]:
        refs = self.references.values()
        return {
            "payment requests": sum(c - 1 for found in refs for c in found.values()),
            "payments": sum(max(t["payments"] - 1, 0) for t in self.truth.values()),
            "pauses or resumes": sum(
                max(count - 1, 0) for t in self.truth.values() for count in t["events"].values()
            ),
        }


def _soak(
    root: Path,
    billers: int,
    kills: int,
    *,
    ledger_url: str | None = None,
    server_database_url: str | None = None,
) -> Soak:
    """The whole night of ``billers`` under faults and ``kills`` worker kills, rerun until done;
    everything it left registered with the secret scan."""
    database = root / "sandbox.db"
    with (
        running_sandbox(f"sqlite:///{database}") as admin,
        night_platform(
            root / "night", ledger_url=ledger_url, server_database_url=server_database_url
        ) as running,
    ):
        home = Path(running.env["BILLOPS_HOME"])
        with running.api():
            made = [whole_biller(admin, home, 900 + n, ROWS) for n in range(billers)]
        plan_faults(admin, BASE, seed=19)
        chaos = Chaos(running, admin, kills, seed=20261124)
        everyone = [b.block for b in made]
        pending, rounds, started = list(everyone), 0, time.monotonic()
        logged_in_again: list[str] = []
        try:
            while (pending or not chaos.finished) and rounds < MAX_ROUNDS:
                # While kills remain, every biller's night runs again (a night with nothing
                # waiting still runs every job); then only the billers not done yet.
                asked = everyone if not chaos.finished else pending
                night = night_of() + timedelta(days=rounds)
                with running.api():
                    nightly(
                        billers=asked,
                        night=night,
                        run_billers="workers",
                        stuck_starting_minutes=STUCK_MINUTES,
                        return_state=True,
                    )
                rows = _summary(running)
                done = {b for b in asked if rows[b]["status"] == "ok"}
                stopped = [b for b in made if b.block in asked and b.block not in done]
                logged_in_again += _lost_credentials(running, admin, database, chaos, stopped)
                pending = [b for b in pending if b not in done]
                rounds += 1
        finally:
            chaos.stop()
            chaos.injected.update(fault_counts(admin))
            clear_faults(admin)
        duration = time.monotonic() - started

        truth = {b.block: sandbox_truth(database, b) for b in made}
        payouts = {b.block: payout_fate(admin, home, b) for b in made}
        requests = {
            b.block: b.api.get("/payment_requests", params={"size": 100}).json() for b in made
        }
        with open_ledger() as ledger:
            ops = {b.block: ledger.operations(biller=b.biller_id) for b in made}
        with running.api():
            alive = {b.block: live_refresh_token(database, b.block) for b in made}
        commands = morning_commands(running, everyone)
        leftover = [str(p) for p in (home / "inbox").rglob("processing/**/*") if p.is_file()]
        put_away = {
            b.block: sorted(
                p.name
                for p in (home / "inbox" / b.block).rglob("*")
                if p.is_file() and {"processed", "failed"} & set(p.parts)
            )
            for b in made
        }
        statements = {
            b.block: "\n".join(
                f"--- {p.name}\n{p.read_text(errors='replace')}"
                for p in sorted((home / "inbox" / b.block).rglob("statement*"))
                if p.is_file() and p.name != "statement.csv"
            )
            for b in made
        }
        # The secret sweep: every secret the sandbox issued (tokens rotated by the workers
        # included), against every log, artifact, report, CLI output and ledger column.
        issued = register_issued(admin.http)
        server_texts(running)
        for log in sorted((root / "night" / "platform").glob("*.log")):
            register_log(log, label=f"soak: {log.name}")
        register_tree(home, allowed=[home / "recovery"], label="soak: BILLOPS_HOME")
        register_database(
            running.env["BILLOPS_LEDGER_URL"], allowed=LEDGER_CREDENTIALS, label="soak: ledger"
        )

    references = {
        block: Counter(r.get("externalId") for r in body["paymentRequests"] if r.get("externalId"))
        for block, body in requests.items()
    }
    unsettled = [op for found in ops.values() for op in found if op.state not in SETTLED]
    return Soak(
        made, rounds, pending, chaos.kills, chaos.storms, dict(chaos.injected), duration, truth,
        references, unsettled, alive, logged_in_again, leftover, put_away, commands, issued,
        statements, payouts,
    )  # fmt: skip


def _lost_credentials(
    running: Platform,
    admin: SandboxAdmin,
    database: Path,
    chaos: Chaos,
    stopped: list[WholeBiller],
) -> list[str]:
    """The billers among ``stopped`` whose refresh token died, each logged in again, when a
    process the soak killed had a refresh of it in flight (docs/credentials.md §3: the service
    spent the token and its answer died with the process). A dead token without such a kill
    fails the soak with what the logs say of it: billops lost a credential."""
    lost: list[str] = []
    for biller in stopped:
        with running.api():
            if not credential_dead(database, biller.block):
                continue
            named = unfinished_refresh_pids(biller.block)
            crashed = crashed_attempt_pids(biller.block)
            killed = named & chaos.victims
            why = f"refresh in flight in killed pid {min(killed)}" if killed else ""
            if not killed and crashed & chaos.victims:
                # The next worker's log of the refused refresh never reached the API (see
                # tests/support/soak_credentials.py): an attempt of this biller was killed.
                why = f"attempt killed in pid {min(crashed & chaos.victims)}, no later log"
            assert why, (
                f"{biller.block}: its refresh token is dead and no process the soak killed had a "
                f"refresh of it in flight or ran it (the logs name {sorted(named) or 'none'}, its "
                f"crashed attempts {sorted(crashed) or 'none'}; killed {sorted(chaos.victims)}):"
                "\n" + credential_story(running.root, biller.block)
            )
            log_in_again(admin, biller.block, biller.biller_id)
        lost.append(f"{biller.block} ({why})")
    return lost


def _report_and_check(soak: Soak, kills: int) -> None:
    count = len(soak.billers)
    print(
        f"\nsoak: {count} billers, {soak.rounds} coordinator run(s), {len(soak.kills)} kills, "
        f"{soak.storms} 429 storms, faults injected {soak.injected}, {soak.duration:.0f} s "
        "(on a loaded 2-core machine)"
    )
    print(f"soak: duplicates {soak.duplicates}; unsettled ledger operations {len(soak.unsettled)}")
    print(
        f"soak: files left in processing/ {len(soak.leftover)}; "
        f"credentials alive {sum(soak.alive.values())}/{count} (lost to a kill in the "
        f"service's refresh window and logged in again: {soak.logged_in_again or 'none'}); "
        f"secrets issued by the sandbox, all scanned: {soak.issued}"
    )
    wrong = sum(len(found) for found in soak.payouts.values())
    print(f"soak: payout reports {len(soak.payouts)}, found wrong {wrong}")
    assert soak.pending == [], f"billers not done after {soak.rounds} runs: {soak.pending}"
    assert len(soak.kills) == kills, soak.kills
    assert soak.duplicates == {"payment requests": 0, "payments": 0, "pauses or resumes": 0}
    for block, refs in soak.references.items():
        assert len(refs) == ROWS, block
    unpaid = {b: t for b, t in soak.truth.items() if t["payments"] != 1}
    assert unpaid == {}, (unpaid, soak.unsettled, [soak.statements[b] for b in unpaid])
    assert all(t["events"] for t in soak.truth.values()), "a direct-debit invoice was never paused"
    assert soak.unsettled == [], soak.unsettled
    assert soak.leftover == []
    for block, names in soak.put_away.items():
        payout = soak.billers[[b.block for b in soak.billers].index(block)].payout_report
        assert {"requests.csv", "statement.csv", payout.name} <= set(names), (block, names)
        assert any(".report." in n or n.endswith((".review.csv", ".inbox.txt")) for n in names)
    assert soak.payouts == dict.fromkeys(soak.payouts, []), soak.payouts
    assert all(soak.alive.values()), soak.alive
    assert soak.commands == dict.fromkeys(soak.commands, 0), soak.commands
    assert soak.issued >= 3 * count  # each biller's app secret, code, tokens at the least


@pytest.mark.slow
@pytest.mark.timeout(6 * 3600)
def test_every_job_under_faults_and_kills_loses_and_doubles_nothing(tmp_path: Path) -> None:
    _report_and_check(_soak(tmp_path, BILLERS, KILLS), KILLS)


@pytest.mark.timeout(1200)
def test_a_short_night_under_faults_and_kills_on_each_ledger_database(
    tmp_path: Path, database_url: str
) -> None:
    """CI's short soak: two billers, two kills, on a SQLite ledger and on PostgreSQL's (with
    ``BILLOPS_TEST_DATABASE_URL``; skipped with the reason without it)."""
    _report_and_check(_soak(tmp_path, 2, 2, ledger_url=database_url), 2)


@pytest.mark.slow
@pytest.mark.postgres
@pytest.mark.timeout(1800)
def test_a_short_night_with_the_prefect_server_and_the_ledger_on_postgresql(
    tmp_path: Path, postgres_url: str
) -> None:
    """The README's topology whole: the Prefect server's database on PostgreSQL too (a
    database of its own, created and dropped here)."""
    with temporary_postgres_database(postgres_url) as server_url:
        asyncpg = make_url(server_url).set(drivername="postgresql+asyncpg")
        server = asyncpg.render_as_string(hide_password=False)
        _report_and_check(
            _soak(tmp_path, 2, 2, ledger_url=postgres_url, server_database_url=server), 2
        )
