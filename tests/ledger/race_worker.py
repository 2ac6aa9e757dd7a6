"""What one racing worker process does (importable, so ``spawn`` can start it)."""

from __future__ import annotations

from typing import Any

from ledger import Ledger


def race(url: str, worker: str, keys: list[str], barrier: Any, results: Any) -> None:
    """Wait for every worker, then record the intent of and try to claim each key in turn."""
    with Ledger(url, create=False) as ledger:
        barrier.wait(timeout=60)
        outcome = []
        for key in keys:
            created = ledger.record_intent(
                key=key, kind="bulk_import", biller="racer", request_digest="same"
            ).created
            won = ledger.claim(key, worker=worker) is not None
            outcome.append((key, created, won))
    results.put((worker, outcome))
