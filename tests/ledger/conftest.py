"""Fixtures of the ledger suite (``tests/support/ledger_db.py``)."""

from tests.support.ledger_db import clock, ledger, ledger_url

__all__ = ["clock", "ledger", "ledger_url"]
