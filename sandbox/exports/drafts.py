"""A statement line before its position is known, and the seeded draws every line comes from.

Every draw is ``random.Random`` seeded from a SHA-256 of its parts (biller id, date or document
number), so the same stored data gives byte-identical exports whatever the day they run.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from datetime import date, time
from decimal import Decimal

from sandbox.exports.layouts import Txn

CENT = Decimal("0.01")


def seeded_random(*parts: object) -> random.Random:
    seed = hashlib.sha256("|".join(str(part) for part in parts).encode()).digest()
    return random.Random(int.from_bytes(seed[:16]))


def pounds_of(pennies: int) -> Decimal:
    return (Decimal(pennies) / 100).quantize(CENT)


@dataclass(frozen=True)
class Draft:
    kind: str
    counterparty: str
    reference: str
    amount: Decimal
    category: str
    at: time

    def line(self, biller_id: str, day: date, seq: int, balance: Decimal) -> Txn:
        digest = hashlib.sha256(f"{biller_id}|{day}|{seq}".encode()).hexdigest()
        return Txn(
            f"tx_{digest[:22]}",
            day,
            self.at,
            self.kind,
            self.counterparty,
            self.reference,
            self.amount,
            balance,
            self.category,
        )
