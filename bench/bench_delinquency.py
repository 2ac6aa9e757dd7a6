"""The delinquency plan at a platform biller's scale: 50,000 customers, 500,000 open items.

Prints, in one run, against one SQLite ledger holding one stored snapshot:

- the floor: reading that snapshot back from the ledger into frames (the rows, as tuples, into
  ``pandas.DataFrame.from_records``) — what any plan must at least do;
- billops' plan: read the same snapshot as the job does, count failures over the policy's windows,
  evaluate the shipped policy for every customer (the vectorised figures and state machine, the
  reasons of everyone in a state), read the ledger's operations of those customers, and build
  every call;
- the ratio (goal ≤ 3×), the calls planned, and what storing the snapshot took (not in the
  ratio: it is the snapshot step's, once per run).

The machine is shared, so each timing is the best of ``--repeat`` runs taken in turn with the
floor's. ``python bench/bench_delinquency.py [CUSTOMERS] [ITEMS] [--repeat N]``.

Data: every customer has a mandate (1 in 200 cancelled); items are invoices and their payment
requests, half each, due over the next 30 days (a good payer's may be up to 3 days past due: the
debit is in flight); one customer in twenty is behind (debts 30–80 days overdue), and one in a
hundred has two failed collections observed. The previous run left a tenth of the behind
customers already paused (their hold and pause operations in the ledger), so the plan has
entries, holds kept and new debts to pause.
"""

from __future__ import annotations

import argparse
import random
import tempfile
import time
from collections.abc import Callable
from datetime import UTC, date, datetime, timedelta
from pathlib import Path
from typing import Any

import pandas as pd

from ledger import Ledger
from ledger.delinquency import Standing
from tasks.delinquency.plan import Action, operation_key
from tasks.delinquency.policy import load_policy
from tasks.delinquency.steps import make_plan
from tasks.delinquency.take import load_snapshot

AS_OF = date(2027, 6, 30)
BILLER = "bench-biller"


