"""Which credential block serves the biller an event names.

Events carry the service's biller id; jobs take a credential block's name. The ledger keeps the
pairs (``billops webhooks setup`` asks each biller block which biller it is). Lookups are served
from memory and reloaded from the ledger at most every ``refresh_seconds`` when an id is missing,
so a biller connected after the receiver started is found without a restart.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Callable, Iterable

from ledger import Ledger
from tasks.common.session import biller_session

_log = logging.getLogger(__name__)


class BillerDirectory:
    """Biller id -> credential block name, cached."""

    def __init__(
        self,
        ledger: Ledger,
        refresh_seconds: float = 30.0,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self._ledger = ledger
        self._refresh = refresh_seconds
        self._clock = clock
        self._known: dict[str, str] = {}
        self._loaded_at: float | None = None
        self._guard = threading.Lock()

    def block_for(self, biller_id: str) -> str | None:
        """The block serving ``biller_id``, or None (the event is then emitted without it)."""
        with self._guard:
            block = self._known.get(biller_id)
            now = self._clock()
            stale = self._loaded_at is None or now - self._loaded_at >= self._refresh
            if block is None and stale:
                self._known = self._ledger.biller_blocks()
                self._loaded_at = now
                block = self._known.get(biller_id)
        return block


def map_billers(ledger: Ledger, blocks: Iterable[str]) -> dict[str, str]:
    """Ask each biller credential block which biller it opens and remember the pairs; returns
    block -> biller id (a block that cannot be opened is logged and left out)."""
    mapped: dict[str, str] = {}
    for block in blocks:
        try:
            with biller_session(block, ledger) as session:
                ledger.set_biller_block(session.biller_id, block)
                mapped[block] = session.biller_id
        except Exception as exc:  # one dead credential must not stop the others
            _log.warning("biller block %s could not be opened: %s", block, type(exc).__name__)
    return mapped
