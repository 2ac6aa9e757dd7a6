"""Bank statements at a platform's scale: a generated statement against open items.

Prints, for one file in one run: ``pandas.read_csv`` of the file (the floor), billops' read +
normalise + classify + dedup + exact match, the fuzzy suggestion pass on top, peak RSS, and
beangulp's CSV importer extracting the same file (the peer). Ratios are against the floor
measured here; the machine is shared, so each timing is the best of ``--repeat`` runs taken in
turn with the floor's (a busy neighbour slows both alike).

``python bench/bench_bank.py [LINES] [ITEMS] [--repeat N] [--no-peer]`` (default 1,000,000 lines
against 100,000 open items, 3 repeats).

The statement is Starling's layout. Lines are drawn like a platform biller's account: customers
paying an open invoice (each open item once: a third of the lines, or fewer when there are fewer
open items; the number typed as people do: ``inv 42``, ``INV-0042``, ``Invoice 42``, or, one in
ten, nothing), a sixth of the lines customer credits with no usable reference (the fuzzy pass's
work), 2 % payouts, the rest spending. Payers are written as banks show them: upper case, cut at
18 characters, ``LIMITED`` or ``LTD``, now and then a letter dropped. Every tenth line was
"already recorded" from an earlier file (the dedup step's work).
"""

from __future__ import annotations

import argparse
import random
import resource
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import date, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from tasks.bank_payments import available_profiles, read_statement
from tasks.bank_payments._classify import classify
from tasks.bank_payments._keys import line_keys
from tasks.bank_payments._match import CODE, DUPLICATE, match_lines
from tasks.bank_payments._owed import OpenItem, items_frame
from tasks.bank_payments._plan import duplicates
from tasks.bank_payments._suggest import suggest

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


@dataclass
class Timing:
    """A step's best wall-clock and best CPU seconds over the rounds, and its last result."""

    wall: float = float("inf")
    cpu: float = float("inf")
    result: Any = None


def best_of(repeat: int, *steps: Callable[[], Any]) -> list[Timing]:
    """Each step's best times over ``repeat`` rounds (the steps run in turn in each round). CPU
    seconds (this process's, all threads) are printed beside wall-clock ones: on a shared
    machine a neighbour's load stretches wall time far more than CPU time."""
    timings = [Timing() for _ in steps]
    for _ in range(repeat):
        for timing, step in zip(timings, steps, strict=True):
            wall, cpu = time.perf_counter(), time.process_time()
            timing.result = step()
            timing.wall = min(timing.wall, time.perf_counter() - wall)
            timing.cpu = min(timing.cpu, time.process_time() - cpu)
    return timings


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("lines", nargs="?", type=int, default=1_000_000)
    parser.add_argument("items", nargs="?", type=int, default=100_000)
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--no-peer", action="store_true", help="skip beangulp")
    args = parser.parse_args()
    folder = Path(tempfile.mkdtemp(prefix="bench-bank-"))
    path = folder / "statement.csv"
    items = items_frame(generate(path, args.lines, args.items))
    available_profiles()  # the profile files are read once per process, not per statement
    today = date(2026, 12, 31)
    earlier = read_statement(path, today=today)
    done = line_keys(earlier.lines).to_pylist()[::10]  # "recorded from an earlier file"
    del earlier

    def ours() -> Any:
        statement = read_statement(path, today=today)
        classes = classify(statement.lines)
        keys = line_keys(statement.lines)
        matches = match_lines(statement.lines, classes, items, skip=duplicates(keys, done))
        return statement, matches

    floor, mine = best_of(args.repeat, lambda: pd.read_csv(path), ours)
    statement, matches = mine.result
    (fuzzy,) = best_of(args.repeat, lambda: suggest(statement.lines, _fresh(matches), items))
    suggestions = fuzzy.result
    rss = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    recorded = int(matches.allocations["line"].nunique())
    duplicate = int((matches.outcome == CODE[DUPLICATE]).sum())
    print(
        f"{args.lines:,} lines, {args.items:,} open items: {recorded:,} lines matched exactly, "
        f"{duplicate:,} already recorded, {suggestions['line'].nunique():,} with suggestions"
    )
    print(
        f"pandas.read_csv (floor): {floor.wall:.2f} s wall, {floor.cpu:.2f} s CPU "
        f"(best of {args.repeat})"
    )
    print(
        f"read + normalise + classify + dedup + exact match: {mine.wall:.2f} s = "
        f"{mine.wall / floor.wall:.2f}x the floor; CPU {mine.cpu:.2f} s = "
        f"{mine.cpu / floor.cpu:.2f}x (goal <= 3x)"
    )
    print(
        f"fuzzy pass on top: {fuzzy.wall:.2f} s = {fuzzy.wall / floor.wall:.2f}x the floor; "
        f"CPU {fuzzy.cpu:.2f} s = {fuzzy.cpu / floor.cpu:.2f}x (goal <= 1x)"
    )
    print(f"peak RSS: {rss:,.0f} MB (goal <= 1024)")
    if not args.no_peer:
        peer(path, mine.wall)
    shutil.rmtree(folder, ignore_errors=True)


def _fresh(matches: Any) -> Any:
    """The matches as exact matching left them (suggest marks lines; each round starts over)."""
    from dataclasses import replace

    return replace(matches, outcome=matches.outcome.copy())


def peer(path: Path, ours: float) -> None:
    try:
        from beangulp.importers.csv import Col, CSVImporter
    except ImportError:
        print("beangulp not installed: peer skipped")
        return
    importer = CSVImporter(
        {Col.DATE: "Date", Col.NARRATION: "Counter Party", Col.AMOUNT: "Amount (GBP)"},
        "Assets:Bank",
        "GBP",
        dateutil_kwds={"dayfirst": True},
    )
    started = time.perf_counter()
    entries = importer.extract(str(path), [])
    theirs = time.perf_counter() - started
    print(
        f"beangulp CSVImporter.extract: {theirs:.2f} s ({len(entries):,} entries); billops' read "
        f"+ match is {theirs / ours:.1f}x faster (goal >= 20x)"
    )


if __name__ == "__main__":
    main()
