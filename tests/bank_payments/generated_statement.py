"""Generated bank statements like a platform biller's, for ``bench/bench_bank.py`` and the tests
that pin what it measures (the same file at any size).

The statement is Starling's layout. Lines are drawn like a platform biller's account: customers
paying an open invoice (each open item once: a third of the lines, or fewer when there are fewer
open items; the number typed as people do: ``inv 42``, ``INV-0042``, ``Invoice 42``, or, one in
ten, nothing), a sixth of the lines customer credits with no usable reference (the fuzzy pass's
work), 2 % payouts, the rest spending. Payers are written as banks show them: upper case, cut at
18 characters, ``LIMITED`` or ``LTD``, now and then a letter dropped.

:func:`generate_varied` appends the cases the bench's statement lacks (payment requests with the
biller's own references, a line paying two invoices, partial payments and overpayments, two lines
paying one invoice, a number typed for another customer's invoice, refunds and interest), so a
test over it pins every path of matching.
"""

from __future__ import annotations

import random
from datetime import date, timedelta
from pathlib import Path

from tasks.bank_payments._owed import OpenItem

HEADER = "Date,Counter Party,Reference,Type,Amount (GBP),Balance (GBP),Spending Category,Notes\n"
WORDS = (
    "NORTH", "RIVER", "OAK", "STONE", "BRIGHT", "HARBOUR", "MILL", "CROWN", "VALE", "ASH",
    "KINGS", "WEST", "GREEN", "SUMMIT", "BLUE", "FIELD", "CASTLE", "LAKE", "HILL", "BRIDGE",
)  # fmt: skip
TRADES = ("BAKERY", "DENTAL", "MOTORS", "PLUMBING", "CATERING", "CONSULTING", "ELECTRICAL")
SPENDING = ("TESCO STORES", "SHELL LEEDS", "AMAZON MKTPLACE", "BRITISH GAS", "XERO UK", "BT GROUP")


def customer_names(count: int, rng: random.Random) -> list[str]:
    """Distinct company names (``Northvale Bakery Ltd``) of the kind a biller's customers have."""
    names: set[str] = set()
    while len(names) < count:
        first, second = rng.choice(WORDS), rng.choice(WORDS)
        names.add(f"{first.title()}{second.lower()} {rng.choice(TRADES).title()} {len(names)} Ltd")
    return sorted(names)


def as_bank_shows(name: str, rng: random.Random) -> str:
    """A customer's name as the payer field of a bank line: upper case, cut at 18 characters,
    sometimes ``LIMITED``, sometimes a letter dropped."""
    text = name.upper()
    roll = rng.random()
    if roll < 0.2:
        text = text.replace(" LTD", " LIMITED")
    elif roll < 0.3:
        cut = rng.randrange(1, len(text) - 1)
        text = text[:cut] + text[cut + 1 :]
    return text[:18].strip()


def typed(number: str, rng: random.Random) -> str:
    digits = number.split("-")[1]
    return rng.choice(
        (number, number.lower(), f"inv {int(digits)}", f"Invoice {digits}", f"INV{digits}")
    )


