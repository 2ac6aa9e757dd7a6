"""No single crash loses the refresh token: workers sharing one block with 2-second tokens are
SIGKILLed at random instants, some of them inside the gap between a grant and the block's save
(widened to 0.3 s, the gap a block save used to take); after every trial a fresh worker must work
without a person, and the sandbox's refresh grants must equal the rotations the block recorded.
The sandbox runs in a process of its own, as the service does.

What the client cannot close alone is reported, not hidden: a worker killed after the service
rotated the token but before the answer reached it (a few milliseconds per rotation) leaves an
intent in the journal and no token set. That trial counts as ``in_flight``; the credential is then
lost, the next worker's error names that refresh, and the trial starts over from a new login.
Each such loss is placed: the worker stamps the instant every token-endpoint answer reaches it,
so the test knows whether the lost refresh's answer had arrived when the kill came. Before it, the
service held the request. After it, the kill fell in the client's own reading of the answer before
the journal write (a fraction of a millisecond, counted in ``after_answer_ms``); a kill more than
``ANSWER_TO_JOURNAL_MS`` after the answer with still no journal record fails the test.
"""

from __future__ import annotations

import json
import os
import random
import signal
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from billing_api import RecoveryDirectory, RefreshIntent
from blocks import BillerCredentials
from tests.blocks.kill_workers import Zygote
from tests.support.credentials import (
    invalid_grants,
    refresh_grants,
    register_block_secrets,
    save_connected_block,
    subprocess_env,
    unique_name,
)
from tests.support.sandbox_admin import SandboxAdmin
from tests.support.secret_scan import register_log, register_secret, register_tree

ROOT = Path(__file__).resolve().parents[2]
WORKERS, TRIAL_SECONDS, GAP_SECONDS = 3, 4.0, 0.3
# The longest the journal may take after the answer arrives, even on a loaded machine (measured:
# 0.3 ms median, 4.4 ms p99; a journal written after the test's 300 ms gap would be far past it).
ANSWER_TO_JOURNAL_MS = 50.0


@dataclass
class Tally:
    trials: int = 0
    kills: int = 0
    gap_kills: int = 0
    pending_at_trial_end: int = 0  # a gap kill no live worker had adopted yet
    in_flight: int = 0
    # For each in-flight loss: ms from the lost refresh's intent to the kill.
    in_flight_ms: list[float] = field(default_factory=list)
    # In-flight losses killed after the grant's answer reached the worker, before the journal had
    # it: ms after the answer. The client's own reading of the answer (well under a millisecond,
    # docs/credentials.md §3) is counted; anything slower between the two is a problem.
    after_answer_ms: list[float] = field(default_factory=list)
    late_tokens: int = 0  # 401s of the next worker on a token that expired in transit
    rotations: int = 0
    problems: list[str] = field(default_factory=list)


def _register_worker_secrets(outdir: Path) -> None:
    for path in outdir.glob("*.secrets"):
        for secret in path.read_text().split():
            register_secret(secret)
        path.unlink()


def _wait_for_results(outdir: Path, pid: int, timeout: float) -> dict[str, object]:
    path = outdir / f"{pid}.json"
    deadline = time.monotonic() + timeout
    while not path.exists():
        assert time.monotonic() < deadline, f"worker {pid} wrote no result"
        time.sleep(0.05)
    time.sleep(0.05)  # written in one call; let it land
    result: dict[str, object] = json.loads(path.read_text())
    register_log(path, label=f"kill-test worker {pid} result")
    return result


def _where_it_died(
    intent: RefreshIntent, killed_at: dict[int, float], outdir: Path, tally: Tally
) -> None:
    """Whether a worker lost in flight was killed before the grant's answer reached it (the
    service had the request: nothing the client can do) or after (ours: a problem)."""
    assert intent.pid is not None and intent.at is not None
    began, killed = intent.at.timestamp(), killed_at.get(intent.pid)
    if killed is None:
        tally.problems.append(
            f"trial {tally.trials}: in-flight intent of pid {intent.pid}, not killed"
        )
        return
    path = outdir / f"{intent.pid}.answers"
    stamps = [float(x) for x in path.read_text().split()] if path.exists() else []
    answered = [t for t in stamps if began <= t <= killed]
    tally.in_flight_ms.append(round((killed - began) * 1000, 1))
    if answered:
        late = (killed - answered[0]) * 1000
        tally.after_answer_ms.append(round(late, 2))
        if late > ANSWER_TO_JOURNAL_MS:
            tally.problems.append(
                f"trial {tally.trials}: pid {intent.pid} was killed {late:.1f} ms after the "
                "grant's answer reached it, and the journal still did not have the token set"
            )


