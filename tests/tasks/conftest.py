"""Fixtures of the tasks tests (files and customers from ``tests/support/finance_files.py``)."""

from tests.support.finance_files import customers

__all__ = ["customers"]
