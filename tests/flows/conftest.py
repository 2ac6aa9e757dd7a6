"""Fixtures for the flow tests: a biller on a sandbox, its credential block, a ledger.

Flows run in-process against the session's Prefect harness (``prefect`` fixture). Each test gets a
biller of its own (``tests/support/import_billers.py``) and a ledger of its own, so tests never
see each other's payment requests or operations.
"""

from tests.support.import_billers import empty_home, import_biller, ledger_home

__all__ = ["empty_home", "import_biller", "ledger_home"]