def generate(path: Path, lines: int, items: int) -> list[OpenItem]:
    """Write the statement; return the open items it is matched against."""
    rng = random.Random(7)
    customers = customer_names(max(items // 5, 1), rng)
    owed = [
        OpenItem(
            "invoice",
            f"id{i}",
            f"INV-{i:06d}",
            "",
            customers[i % len(customers)],
            rng.randint(1_000, 500_000),
            date(2026, 10, 1),
            "UNPAID",
        )
        for i in range(items)
    ]
    start = date(2026, 1, 1)
    paid = iter(rng.sample(owed, len(owed)))
    paying = min(1 / 3, items / max(lines, 1))
    unreferenced, payouts = paying + 1 / 6, paying + 1 / 6 + 0.02
    with path.open("w", encoding="utf-8") as out:
        out.write(HEADER)
        balance = 0
        for n in range(lines):
            day = (start + timedelta(days=n * 300 // lines)).strftime("%d/%m/%Y")
            roll = rng.random()
            item = next(paid, None) if roll < paying else None
            if item is not None:
                ref = typed(item.number, rng) if rng.random() < 0.9 else ""
                amount, payer, kind = item.due, as_bank_shows(item.customer, rng), "FASTER PAYMENT"
            elif paying <= roll < unreferenced:
                amount = rng.randint(500, 90_000)
                payer, ref, kind = as_bank_shows(rng.choice(customers), rng), "", "FASTER PAYMENT"
            elif paying <= roll < payouts:
                amount, payer, ref, kind = (
                    rng.randint(10_000, 900_000),
                    "ADFIN",
                    "ADFIN-PO-7QK2",
                    "BACS",
                )
            else:
                amount, payer = -rng.randint(100, 20_000), rng.choice(SPENDING)
                ref, kind = f"CARD {rng.randint(1000, 9999)}", "CHIP AND PIN"
            balance += amount
            out.write(f"{day},{payer},{ref},{kind},{amount / 100:.2f},{balance / 100:.2f},,\n")
    return owed


def generate_varied(path: Path, lines: int, items: int) -> list[OpenItem]:
    """:func:`generate`'s statement with every other kind of line matching meets appended (see
    the module docstring), its balance running on; the open items include payment requests."""
    owed = generate(path, lines, items)
    rng = random.Random(11)
    customers = sorted({i.customer for i in owed})
    requests = [
        OpenItem(
            "payment_request",
            f"pr{i}",
            f"PR-{i}",
            f"{rng.choice(WORDS)}-J{i}",
            rng.choice(customers),
            rng.randint(1_000, 90_000),
            None,
            "UNPAID",
        )
        for i in range(max(items // 10, 4))
    ]
    extra = [
        OpenItem(
            "invoice",
            f"x{i}",
            f"INV-{items + i:06d}",
            "",
            rng.choice(customers),
            rng.randint(2_000, 400_000),
            date(2026, 9, 1) + timedelta(days=rng.randrange(60)),
            "OVERDUE",
        )
        for i in range(max(items // 5, 8))
    ]
    rows: list[tuple[str, str, str, int]] = []
    for request in requests:
        roll = rng.random()
        payer = as_bank_shows(request.customer, rng)
        if roll < 0.4:  # by the biller's own reference, as words
            rows.append((payer, request.reference.replace("-", " ").lower(), "FPS", request.due))
        elif roll < 0.6:  # by number
            rows.append((payer, f"pr {request.number.split('-')[1]}", "FPS", request.due))
        elif roll < 0.75:  # a part of a payment request: it waits
            rows.append((payer, request.number, "FPS", request.due // 2))
    pairs = iter(rng.sample(extra, len(extra)))
    for first, second in zip(pairs, pairs, strict=False):
        payer = as_bank_shows(first.customer, rng)
        both = f"{first.number} {second.number.lower()}"
        roll = rng.random()
        if roll < 0.25:  # one line, two invoices, paid exactly
            rows.append((payer, both, "FPS", first.due + second.due))
        elif roll < 0.4:  # two invoices, short
            rows.append((payer, both, "FPS", first.due + second.due // 3))
        elif roll < 0.55:  # one invoice, more than due
            rows.append((payer, typed(first.number, rng), "FPS", first.due + 1_234))
        elif roll < 0.7:  # two lines paying one invoice
            half = first.due // 2
            rows.append((payer, typed(first.number, rng), "FPS", half))
            rows.append((payer, first.number, "FPS", first.due - half))
        elif roll < 0.8:  # someone else's payer naming the invoice for another amount
            rows.append(("ZED HOLDINGS", first.number, "FPS", first.due + 777))
        elif roll < 0.9:  # a number cut short by the bank's 18 characters
            rows.append((payer, f"PAYMENT FOR INVOICE {first.number}"[:18], "FPS", first.due))
        else:
            rows.append((payer, "REFUND " + first.number, "FPS", first.due))
    rows.append(("HMRC", "VAT REPAYMENT", "BACS", 45_000))
    rows.append(("STARLING", "GROSS INTEREST", "INT", 12))
    rng.shuffle(rows)
    with path.open("a", encoding="utf-8") as out:
        for payer, reference, kind, amount in rows:
            out.write(f"31/10/2026,{payer},{reference},{kind},{amount / 100:.2f},,,\n")
    return owed + requests + extra
