"""The normalised statement: every usable line of a bank file in one Arrow table.

Columns (one row per statement line, in file order):

- ``line``: the physical, 1-based line number a person sees in the file;
- ``account``: the account where the file says (sort code and number, name), else empty;
- ``date``: booking date (``date32``);
- ``amount``: signed whole pennies (``int64``; credits positive) — exact; see ``_kernels``;
- ``payer``, ``reference``: payer or payee name and the reference (their own columns, the bank's
  fixed slots of the description, or else the description itself);
- ``text``: the bank's description column where the file has one, else empty;
- ``type``: the bank's transaction type, ``txn_id``: its transaction id (empty where none);
- ``balance``: the running balance after the line in pennies (null where not given).

Text columns are dictionary-encoded (:data:`TEXT`): see ``_normalise``.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from decimal import Decimal

import pyarrow as pa

from tasks.bank_payments._errors import BadLine
from tasks.bank_payments._profiles import Profile

TEXT = pa.dictionary(pa.int32(), pa.string())
SCHEMA = pa.schema(
    [
        ("line", pa.int64()),
        ("account", TEXT),
        ("date", pa.date32()),
        ("amount", pa.int64()),
        ("payer", TEXT),
        ("reference", TEXT),
        ("text", TEXT),
        ("type", TEXT),
        ("txn_id", TEXT),
        ("balance", pa.int64()),
    ]
)
PENNY = Decimal("0.01")


def pounds(pennies: int) -> Decimal:
    """Whole pennies as an exact ``Decimal`` of pounds with two places."""
    return (Decimal(int(pennies)) * PENNY).quantize(PENNY)


@dataclass(frozen=True)
class SkippedLine:
    """A line that is not a transaction of the account (a balance row, a pending card payment)."""

    line: int
    reason: str


@dataclass
class Statement:
    """A bank file read: its lines, what was left out and why, and how it was read."""

    file: str
    sha256: str
    profile: Profile
    detection: str
    encoding: str
    lines: pa.Table
    bad_lines: list[BadLine] = field(default_factory=list)
    skipped: list[SkippedLine] = field(default_factory=list)
    balance_issues: list[BadLine] = field(default_factory=list)

    @property
    def count(self) -> int:
        """How many usable lines."""
        return int(self.lines.num_rows)
