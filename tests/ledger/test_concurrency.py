"""Workers racing for the same operations: exactly one records it first, exactly one sends it.

Threads share one ``Ledger`` (one engine, as Prefect's thread pool does); processes each open
their own, as separate workers on one machine or several do. Both run on SQLite (a file: WAL and
the busy timeout make writers queue) and on PostgreSQL (row locks and unique keys decide).
"""

from __future__ import annotations

import multiprocessing
import threading
from collections import Counter
from concurrent.futures import ThreadPoolExecutor

from ledger import Ledger, OperationState
from tests.ledger.race_worker import race

KEYS = [f"bulk_import:racer:{n:03d}" for n in range(15)]


def test_threads_racing_for_one_key_exactly_one_claims(ledger: Ledger) -> None:
    ledger.record_intent(key="hot", kind="bulk_import", biller="b", request_digest="d")
    workers = 8
    barrier = threading.Barrier(workers)

    def claim(n: int) -> bool:
        barrier.wait(timeout=30)
        return ledger.claim("hot", worker=f"thread-{n}") is not None

    with ThreadPoolExecutor(workers) as pool:
        wins = list(pool.map(claim, range(workers)))
    assert wins.count(True) == 1
    op = ledger.get("hot")
    assert op is not None and op.state == OperationState.SENT and op.attempts == 1
    assert op.claimed_by == f"thread-{wins.index(True)}"


def test_threads_recording_the_same_intent_create_it_once(ledger: Ledger) -> None:
    workers = 6
    barrier = threading.Barrier(workers)

    def record(n: int) -> bool:
        barrier.wait(timeout=30)
        return ledger.record_intent(
            key="same", kind="bulk_import", biller="b", request_digest="d", run_id=f"run-{n}"
        ).created

    with ThreadPoolExecutor(workers) as pool:
        created = list(pool.map(record, range(workers)))
    assert created.count(True) == 1
    assert len(ledger.unsettled()) == 1


def test_processes_racing_over_the_same_keys_split_them(ledger_url: str) -> None:
    Ledger(ledger_url).close()  # the schema first, as `billops setup` does
    context = multiprocessing.get_context("spawn")
    workers = 3
    barrier = context.Barrier(workers)
    results = context.Queue()
    processes = [
        context.Process(target=race, args=(ledger_url, f"proc-{n}", KEYS, barrier, results))
        for n in range(workers)
    ]
    for process in processes:
        process.start()
    outcomes = dict(results.get(timeout=120) for _ in processes)
    for process in processes:
        process.join(timeout=60)
        assert process.exitcode == 0
    created = Counter(key for rows in outcomes.values() for key, made, _ in rows if made)
    claimed = Counter(key for rows in outcomes.values() for key, _, won in rows if won)
    assert created == Counter(KEYS), "each intent recorded by exactly one process"
    assert claimed == Counter(KEYS), "each operation claimed by exactly one process"
    with Ledger(ledger_url, create=False) as ledger:
        ops = ledger.unsettled(biller="racer")
    assert [op.attempts for op in ops] == [1] * len(KEYS)
    winners = {key: worker for worker, rows in outcomes.items() for key, _, won in rows if won}
    assert {op.key: op.claimed_by for op in ops} == winners