def generate(customers: int, items: int, rng: random.Random) -> tuple[list, list, list, set]:
    """Customer rows, item rows, failure rows, and the ids of the customers behind."""
    people = [
        {
            "customer_id": f"cust-{n:06d}",
            "external_id": f"EXT-{n:06d}",
            "name": f"Customer {n} Ltd",
            "tags": [],
            "mandate_id": f"mand-{n:06d}",
            "mandate_status": "CANCELLED" if n % 200 == 0 else "ACTIVE",
        }
        for n in range(customers)
    ]
    behind = {p["customer_id"] for p in people if rng.random() < 0.05}
    rows: list[dict[str, Any]] = []
    for n in range(items // 2):
        owner = people[rng.randrange(customers)]["customer_id"]
        late = owner in behind and rng.random() < 0.5
        due = AS_OF - timedelta(days=rng.randint(30, 80) if late else rng.randint(-30, 3))
        pence = rng.randint(500, 50_000)
        status = "OVERDUE" if due < AS_OF else "SCHEDULED"
        common = {
            "customer_id": owner,
            "due_on": due,
            "due_pence": pence,
            "auto_source": "NONE",
            "auto_override": "",
            "reason_code": "",
            "auto_paused": False,
        }
        rows.append(
            {
                **common,
                "kind": "invoice",
                "item_id": f"inv-{n:07d}",
                "number": f"INV-{n}",
                "status": status,
                "invoice_id": "",
                "collection_method": "",
            }
        )
        rows.append(
            {
                **common,
                "kind": "payment_request",
                "item_id": f"pr-{n:07d}",
                "number": f"PR-{n}",
                "status": "SCHEDULED",
                "invoice_id": f"inv-{n:07d}",
                "collection_method": "AUTO_COLLECT",
            }
        )
    failures = [
        {"customer_id": p["customer_id"], "payment_request_id": f"pr-f{n}-{k}",
         "observed_on": AS_OF - timedelta(days=5 + 10 * k), "evidence": "debit refused"}
        for n, p in enumerate(people) if n % 100 == 7 for k in range(2)
    ]  # fmt: skip
    return people, rows, failures, behind


def seed_previous_run(ledger: Ledger, behind: set[str], items: list[dict[str, Any]]) -> None:
    """A tenth of the behind customers were paused by an earlier run: standings and pauses."""
    held = sorted(behind)[: max(1, len(behind) // 10)]
    since = AS_OF - timedelta(days=10)
    period = f"h1-{since.isoformat()}"
    ledger.save_delinquency_standings(
        BILLER,
        [
            Standing(biller=BILLER, customer_id=c, name=c, state="paused", since=since,
                     hold_period=period, hold_count=1, mandate_at_entry=f"mand-{c[5:]}",
                     policy_name="default", policy_digest="x", run_id="previous")
            for c in held
        ],
    )  # fmt: skip
    held_set = set(held)
    for row in items:
        # Half of their debts already paused, the rest new debts to pause.
        odd = row["item_id"].endswith(("1", "3", "5", "7", "9"))
        if row["customer_id"] in held_set and odd and row["kind"] == "payment_request":
            key = (
                operation_key(BILLER, row["customer_id"], period, Action.PAUSE, row["item_id"])
                + f":mand-{row['customer_id'][5:]}"
            )
            ledger.record_intent(
                key=key, kind="delinquency.pause", biller=BILLER, request_digest="d"
            )
            ledger.mark_confirmed(key, remote_id=row["item_id"])
            row["auto_paused"], row["auto_override"] = True, "PAUSED"


def best(runs: int, *steps: Callable[[], Any]) -> list[float]:
    """The best time of each step over ``runs`` rounds, the steps taken in turn each round."""
    times = [float("inf")] * len(steps)
    for _ in range(runs):
        for index, step in enumerate(steps):
            started = time.perf_counter()
            step()
            times[index] = min(times[index], time.perf_counter() - started)
    return times


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("customers", nargs="?", type=int, default=50_000)
    parser.add_argument("items", nargs="?", type=int, default=500_000)
    parser.add_argument("--repeat", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(17)
    policy = load_policy()
    people, items, failures, behind = generate(args.customers, args.items, rng)
    with (
        tempfile.TemporaryDirectory() as folder,
        Ledger(f"sqlite:///{Path(folder) / 'l.db'}") as ledger,
    ):
        seed_previous_run(ledger, behind, items)
        started = time.perf_counter()
        header = ledger.save_delinquency_snapshot(
            biller=BILLER, run_id="bench", as_of=AS_OF, policy_name=policy.name,
            policy_digest=policy.digest, customers=people, items=items, failures=failures,
        )  # fmt: skip
        stored = time.perf_counter() - started
        result: dict[str, Any] = {}

        def floor() -> None:
            customers, rows = ledger.delinquency_snapshot_rows(header.id)
            pd.DataFrame.from_records(customers.rows, columns=list(customers.columns))
            pd.DataFrame.from_records(rows.rows, columns=list(rows.columns))

        def plan() -> None:
            snapshot = load_snapshot(ledger, policy, header)
            result["plan"] = make_plan(ledger, policy, snapshot, biller=BILLER)

        read, planned = best(args.repeat, floor, plan)
    made = result["plan"]
    moves = made.evaluation.involved["move"].value_counts().to_dict()
    print(f"delinquency plan: {args.customers:,} customers, {len(items):,} open items "
          f"({datetime.now(UTC):%Y-%m-%d}, best of {args.repeat})")  # fmt: skip
    print(f"  store the snapshot (once per run, not in the ratio): {stored:.2f} s")
    print(f"  floor, read the snapshot from the ledger:            {read:.2f} s")
    print(f"  billops plan (read, evaluate, operations, calls):    {planned:.2f} s")
    print(f"  ratio: {planned / read:.2f}x (goal <= 3x)")
    print(f"  customers by move: {moves}; calls to make: {len(made.to_send):,} "
          f"for {made.customers_changed:,} customers (£{made.amount_changed:,.2f})")  # fmt: skip


if __name__ == "__main__":
    main()
