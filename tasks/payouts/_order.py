"""Sorting a frame that is usually in order already: payouts come from the ledger by arrival
date and reference, a report's payouts in its lines' order, credits by booking date. A stable
sort of rows already in order changes nothing (pandas even keeps the ``RangeIndex``), so the
rows are compared once in Python (a few hundred) and the sort is done only when one is out of
order: a multi-key ``sort_values`` of Arrow columns costs more than the check."""

from __future__ import annotations

from collections.abc import Sequence

import pandas as pd


def sort_stable(frame: pd.DataFrame, keys: Sequence[str]) -> pd.DataFrame:
    """``frame.sort_values(keys, kind="stable")``, without sorting rows already in order."""
    if in_order(frame, keys):
        return frame
    return frame.sort_values(list(keys), kind="stable")


def in_order(frame: pd.DataFrame, keys: Sequence[str]) -> bool:
    """Whether ``frame``'s rows are in ascending order of ``keys`` (False when a key is missing
    anywhere, or its values do not compare: the sort decides those)."""
    if any(frame[key].isna().any() for key in keys):
        return False
    rows = list(zip(*(frame[key].tolist() for key in keys), strict=True))
    try:
        return all(earlier <= later for earlier, later in zip(rows, rows[1:], strict=False))
    except TypeError:
        return False
