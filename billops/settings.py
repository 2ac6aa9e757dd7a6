"""Settings of billops (``BILLOPS_*``), defined in ``ledger.settings`` for the lower layers."""

from __future__ import annotations

from ledger.settings import BillopsSettings

__all__ = ["BillopsSettings"]