def _run_trial(
    zygote: Zygote,
    name: str,
    admin: SandboxAdmin,
    biller_id: str,
    journal: RecoveryDirectory,
    outdir: Path,
    rng: random.Random,
    tally: Tally,
    *,
    target_gap: bool,
) -> bool:
    """One trial; False when the credential was lost in flight (the caller logs in again)."""
    tally.trials += 1
    started = time.monotonic()
    pids = [zygote.spawn(name, TRIAL_SECONDS + 4, GAP_SECONDS, outdir) for _ in range(WORKERS)]
    kill_at = {pid: started + rng.uniform(0.2, TRIAL_SECONDS) for pid in pids}
    if target_gap:  # random kills wait until one worker has been killed inside the gap
        kill_at = {pid: float("inf") for pid in pids}
    give_up = started + TRIAL_SECONDS + 1.5
    alive = set(pids)
    killed_at: dict[int, float] = {}
    while alive:
        now = time.monotonic()
        if target_gap:
            in_gap = [int(p.stem) for p in outdir.glob("*.gap") if int(p.stem) in alive]
            if in_gap or now >= give_up:
                if in_gap:
                    os.kill(in_gap[0], signal.SIGKILL)
                    killed_at[in_gap[0]] = time.time()
                    alive.discard(in_gap[0])
                    tally.kills += 1
                    tally.gap_kills += 1
                kill_at = {pid: now + rng.uniform(0.0, 1.5) for pid in alive}
                target_gap = False
                continue
        for pid in [p for p in alive if kill_at[p] <= now]:
            os.kill(pid, signal.SIGKILL)
            killed_at[pid] = time.time()
            alive.discard(pid)
            tally.kills += 1
        time.sleep(0.005)
    zygote.reap()
    for marker in outdir.glob("*.gap"):
        marker.unlink()

    stored = BillerCredentials.load_named(name).read()
    granted = refresh_grants(admin, biller_id)
    state = journal.state(name)
    ahead = granted - stored.rotation
    if ahead == 1 and state.tokens is not None and state.tokens.rotation == granted:
        tally.pending_at_trial_end += 1  # killed between the grant and the save
    elif ahead == 1 and state.intent is not None and state.intent.from_rotation == stored.rotation:
        tally.in_flight += 1
        _where_it_died(state.intent, killed_at, outdir, tally)
    elif ahead != 0:
        tally.problems.append(
            f"trial {tally.trials}: {granted} grants, block at {stored.rotation}, journal {state}"
        )

    for stamps in outdir.glob("*.answers"):
        stamps.unlink()

    # The next worker, with nobody to help it.
    pid = zygote.spawn(name, 2.5, 0.0, outdir)
    result = _wait_for_results(outdir, pid, 60)
    zygote.reap()
    final = BillerCredentials.load_named(name).read()
    granted = refresh_grants(admin, biller_id)
    tally.rotations = final.rotation
    if ahead == 1 and state.tokens is None:  # lost in flight: the next worker must say so
        errors = " ".join(map(str, result["errors"]))  # type: ignore[call-overload]
        if "never finished" not in errors:
            tally.problems.append(f"trial {tally.trials}: in-flight loss not named: {errors}")
        return False
    errors = [str(e) for e in result["errors"]]  # type: ignore[attr-defined]
    # A 401 on an access token that ran out on its way to the service (2-second tokens on a
    # loaded machine) is followed by one refresh and one retry; it is no lost credential. Any
    # other error, or a worker that did not end working, is.
    tally.late_tokens += sum(1 for e in errors if e.startswith("Unauthorized"))
    fatal = [e for e in errors if not e.startswith("Unauthorized")]
    if fatal or not result["ended_ok"]:
        tally.problems.append(f"trial {tally.trials}: the next worker failed: {errors}")
    if granted != final.rotation:
        tally.problems.append(f"trial {tally.trials}: {granted} grants, block at {final.rotation}")
    if not journal.state(name).empty:
        tally.problems.append(f"trial {tally.trials}: journal not emptied: {journal.state(name)}")
    return True


@pytest.fixture
def zygote(prefect_api: str, billops_home: Path) -> Iterator[Zygote]:
    forking = Zygote(subprocess_env(BILLOPS_HOME=str(billops_home), PYTHONPATH=str(ROOT)))
    yield forking
    forking.close()


@pytest.mark.parametrize(
    "trials",
    [
        pytest.param(3, id="ci"),  # about 9 s a trial: the default suite stays near 30 s
        pytest.param(100, id="100", marks=[pytest.mark.slow, pytest.mark.timeout(3600)]),
    ],
)
def test_no_single_kill_loses_the_refresh_token(
    zygote: Zygote,
    short_token_sandbox_process: SandboxAdmin,
    billops_home: Path,
    tmp_path: Path,
    trials: int,
) -> None:
    short_admin = short_token_sandbox_process
    rng = random.Random(int(os.environ.get("BILLOPS_KILL_SEED", "20261124")))
    journal = RecoveryDirectory(billops_home / "recovery")
    outdir = tmp_path / "workers"
    outdir.mkdir()
    tally = Tally()
    name, tokens = "", None
    billers: dict[str, bool] = {}  # biller id -> lost in flight
    for trial in range(trials):
        if tokens is None:
            name = unique_name("kill")
            _, tokens = save_connected_block(short_admin, name, with_access_token=False)
            billers[tokens.biller_id] = False
        kept = _run_trial(
            zygote,
            name,
            short_admin,
            tokens.biller_id,
            journal,
            outdir,
            rng,
            tally,
            target_gap=trial % 2 == 0,
        )
        register_block_secrets(BillerCredentials.load_named(name))
        _register_worker_secrets(outdir)
        if not kept:
            billers[tokens.biller_id] = True
            tokens = None
    # Every record was settled once the block held it (checked after each trial), so no token
    # is left anywhere under BILLOPS_HOME: not in the journal, the lock files, nor elsewhere.
    register_tree(billops_home, label="BILLOPS_HOME")
    print(f"kill test: {tally}")
    # A credential never lost in flight never met invalid_grant: no token was ever replayed.
    assert {b: invalid_grants(short_admin, b) for b, lost in billers.items() if not lost} == {
        b: 0 for b, lost in billers.items() if not lost
    }
    assert tally.problems == []
    # Each gap kill left a granted token set only in the journal; grants equal rotations after
    # every trial (the problems above), so each was adopted, by a live worker or the next one.
    assert tally.gap_kills >= max(1, int(0.8 * (trials // 2)))
    assert tally.kills >= trials * WORKERS
