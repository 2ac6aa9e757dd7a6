"""Every bad input the jobs' own tests refuse, as files dropped into one biller's inbox folder
(the hostile-input sweep, ``tests/inbox/test_hostile_sweep.py``).

The cases are the jobs' tests' own: bank statements (``tests/bank_payments/test_hostile_files``),
payout reports (``tests/payouts/test_report_files``), payment-request files (the mistakes of
``tests/tasks/test_validation`` and ``test_reading``, with the biller's real customer names so
only the mistake is wrong). Each :class:`Hostile` says which words its report must carry. An
empty (0-byte) file is left out: the inbox never takes one (it may still be being written,
``tasks/inbox/layout.py``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path

from tests.bank_payments.test_hostile_files import CASES as BANK_CASES
from tests.payouts.test_report_files import BROKEN as BROKEN_PAYOUTS
from tests.payouts.test_report_files import write as write_payouts
from tests.support.finance_files import write_csv
from tests.support.import_billers import ImportBiller


@dataclass(frozen=True)
class Hostile:
    path: Path
    job: str  # "bank", "payouts", "payment-requests"
    words: tuple[str, ...]  # what its report must say (besides the file's name)


def _slug(text: str) -> str:
    return "".join(c if c.isalnum() else "-" for c in text.lower()).strip("-")[:40]


def bank_files(folder: Path) -> list[Hostile]:
    """Every refused statement of the bank job's tests, in ``bank/``."""
    place = folder / "bank"
    place.mkdir(parents=True, exist_ok=True)
    found = []
    for name, data, _line, words in BANK_CASES:
        raw = data.encode("utf-8") if isinstance(data, str) else data
        if not raw:
            continue
        path = place / f"statement-{_slug(name)}.csv"
        path.write_bytes(raw)
        found.append(Hostile(path, "bank", tuple(words)))
    return found


def payout_files(folder: Path) -> list[Hostile]:
    """Every broken payout report of the payouts job's tests, in ``payouts/``."""
    place = folder / "payouts"
    place.mkdir(parents=True, exist_ok=True)
    return [
        Hostile(write_payouts(place, rows, name=f"payouts-{n:02d}.csv"), "payouts", (reason,))
        for n, (rows, reason) in enumerate(BROKEN_PAYOUTS)
    ]


def payment_request_files(folder: Path, biller: ImportBiller) -> list[Hostile]:
    """Payment-request files each with one mistake of the import's tests, in
    ``payment-requests/`` (the inbox refuses a file with a bad row whole by default)."""
    place = folder / "payment-requests"
    place.mkdir(parents=True, exist_ok=True)
    name = biller.customers[0][1]
    later = (date.today() + timedelta(days=30)).strftime("%d/%m/%Y")
    past = (date.today() - timedelta(days=3)).strftime("%d/%m/%Y")
    header = ["Customer", "Amount", "Description", "Reference", "Pay by"]

    def row(
        amount: str = "10.00", pay_by: str = later, who: str = name, ref: str = "H-1"
    ) -> list[str]:
        return [who, amount, "Hostile", ref, pay_by]

    rows = {
        "negative amount": ([row("-3")], ("positive",)),
        "three decimals": ([row("1.234")], ("more than 2 decimal places",)),
        "no amount": ([row("")], ("amount is required",)),
        "amount in words": ([row("ten")], ("not a number",)),
        "pay by in the past": ([row(pay_by=past)], ("is in the past",)),
        "us date": ([row(pay_by="12/31/2026")], ("month-first US dates",)),
        "unknown customer": ([row(who="Nobody Of That Name Ltd")], ("Nobody Of That Name Ltd",)),
        "reference twice": ([row(ref="H-2"), row("11.00", ref="H-2")], ("duplicate reference",)),
        "too long": ([row(ref="r" * 256)], ("longer than 255 characters",)),
        "wider than header": ([[*row(), "extra"]], ("header has only",)),
    }
    found = [
        Hostile(
            write_csv(place / f"requests-{_slug(k)}.csv", v, header=header), "payment-requests", w
        )
        for k, (v, w) in rows.items()
    ]
    raw = {
        "binary": (bytes(range(256)) * 8, ()),
        "header only": (b"Customer,Amount,Description,Reference,Pay by\r\n", ()),
        "no amount column": (f"Customer,Description\r\n{name},x\r\n".encode(), ("Amount",)),
        "corrupt xlsx": (b"PK\x03\x04" + b"\x00" * 100, ()),
        "old xls": (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 504, ()),
        "broken quoting": (f'Customer,Amount\r\n"{name},10.00\r\n'.encode(), ()),
    }
    for key, (data, words) in raw.items():
        path = place / f"requests-{_slug(key)}.csv"
        path.write_bytes(data)
        found.append(Hostile(path, "payment-requests", words))
    return found
