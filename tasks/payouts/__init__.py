"""Reconciling payouts: every payout tied to its payments, its bank credit and the service's
records, with what is in transit and why anything differs (``docs/service.md`` §6 Payouts).

Pure functions here; the ``@task`` wrappers live in ``steps.py``, how a run ends in
``outcome.py``, a biller's choices in ``settings.py``, the reports in ``report.py``, and the flow
in ``flows/payouts.py``. The pieces, in the order a run uses them:

- ``_profiles`` / ``_report``: the payout report through its layout (YAML), refused whole with
  file, line and column when a cell is unusable; :func:`is_payout_report` is the inbox's test;
  ``_payout_lines``: the checks across a payout's lines and the payment ids on several lines;
- ``_credits``: the payment service's credits of a bank statement (read and classified by the
  bank-payments job);
- ``_scope``: the period and what the ledger knows around it; ``_service``: the invoices and
  payment requests the items name, fetched in pages;
- ``_match`` (check 2), ``_check_items`` (check 3), ``_reconcile`` (check 1 and the states);
- ``_balance``: money in transit on any day, per day and per month; ``_journal``: the
  clearing-account journal; ``_chart``: the picture;
- helpers that keep a year of items off per-cell Python and repeated hashing: ``_runs`` (items
  found by their payout's run), ``_text`` (text columns through Arrow), ``_records`` (rows read
  by whole columns), ``_order`` (sorting skipped for rows already in order).
"""

from tasks.payouts._balance import Balance, in_transit_on
from tasks.payouts._items import as_date
from tasks.payouts._match import (
    IN_TRANSIT,
    ITEM_MISMATCH,
    MATCHED,
    MISSING,
    STATES,
    SUGGESTED,
    UNEXPECTED,
    WITH_DIFFERENCE,
)
from tasks.payouts._profiles import (
    ReportProfile,
    ReportProfileError,
    available_report_profiles,
    find_report_profile,
    load_report_profile,
)
from tasks.payouts._reconcile import Reconciliation, Scope, attention, counts, reconcile
from tasks.payouts._report import (
    PayoutReport,
    PayoutReportRefused,
    is_payout_report,
    read_payout_report,
)

__all__ = [
    "IN_TRANSIT",
    "ITEM_MISMATCH",
    "MATCHED",
    "MISSING",
    "STATES",
    "SUGGESTED",
    "UNEXPECTED",
    "WITH_DIFFERENCE",
    "Balance",
    "PayoutReport",
    "PayoutReportRefused",
    "Reconciliation",
    "ReportProfile",
    "ReportProfileError",
    "Scope",
    "as_date",
    "attention",
    "available_report_profiles",
    "counts",
    "find_report_profile",
    "in_transit_on",
    "is_payout_report",
    "load_report_profile",
    "read_payout_report",
    "reconcile",
]
